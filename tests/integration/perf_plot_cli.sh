#!/usr/bin/env bash
# `weft perf --plot` draws the run beside a --baseline, `weft perf-plot` draws saved outputs;
# a baseline without result rows is refused before any rank starts.
set -euo pipefail
WEFT=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export NCCL_SOCKET_IFNAME==lo

"$WEFT" perf sendrecv --np 2 -b 1K -e 64K -f 4 -n 2 -w 1 > "$out/first.txt"
"$WEFT" perf sendrecv --np 2 -b 1K -e 64K -f 4 -n 2 -w 1 --plot "$out/run.svg" --baseline "$out/first.txt" > "$out/second.txt"
grep -q '# Avg bus bandwidth' "$out/second.txt" || fail "--plot changed the table"
[ "$(grep -c '<g class="series">' "$out/run.svg")" -eq 2 ] || fail "--plot: expected the run and the baseline"
grep -q '>first.txt</text>' "$out/run.svg" || fail "--plot: the baseline is not in the legend"
grep -q '>weft sendrecv, 2 ranks</text>' "$out/run.svg" || fail "--plot: the run is not in the legend"

"$WEFT" perf-plot "$out/first.txt" "$out/second.txt" -o "$out/saved.svg" --title "two runs"
[ "$(grep -c '<polyline' "$out/saved.svg")" -ge 2 ] || fail "perf-plot drew no lines"

echo "# nothing here" > "$out/empty.txt"
if "$WEFT" perf sendrecv --np 2 -b 8 -e 8 --plot "$out/no.svg" --baseline "$out/empty.txt" > "$out/no.txt" 2> "$out/no.err"; then
  fail "a baseline without rows was accepted"
fi
grep -q 'empty.txt: no result rows' "$out/no.err" || fail "no reason given: $(cat "$out/no.err")"
[ -s "$out/no.txt" ] && fail "the run started despite the bad baseline"
[ -e "$out/no.svg" ] && fail "a plot was written for a refused run"
echo PASS
