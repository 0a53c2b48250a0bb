#!/usr/bin/env python3
"""Edits the copied NCCL graph sources so that they build without the rest of NCCL: drops the
functions that need a live communicator (system detection, NIC merging, CPU affinity), the net
plugin versions before v11, and adds optional trace lines (ORACLE_TRACE, ORACLE_STEPS)."""
import re
import sys

out = sys.argv[1]


def edit(path, fn):
    with open(path) as f:
        text = f.read()
    text = fn(text)
    with open(path, 'w') as f:
        f.write(text)


def function_end(text, start):
    """Index just past the closing brace of the top-level function starting at `start`."""
    end = text.find('\n}\n', start)
    if end < 0:
        raise SystemExit('patch.py: no end for the function at %d' % start)
    return end + 3


def drop_range(text, first_sig, last_sig):
    a = text.find(first_sig)
    b = text.find(last_sig)
    if a < 0 or b < 0:
        raise SystemExit('patch.py: %r or %r not found (not NCCL 2.28?)' % (first_sig, last_sig))
    return text[:a] + text[function_end(text, b):]


def topo(text):
    text = drop_range(text, 'ncclResult_t ncclTopoMakeUniqueBusId(', 'ncclResult_t ncclTopoGetSystem(')
    return drop_range(text, 'ncclResult_t ncclTopoGetCpuAffinity(', 'ncclResult_t ncclTopoGetCpuAffinity(')


def net_header(text):
    return re.sub(r'#include "net/net_v(10|[6-9])\.h"\n', '', text)


def search(text):
    rec = '  NCCLCHECK(ncclTopoSearchRec(system, &tmpGraph, graph, &time));\n'
    if rec in text:
        text = text.replace(rec, '  { int t0 = time;\n' + rec +
                            '  if (getenv("ORACLE_TRACE")) printf("search id %d pattern %d crossNic %d bw %g/%g '
                            'type %d/%d same %d: budget %d left %d, best %d channels\\n", tmpGraph.id, '
                            'tmpGraph.pattern, tmpGraph.crossNic, tmpGraph.bwIntra, tmpGraph.bwInter, '
                            'tmpGraph.typeIntra, tmpGraph.typeInter, tmpGraph.sameChannels, t0, time, '
                            'graph->nChannels); }\n', 1)
    else:
        print('patch.py: search loop not found, ORACLE_TRACE unavailable')
    step = '  int ngpus = system->nodes[GPU].count;\n  if (step == ngpus) {\n'
    if step in text:
        text = text.replace(step, '  int ngpus = system->nodes[GPU].count;\n'
                            '  if (getenv("ORACLE_STEPS")) printf("G c%d s%d g%d t%d\\n", graph->nChannels, step, '
                            'gpu ? (int)(gpu - system->nodes[GPU].nodes) : -1, *time);\n'
                            '  if (step == ngpus) {\n', 1)
    else:
        print('patch.py: ncclTopoSearchRecGpu not found, ORACLE_STEPS unavailable')
    return text


edit(out + '/src/topo.cc', topo)
edit(out + '/inc/plugin/nccl_net.h', net_header)
edit(out + '/src/search.cc', search)
