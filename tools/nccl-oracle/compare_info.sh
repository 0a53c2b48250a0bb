#!/usr/bin/env bash
# Runs nccl-oracle with ORACLE_INFO=1 and `weft search` with NCCL_DEBUG=INFO
# NCCL_DEBUG_SUBSYS=GRAPH,NET on topology files and compares node 0's INFO lines: the system
# block, path lines, GPU Direct RDMA lines and the ring and tree graph lines. weft prints more
# after them (the other nodes, the connect phase), so its first lines, as many as NCCL's, must
# equal NCCL's. NCCL's "set by environment" lines (its ENV subsystem) are left out. One line per
# file: SAME, DIFF (with the first differing lines), ORACLEFAIL, WEFTFAIL or BOTHFAIL, then a
# count per result.
#   usage: compare_info.sh ORACLE WEFT OUT_DIR NODES [NAME=VALUE ...] [-- FILE...]
#   e.g.   compare_info.sh build/nccl-oracle/nccl-oracle build/tools/weft/weft /tmp/info 2 NCCL_P2P_LEVEL=PHB
# Without files it takes every *.xml under $WEFT_CORPUS_DIR/topologies (default ../shared/corpus).
set -uo pipefail
ORACLE=${1:?usage: compare_info.sh ORACLE WEFT OUT_DIR NODES [NAME=VALUE ...] [-- FILE...]}
WEFT=${2:?}; OUT=${3:?}; NODES=${4:?}; shift 4
. "$(dirname "$0")/args.sh"
oracle_args "$@"
mkdir -p "$OUT"
for f in "${FILES[@]}"; do
  k=$(basename "$(dirname "$f")")_$(basename "$f")
  # (NCCL's WARN lines go to stderr, which could cut an INFO line in two: kept apart.)
  env "${ENVS[@]}" ORACLE_INFO=1 timeout 600 "$ORACLE" "$f" "$NODES" - ring,tree \
    > "$OUT/$k.nccl.log" 2> "$OUT/$k.nccl.err"; orc=$?
  env "${ENVS[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=GRAPH,NET timeout 600 "$WEFT" search "$f" --nodes "$NODES" \
    > "$OUT/$k.weft.log" 2>&1; wrc=$?
  grep '^\[0\] NCCL INFO' "$OUT/$k.nccl.log" | grep -v -E 'Loading|set by environment to' > "$OUT/$k.nccl.info"
  grep '^\[0\] NCCL INFO' "$OUT/$k.weft.log" | head -n "$(wc -l < "$OUT/$k.nccl.info")" > "$OUT/$k.weft.info"
  st=$(compare_result $orc $wrc "$OUT/$k.nccl.info" "$OUT/$k.weft.info")
  detail="($(wc -l < "$OUT/$k.nccl.info") lines)"
  if [ "$st" = DIFF ]; then
    diff "$OUT/$k.nccl.info" "$OUT/$k.weft.info" > "$OUT/$k.diff"
    detail=$(head -4 "$OUT/$k.diff" | cut -c1-200 | tr '\n' ' ')
  fi
  echo "$st $k $detail"
done | tee "$OUT/results.txt"
echo "--- $(awk '{print $1}' "$OUT/results.txt" | sort | uniq -c | tr '\n' ' ')"
