#!/usr/bin/env bash
# How far NCCL's rings are from the machine's bound, over every corpus topology weft (and NCCL)
# can load, at 1, 2, 4 and 8 nodes: `weft search --quiet --format json`'s "bound" member as a
# markdown table (topology, nodes, NCCL's rings, the allreduce bound, the ratio, the allgather
# bound where it differs, and what binds). Figures, not timings: the machine's load does not
# change them.
#
#   bench/bound_table.sh [WEFT] [CORPUS]
#   NODES="1 2" bench/bound_table.sh build/tools/weft/weft ../shared/corpus
set -euo pipefail

weft=${1:-build/tools/weft/weft}
corpus=${2:-${WEFT_CORPUS_DIR:-../shared/corpus}}
nodes_list=${NODES:-1 2 4 8}
python=/usr/bin/python3
[ -x "$python" ] || python=python3

printf '| topology | nodes | NCCL rings | bound (allreduce) | NCCL / bound | allgather bound | what binds (allreduce) |\n'
printf '|---|---:|---|---:|---:|---:|---|\n'
find "$corpus/topologies" -name '*.xml' | sort | while IFS= read -r topo; do
  "$weft" search "$topo" -q > /dev/null 2>&1 || continue  # not a system file NCCL can build
  for nodes in $nodes_list; do
    "$weft" search "$topo" --nodes "$nodes" -q --format json |
      "$python" -c '
import json, sys
rel, nodes = sys.argv[1], sys.argv[2]
b = json.load(sys.stdin)["bound"]
if "allreduce" not in b:
    print(f"| {rel} | {nodes} | - | - | - | - | a single rank moves nothing |")
    sys.exit(0)
r, ar, ag = b["rings"], b["allreduce"], b["allgather"]
rings = "%d x %.1f = %.1f" % (r["channels"], r["channelBw"], r["busBw"])
agText = "same" if abs(ag["busBw"] - ar["busBw"]) < 0.05 else "%.1f" % ag["busBw"]
limit = ar["limit"].removeprefix("the links into ")
print("| %s | %s | %s | %.1f | %.0f%% | %s | %s |" % (rel, nodes, rings, ar["busBw"], 100 * ar["ratio"], agText, limit))
' "${topo#"$corpus"/topologies/}" "$nodes"
  done
done
