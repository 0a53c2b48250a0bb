#!/usr/bin/env bash
# Checks nccl-oracle's connect phase (ORACLE_CONNECT=1) against the reference NCCL 2.28.9 logs:
# for every reference-nccl-2.28.9/*.nN.log, the oracle's Tree/Channel/Ring/Trees/NVLS/CollNetDirect
# lines on the topology the log names, at N nodes, must equal the log's lines of those kinds.
#   usage: check_connect_refs.sh ORACLE [OUT_DIR]
set -uo pipefail
ORACLE=${1:?usage: check_connect_refs.sh ORACLE [OUT_DIR]}; OUT=${2:-/tmp/nccl-connect-refs}
CORPUS=${WEFT_CORPUS_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/../shared/corpus}
RE='^\[[0-9]+\] NCCL INFO (Tree [0-9]+ :|Channel [0-9]+/[0-9]+ :|Ring [0-9]+ :|Trees( |$)|NVLS |CollNetDirect )'
mkdir -p "$OUT"; bad=0
for log in "$CORPUS"/reference-nccl-2.28.9/*.n[0-9]*.log; do
  b=$(basename "$log" .log); n=${b##*.n}
  topo=$(sed -n '1s/.* built from //p' "$log")
  grep -E "$RE" "$log" > "$OUT/$b.ref"
  ORACLE_CONNECT=1 "$ORACLE" "$CORPUS/$topo" "$n" - > "$OUT/$b.log" 2>&1 || { echo "ORACLEFAIL $b"; bad=1; continue; }
  grep -E "$RE" "$OUT/$b.log" > "$OUT/$b.oracle"
  if cmp -s "$OUT/$b.ref" "$OUT/$b.oracle"; then echo "SAME $b ($(wc -l < "$OUT/$b.ref") lines)"
  else echo "DIFF $b"; diff "$OUT/$b.ref" "$OUT/$b.oracle" | head -4; bad=1; fi
done
exit $bad
