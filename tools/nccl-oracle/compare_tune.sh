#!/usr/bin/env bash
# Runs nccl-oracle's tuning phase (ORACLE_CONNECT=1 ORACLE_TUNE=1: NCCL's own tuning.cc on rank 0
# after NCCL's search and connect) and `weft tune --format log` on topology files at N identical
# nodes, and compares their lines (# comm / # graph inputs, INFO lines of the tuning phase, TUNE,
# TUNECH, COST for 5 collectives x 2^3..2^30 bytes). One line per file: SAME, DIFF (with the first
# differing line of each), ORACLEFAIL, WEFTFAIL or BOTHFAIL, then a count per result. Both outputs
# and their diff stay in OUT_DIR.
#   usage: compare_tune.sh ORACLE WEFT OUT_DIR NODES [NAME=VALUE ...] [-- FILE...]
#   e.g.   compare_tune.sh build/nccl-oracle/nccl-oracle build/tools/weft/weft /tmp/ct 4 NCCL_PROTO=^LL128
# Without files it takes every *.xml under $WEFT_CORPUS_DIR/topologies (default ../shared/corpus).
# Blank lines are left out on both sides (NCCL's logger adds one after a message ending in a newline,
# the Func/Proto/Algo matrix; weft's drops it).
set -uo pipefail
. "$(dirname "$0")/args.sh"
USAGE="usage: compare_tune.sh ORACLE WEFT OUT_DIR NODES [NAME=VALUE ...] [-- FILE...]"
ORACLE=${1:?$USAGE}; WEFT=${2:?$USAGE}; OUT=${3:?$USAGE}; NODES=${4:?$USAGE}; shift 4
oracle_args "$@"
mkdir -p "$OUT" && : > "$OUT/results.txt"
for f in "${FILES[@]}"; do
  k=$(basename "$(dirname "$f")")_$(basename "$f" .xml)
  env "${ENVS[@]}" ORACLE_CONNECT=1 ORACLE_TUNE=1 timeout 900 "$ORACLE" "$f" "$NODES" - ring,tree,nvls \
    > "$OUT/$k.nccl.log" 2> "$OUT/$k.nccl.err"; orc=$?
  env "${ENVS[@]}" timeout 900 "$WEFT" tune "$f" --nodes "$NODES" --format log > "$OUT/$k.weft.log" 2> "$OUT/$k.weft.err"; wrc=$?
  grep -v -e '^$' -e '^# nccl-oracle tuning:' "$OUT/$k.nccl.log" > "$OUT/$k.nccl.lines"
  grep -v -e '^$' "$OUT/$k.weft.log" > "$OUT/$k.weft.lines"
  st=$(compare_result $orc $wrc "$OUT/$k.nccl.lines" "$OUT/$k.weft.lines")
  echo "$st $k ($(wc -l < "$OUT/$k.nccl.lines") lines)" | tee -a "$OUT/results.txt"
  [ "$st" = DIFF ] && report_diff "$OUT/$k.weft.lines" "$OUT/$k.nccl.lines" "$OUT/$k.diff"
done
echo "--- $(awk '{print $1}' "$OUT/results.txt" | sort | uniq -c | tr '\n' ' ')"
