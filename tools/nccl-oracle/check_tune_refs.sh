#!/usr/bin/env bash
# Checks nccl-oracle's tuning phase (ORACLE_TUNE=1) against corpus/reference-nccl-2.28.9-tuning: for
# every <topology>.nN.log, the oracle run on the topology, node count and settings its first line
# names must print the log's other lines exactly (# comm / # graph inputs, INFO lines, TUNE, TUNECH,
# COST). Run it after every build: until it passes, the oracle's other outputs mean nothing.
#   usage: check_tune_refs.sh ORACLE [OUT_DIR]
set -uo pipefail
ORACLE=${1:?usage: check_tune_refs.sh ORACLE [OUT_DIR]}; OUT=${2:-/tmp/nccl-tune-refs}
CORPUS=${WEFT_CORPUS_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/../shared/corpus}
mkdir -p "$OUT"; bad=0
for log in "$CORPUS"/reference-nccl-2.28.9-tuning/*.n[0-9]*.log; do
  b=$(basename "$log" .log)
  head1=$(head -1 "$log")
  n=$(sed -n '1s/.*, \([0-9]*\) identical node(s) built from .*/\1/p' "$log")
  topo=$(sed -n '1s/.* built from \(.*\), env: .*/\1/p' "$log")
  envs=$(sed -n '1s/.*, env: //p' "$log"); [ "$envs" = "-" ] && envs=
  tail -n +2 "$log" > "$OUT/$b.ref"
  # shellcheck disable=SC2086  # the log's settings are NAME=VALUE words
  env $envs ORACLE_CONNECT=1 ORACLE_TUNE=1 "$ORACLE" "$CORPUS/$topo" "$n" - ring,tree,nvls > "$OUT/$b.oracle" 2> "$OUT/$b.err" ||
    { echo "ORACLEFAIL $b"; bad=1; continue; }
  if cmp -s "$OUT/$b.ref" "$OUT/$b.oracle"; then echo "SAME $b ($(wc -l < "$OUT/$b.ref") lines)"
  else echo "DIFF $b: $(diff "$OUT/$b.ref" "$OUT/$b.oracle" | grep -c '^<') lines differ"; diff "$OUT/$b.ref" "$OUT/$b.oracle" | head -4; bad=1; fi
  : "$head1"
done
exit $bad
