#!/usr/bin/env bash
# Runs nccl-oracle and `weft search` on topology files and compares their graph dumps byte for
# byte. One line per file: SAME, DIFF, ORACLEFAIL, WEFTFAIL or BOTHFAIL (files NCCL cannot build,
# such as graph dumps or RCCL's version 2), then a count per result.
#   usage: compare.sh ORACLE WEFT OUT_DIR NODES PATTERNS [NAME=VALUE ...] [-- FILE...]
#   e.g.   compare.sh build/nccl-oracle/nccl-oracle build/tools/weft/weft /tmp/cmp 2 ring,tree,collnet,nvls NCCL_CROSS_NIC=2
# Without files it takes every *.xml under $WEFT_CORPUS_DIR/topologies (default ../shared/corpus).
set -uo pipefail
ORACLE=${1:?usage: compare.sh ORACLE WEFT OUT_DIR NODES PATTERNS [NAME=VALUE ...] [-- FILE...]}
WEFT=${2:?}; OUT=${3:?}; NODES=${4:?}; PATTERNS=${5:?}; shift 5
. "$(dirname "$0")/args.sh"
oracle_args "$@"
mkdir -p "$OUT"
for f in "${FILES[@]}"; do
  k=$(basename "$(dirname "$f")")_$(basename "$f")
  env "${ENVS[@]}" timeout 600 "$ORACLE" "$f" "$NODES" "$OUT/$k.nccl.xml" "$PATTERNS" > "$OUT/$k.nccl.log" 2>&1; orc=$?
  env "${ENVS[@]}" timeout 600 "$WEFT" search "$f" --nodes "$NODES" --patterns "$PATTERNS" \
    --graph-out "$OUT/$k.weft.xml" --quiet > "$OUT/$k.weft.log" 2>&1; wrc=$?
  st=$(compare_result $orc $wrc "$OUT/$k.nccl.xml" "$OUT/$k.weft.xml")
  echo "$st $k"
done | tee "$OUT/results.txt"
echo "--- $(awk '{print $1}' "$OUT/results.txt" | sort | uniq -c | tr '\n' ' ')"
