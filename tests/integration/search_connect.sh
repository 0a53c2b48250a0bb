#!/usr/bin/env bash
# `weft search` prints the connect phase: every rank's lines by default, one rank's with --rank,
# JSON with every rank's channels, a two-line summary with --quiet, the machine's bound beside
# NCCL's rings in all three, and a usage error for a rank outside the communicator.
set -euo pipefail
WEFT=$1
TOPO=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$WEFT" search "$TOPO" --nodes 2 > "$out/all.txt"
for r in 0 7 8 15; do grep -q "^\[$r\] NCCL INFO Trees \[0\]" "$out/all.txt" || fail "no Trees line for rank $r"; done
[ "$(grep -c 'NCCL INFO Channel ' "$out/all.txt")" -gt 0 ] || fail "no Channel lines"
grep 'NCCL INFO Channel ' "$out/all.txt" | grep -qv '^\[0\]' && fail "Channel lines on a rank other than 0"

"$WEFT" search "$TOPO" --nodes 2 --rank 9 > "$out/one.txt"
grep -q '^\[9\] NCCL INFO Ring 00 :' "$out/one.txt" || fail "--rank 9 lacks rank 9's Ring lines"
grep -E 'NCCL INFO (Ring|Trees|Tree |Channel )' "$out/one.txt" | grep -qv '^\[9\]' && fail "--rank 9 prints other ranks"

"$WEFT" search "$TOPO" --nodes 2 --format json > "$out/all.json"
if command -v python3 >/dev/null; then
  python3 - "$out/all.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ranks, n = d["ranks"], d["connect"]["nChannels"]
assert len(ranks) == d["nRanks"] == 16, len(ranks)
for r in ranks:
    assert len(r["ring"]) == n and len(r["tree"]) == n, r["rank"]
# the machine's bound, beside NCCL's rings (which are one schedule: never above it)
b = d["bound"]
assert b["ranks"] == 16 and 0 < b["rings"]["busBw"] <= b["allreduce"]["busBw"], b
assert b["allgather"]["limit"].startswith("the links into "), b
# every channel's ring visits all ranks once
for c in range(n):
    nxt = {r["rank"]: r["ring"][c][1] for r in ranks}
    seen, x = set(), 0
    for _ in ranks:
        seen.add(x); x = nxt[x]
    assert x == 0 and len(seen) == 16, c
PY
else
  grep -q '"ranks":\[{"rank":0,' "$out/all.json" || fail "JSON lacks the ranks array"
fi

grep -q '^# bound: allreduce (reductions on GPUs): rings [0-9]* x .* GB/s bound ([0-9]*%): limited by the links into ' "$out/all.txt" ||
  fail "no bound line after the ranks' lines"

"$WEFT" search "$TOPO" --nodes 100 --quiet > "$out/quiet.txt"
[ "$(grep -vc '^# bound: ' "$out/quiet.txt")" -eq 2 ] || fail "--quiet printed $(wc -l < "$out/quiet.txt") lines"
[ "$(grep -c '^# bound: ' "$out/quiet.txt")" -eq 2 ] || fail "--quiet: no allreduce and allgather bound lines"
grep -q '^ranks 800 (100 x 8 GPUs), nodes 100, channels ' "$out/quiet.txt" || fail "unexpected summary: $(head -1 "$out/quiet.txt")"

if "$WEFT" search "$TOPO" --nodes 2 --rank 16 > /dev/null 2> "$out/err.txt"; then fail "--rank 16 accepted"; fi
grep -q 'ranks 0..15' "$out/err.txt" || fail "unclear --rank error: $(cat "$out/err.txt")"
echo "ok"
