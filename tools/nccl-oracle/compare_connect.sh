#!/usr/bin/env bash
# Runs nccl-oracle's connect phase (ORACLE_CONNECT=1: NCCL's own connect.cc/trees.cc/rings.cc on
# every rank of N identical nodes) and `weft search` on topology files, and compares their connect
# lines (Tree, Channel, Ring, Trees, NVLS, CollNetDirect) rank by rank. One line per file: SAME,
# DIFF (with the first differing line of each), ORACLEFAIL, WEFTFAIL or BOTHFAIL, then a count per
# result. Both logs and the extracted lines stay in OUT_DIR.
#   usage: compare_connect.sh ORACLE WEFT OUT_DIR NODES [NAME=VALUE ...] [-- FILE...]
#   e.g.   compare_connect.sh build/nccl-oracle/nccl-oracle build/tools/weft/weft /tmp/cc 2 NCCL_CROSS_NIC=2
# Without files it takes every *.xml under $WEFT_CORPUS_DIR/topologies (default ../shared/corpus).
# PATTERNS=ring,tree (the default) sets the graphs both search; add nvls / collnet to compare those lines.
set -uo pipefail
ORACLE=${1:?usage: compare_connect.sh ORACLE WEFT OUT_DIR NODES [NAME=VALUE ...] [-- FILE...]}
WEFT=${2:?}; OUT=${3:?}; NODES=${4:?}; shift 4
PATTERNS=${PATTERNS:-ring,tree}
. "$(dirname "$0")/args.sh"
oracle_args "$@"
RE='^\[[0-9]+\] NCCL INFO (Tree [0-9]+ :|Channel [0-9]+/[0-9]+ :|Ring [0-9]+ :|Trees( |$)|NVLS |CollNetDirect )'
mkdir -p "$OUT"
: > "$OUT/results.txt"
for f in "${FILES[@]}"; do
  k=$(basename "$(dirname "$f")")_$(basename "$f")
  env "${ENVS[@]}" ORACLE_CONNECT=1 timeout 900 "$ORACLE" "$f" "$NODES" - "$PATTERNS" > "$OUT/$k.nccl.log" 2>&1; orc=$?
  env "${ENVS[@]}" timeout 900 "$WEFT" search "$f" --nodes "$NODES" --patterns "$PATTERNS" > "$OUT/$k.weft.log" 2>&1; wrc=$?
  grep -E "$RE" "$OUT/$k.nccl.log" > "$OUT/$k.nccl.lines"
  grep -E "$RE" "$OUT/$k.weft.log" > "$OUT/$k.weft.lines"
  # Same order in both: by rank, then each rank's lines in the order it printed them.
  for s in nccl weft; do
    awk '{r=substr($1,2)+0; printf "%d\t%08d\t%s\n", r, NR, $0}' "$OUT/$k.$s.lines" | sort -t$'\t' -k1,1n -k2,2n | cut -f3- > "$OUT/$k.$s.sorted"
  done
  st=$(compare_result $orc $wrc "$OUT/$k.nccl.sorted" "$OUT/$k.weft.sorted")
  echo "$st $k ($(wc -l < "$OUT/$k.nccl.sorted") lines)" | tee -a "$OUT/results.txt"
  [ $st = DIFF ] && report_diff "$OUT/$k.weft.sorted" "$OUT/$k.nccl.sorted" "$OUT/$k.diff"
done
echo "--- $(awk '{print $1}' "$OUT/results.txt" | sort | uniq -c | tr '\n' ' ')"
