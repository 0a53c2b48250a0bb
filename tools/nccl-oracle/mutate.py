#!/usr/bin/env python3
# Writes changed copies of the corpus topologies (NIC speeds, PCI widths and generations, NVLink
# counts, CPU vendor and model, a NIC port or a GPU fewer, GPUDirect, CollNet; a NIC or GPU moved
# elsewhere in the PCI tree, NVLinks dropped, NICs of mixed speeds, NICs on the CPU, NVLinks 12
# times wider, Arm and POWER CPUs, Zhaoxin and other Intel models, C2C links from the GPUs to the
# CPU) for compare.sh.
#   usage: [MUTATE_COMBO=K [MUTATE_COPIES=N]] mutate.py OUT_DIR [SEED]
import glob
import os
import random
import re
import sys
import xml.etree.ElementTree as ET
if len(sys.argv) < 2 or sys.argv[1].startswith('-'):
    sys.exit('usage: mutate.py OUT_DIR [SEED]   (writes changed copies of the corpus topologies to OUT_DIR)')
out = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
random.seed(seed)
corpus = os.environ.get('WEFT_CORPUS_DIR', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../shared/corpus'))
files = sorted(glob.glob(os.path.join(corpus, 'topologies/**/*.xml'), recursive=True))
def ok(t):
    return 'version="1"' in t[:300] and re.search(r'<gpu[^>]*rank=', t)
muts = {}
def m_netspeed(t, f):
    return re.sub(r'(<net[^>]*speed=")(\d+)(")', lambda m: m.group(1)+str(max(1000,int(int(m.group(2))*f)))+m.group(3), t)
def m_width(t, w):
    # change some GPU pci link widths
    def rep(m):
        return m.group(1)+str(w)+m.group(3) if random.random() < 0.5 else m.group(0)
    return re.sub(r'(<pci[^>]*link_width=")(\d+)(")', rep, t)
def m_speed(t, s):
    def rep(m):
        return m.group(1)+s+m.group(3) if random.random() < 0.5 else m.group(0)
    return re.sub(r'(<pci[^>]*link_speed=")([^"]*)(")', rep, t)
def m_nvcount(t):
    return re.sub(r'(<nvlink[^>]*count=")(\d+)(")', lambda m: m.group(1)+str(max(1,int(m.group(2))+random.choice([-1,0,1,2])))+m.group(3), t)
def m_vendor(t, v, model):
    t = re.sub(r'vendor="(GenuineIntel|AuthenticAMD|[^"0][^"]*)"(?=[^>]*>)', lambda m: 'vendor="%s"'%v if m.group(1) in ('GenuineIntel','AuthenticAMD') else m.group(0), t)
    t = re.sub(r'modelid="\d+"', 'modelid="%d"'%model, t)
    return t
def m_dropnet(t):
    nets = re.findall(r'<net [^>]*/>', t)
    for n in nets:
        if random.random() < 0.4: t = t.replace(n, '', 1)
    return t
def m_gdr(t):
    return re.sub(r'(<net[^>]*gdr=")(\d)(")', lambda m: m.group(1)+random.choice('01')+m.group(3), t)
def m_coll(t):
    # every NIC port able to do CollNet (SHARP): exercises the CollNet searches
    t = re.sub(r'(<net [^>]*?) coll="\d"', r'\1', t)
    return re.sub(r'<net ', '<net coll="1" ', t)
def m_dropgpu(t):
    gpus = re.findall(r'<gpu [^>]*rank="(\d+)"', t)
    if len(gpus) < 3: return t
    drop = random.choice(gpus)
    # remove the <gpu ...>...</gpu> or self-closing; renumber ranks
    t2 = re.sub(r'<gpu [^>]*rank="%s"[^>]*(/>|>.*?</gpu>)' % drop, '', t, count=1, flags=re.S)
    ranks = sorted(int(x) for x in re.findall(r'<gpu [^>]*rank="(\d+)"', t2))
    mp = {r:i for i,r in enumerate(ranks)}
    return re.sub(r'(<gpu [^>]*rank=")(\d+)(")', lambda m: m.group(1)+str(mp[int(m.group(2))])+m.group(3), t2)
# Structural kinds: the same parts in other places of the PCI tree (read and written with
# ElementTree, which keeps attribute order; NCCL and weft do not mind the new layout).
def _tree(t):
    return ET.fromstring(t)
def _text(root):
    return ET.tostring(root, encoding='unicode') + '\n'
def _parents(root):
    return {c: p for p in root.iter() for c in p}
def _holds(e, tag):
    return any(x.tag == tag for x in e.iter())
def _move(t, what):
    # Moves one PCI subtree that holds a `what` (and no GPU when moving a NIC) under another PCI
    # switch or CPU; keeps bus ids, so NVLink targets stay valid.
    root = _tree(t)
    par = _parents(root)
    movable = [e for e in root.iter('pci') if _holds(e, what) and not (what == 'nic' and _holds(e, 'gpu'))
               and e.find('pci') is None]
    if not movable: return t
    m = random.choice(movable)
    inside = set(m.iter())
    targets = [e for e in root.iter() if e not in inside and e is not par[m] and
               (e.tag == 'cpu' or (e.tag == 'pci' and e.find('pci') is not None))]
    if not targets: return t
    par[m].remove(m)
    random.choice(targets).append(m)
    return _text(root)
def m_dropnvlink(t):
    # Some NVLinks gone: a GPU-GPU link from both GPUs (NCCL needs them symmetric), a link to an
    # NVSwitch from its GPU.
    root = _tree(t)
    par = _parents(root)
    gpuAt = {par[g].get('busid', '').lower(): g for g in root.iter('gpu') if g in par}
    links = [(g, l) for g in root.iter('gpu') for l in list(g) if l.tag == 'nvlink']
    if not links: return t
    mine = {id(g): par[g].get('busid', '').lower() for g in root.iter('gpu') if g in par}
    for g, l in links:
        if random.random() >= 0.3 or l not in list(g): continue
        g.remove(l)
        peer = gpuAt.get(l.get('target', '').lower())
        if peer is None: continue
        for back in [x for x in peer if x.tag == 'nvlink' and x.get('target', '').lower() == mine[id(g)]]:
            peer.remove(back)
    return _text(root)
def m_cpunic(t):
    # NICs taken out of their PCI device and put on the CPU above them: NCCL links such a NIC to
    # the CPU at 5,000 GB/s, wider than the search keeps as small integers.
    root = _tree(t)
    par = _parents(root)
    cards = [e for e in root.iter('pci') if e.find('nic') is not None and not _holds(e, 'gpu') and e.find('pci') is None]
    changed = False
    for card in cards:
        if random.random() >= 0.5: continue
        cpu = par[card]
        while cpu.tag != 'cpu' and cpu in par: cpu = par[cpu]
        if cpu.tag != 'cpu': continue
        par[card].remove(card)
        for nic in card.findall('nic'): cpu.append(nic)
        changed = True
    return _text(root) if changed else t
def m_nvlwide(t):
    # NVLink bundles 12 times wider: NVSwitch links beyond 4,000 GB/s on NVSwitch machines
    return re.sub(r'(<nvlink[^>]*count=")(\d+)(")', lambda m: m.group(1)+str(int(m.group(2))*12)+m.group(3), t)
def m_arch(t, arch):
    # another CPU architecture (arm64: Grace and other Arm servers; ppc64: POWER): NCCL reads no
    # vendor or model there, and its CPU-to-CPU bandwidth and P2P rules differ
    return re.sub(r'arch="x86_64"', 'arch="%s"' % arch, t)
def m_family(t, vendor, family, model):
    t = m_vendor(t, vendor, model)
    return re.sub(r'familyid="\d+"', 'familyid="%d"' % family, t)
def m_c2c(t):
    # a C2C link from every GPU to its CPU (Grace Hopper / Blackwell style; NVML's figures per
    # link times the link count), keeping the GPU's PCI link
    def rep(m):
        body = m.group(0)
        if '<c2c' in body: return body
        c2c = '<c2c bw="%d" count="%d"/>' % (random.choice([43125, 45000, 37500]), random.choice([4, 8, 10]))
        if body.endswith('/>'): return body[:-2] + '>' + c2c + '</gpu>'
        return body.replace('</gpu>', c2c + '</gpu>')
    return re.sub(r'<gpu [^>]*(/>|>.*?</gpu>)', rep, t, flags=re.S)
def m_mixspeed(t):
    # NICs of different speeds in one box
    return re.sub(r'(<net[^>]*speed=")(\d+)(")', lambda m: m.group(1)+random.choice(['12500', '25000', '50000', '100000', '200000', '400000'])+m.group(3), t)
# Tuning kinds: the GPU generation (the model's per-architecture limits, NVLS efficiency, LL128
# and PAT rules), GPUs of two generations in one box (LL128 off), and boxes cut down to one or two
# GPUs (one rank per node: PAT; two: no NVLS).
def m_sm(t, sm):
    return re.sub(r'(<gpu [^>]*sm=")(\d+)(")', lambda m: m.group(1)+str(sm)+m.group(3), t)
def m_mixsm(t):
    gpus = re.findall(r'<gpu [^>]*sm="\d+"', t)
    if len(gpus) < 2: return t
    g = random.choice(gpus)
    return t.replace(g, re.sub(r'sm="(\d+)"', lambda m: 'sm="%d"' % (80 if int(m.group(1)) >= 90 else 90), g), 1)
def m_keepgpus(t, n):
    gpus = sorted(int(x) for x in re.findall(r'<gpu [^>]*rank="(\d+)"', t))
    if len(gpus) <= n: return t
    for r in gpus[n:]:
        t = re.sub(r'<gpu [^>]*rank="%d"[^>]*(/>|>.*?</gpu>)' % r, '', t, count=1, flags=re.S)
    return t
variants = [
  ('nic4x', lambda t: m_netspeed(t, 4)), ('nic025', lambda t: m_netspeed(t, 0.25)), ('nic05', lambda t: m_netspeed(t, 0.5)),
  ('w8', lambda t: m_width(t, 8)), ('w4', lambda t: m_width(t, 4)), ('gen3', lambda t: m_speed(t, '8.0 GT/s PCIe')),
  ('gen5', lambda t: m_speed(t, '32.0 GT/s PCIe')), ('nvl', m_nvcount), ('amd', lambda t: m_vendor(t, 'AuthenticAMD', 49)),
  ('intel85', lambda t: m_vendor(t, 'GenuineIntel', 85)), ('intel143', lambda t: m_vendor(t, 'GenuineIntel', 143)),
  ('dropnet', m_dropnet), ('gdr', m_gdr), ('dropgpu', m_dropgpu), ('coll', m_coll),
  ('movenic', lambda t: _move(t, 'nic')), ('movegpu', lambda t: _move(t, 'gpu')), ('dropnvl', m_dropnvlink),
  ('mixspeed', m_mixspeed), ('cpunic', m_cpunic), ('nvlwide', m_nvlwide),
  ('arm', lambda t: m_arch(t, 'arm64')), ('power', lambda t: m_arch(t, 'ppc64')),
  ('zhaoxin', lambda t: m_family(t, 'CentaurHauls', 7, 0x5B)), ('intel207', lambda t: m_family(t, 'GenuineIntel', 6, 207)),
  ('intel79', lambda t: m_family(t, 'GenuineIntel', 6, 79)), ('c2c', m_c2c),
  ('gh', lambda t: m_c2c(m_arch(t, 'arm64'))),
  ('sm70', lambda t: m_sm(t, 70)), ('sm80', lambda t: m_sm(t, 80)), ('sm90', lambda t: m_sm(t, 90)),
  ('sm100', lambda t: m_sm(t, 100)), ('sm60', lambda t: m_sm(t, 60)), ('mixsm', m_mixsm),
  ('onegpu', lambda t: m_keepgpus(t, 1)), ('twogpu', lambda t: m_keepgpus(t, 2)),
]
# MUTATE_COMBO=K (K >= 2): instead of one kind per copy, MUTATE_COPIES (default 8) copies per
# file, each changed by K kinds drawn at random and applied in turn (kinds that interact: NICs on
# the CPU with mixed speeds, a GPU fewer on an AMD machine, ...).
combo = int(os.environ.get('MUTATE_COMBO', '1'))
copies = int(os.environ.get('MUTATE_COPIES', '8'))
os.makedirs(out, exist_ok=True)
for f in files:
    t = open(f).read()
    if not ok(t): continue
    base = os.path.relpath(f, os.path.join(corpus, 'topologies')).replace('/', '_')[:-4]
    if combo >= 2:
        for i in range(copies):
            picked = random.sample(variants, combo)
            v = t
            for _, fn in picked: v = fn(v)
            if v != t:
                name = '+'.join(n for n, _ in picked)
                open(os.path.join(out, '%s.%s.s%d.%d.xml' % (base, name, seed, i)), 'w').write(v)
        continue
    for name, fn in variants:
        v = fn(t)
        if v != t:
            open(os.path.join(out, '%s.%s.s%d.xml' % (base, name, seed)), 'w').write(v)
