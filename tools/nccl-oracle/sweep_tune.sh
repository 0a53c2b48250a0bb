#!/usr/bin/env bash
# Sweeps compare_tune.sh over node counts and settings: every topology file given (default: every
# corpus topology and examples/topologies) x NODES x SETTINGS. Prints one line per case as
# compare_tune.sh does, and at the end a table: nodes, setting, counts of SAME/DIFF/...; keeps each
# case's outputs in OUT_DIR/n<N>/<setting number>/. A setting is one or more NAME=VALUE joined by
# '|' ("-" for none); SETTINGS_FILE (one setting a line) replaces the default list below.
#   usage: sweep_tune.sh ORACLE WEFT OUT_DIR [-- FILE...]
#   env:   NODES="1 2 4 8 16" (default), SETTINGS_FILE=FILE
set -uo pipefail
ORACLE=${1:?usage: sweep_tune.sh ORACLE WEFT OUT_DIR [-- FILE...]}; WEFT=${2:?}; OUT=${3:?}; shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
[ "${1:-}" = "--" ] && shift
if [ $# -gt 0 ]; then FILES=("$@"); else
  corpus=${WEFT_CORPUS_DIR:-$HERE/../../../shared/corpus}
  mapfile -t FILES < <(find "$corpus/topologies" "$HERE/../../examples/topologies" -name '*.xml' | sort)
fi
NODES=${NODES:-"1 2 4 8 16"}
if [ -n "${SETTINGS_FILE:-}" ]; then mapfile -t SETTINGS < "$SETTINGS_FILE"; else
SETTINGS=(
  "-"
  "NCCL_ALGO=Ring" "NCCL_ALGO=Tree" "NCCL_ALGO=^NVLS" "NCCL_ALGO=allreduce:tree,ring;allgather:ring"
  "NCCL_ALGO=NVLS,NVLSTree,Ring" "NCCL_ALGO=PAT,Ring" "NCCL_ALGO=^Ring;broadcast:ring;reduce:ring"
  "NCCL_PROTO=Simple" "NCCL_PROTO=^LL128" "NCCL_PROTO=LL,Simple" "NCCL_PROTO=LL128,Simple"
  "NCCL_PROTO=LL128;allreduce:^LL128"
  "NCCL_NTHREADS=256" "NCCL_NTHREADS=100" "NCCL_NTHREADS=1024" "NCCL_NTHREADS=64"
  "NCCL_LL128_NTHREADS=512" "NCCL_LL128_NTHREADS=128"
  "NCCL_THREAD_THRESHOLDS=16 16 128 256 16 128" "NCCL_THREAD_THRESHOLDS=4 4"
  "NCCL_NVLS_ENABLE=0" "NCCL_NVLS_NCHANNELS=4"
  "NCCL_MIN_NCHANNELS=32" "NCCL_MAX_NCHANNELS=4" "NCCL_MAX_CTAS=8"
  "NCCL_NET_GDR_LEVEL=LOC" "NCCL_NET_GDR_LEVEL=PHB"
  "NCCL_CROSS_NIC=0" "NCCL_CROSS_NIC=1"
  "NCCL_PAT_ENABLE=0" "NCCL_PAT_ENABLE=1"
  "NCCL_NET_OVERHEAD=3000" "NCCL_LL128_C2C=0" "NCCL_NCHANNELS_PER_NET_PEER=4"
  "NCCL_P2P_DISABLE=1"
)
fi
mkdir -p "$OUT"; : > "$OUT/summary.txt"
for n in $NODES; do
  i=0
  for s in "${SETTINGS[@]}"; do
    i=$((i + 1))
    args=()
    if [ "$s" != "-" ]; then IFS='|' read -r -a args <<< "$s"; fi
    d="$OUT/n$n/$i"
    echo "=== nodes $n setting $i: $s"
    "$HERE/compare_tune.sh" "$ORACLE" "$WEFT" "$d" "$n" "${args[@]}" -- "${FILES[@]}" | grep -v '^SAME\|^BOTHFAIL\|^---'
    counts=$(awk '{print $1}' "$d/results.txt" | sort | uniq -c | awk '{printf "%s %s  ", $2, $1}')
    printf '%-3s %-45s %s\n' "$n" "$s" "$counts" | tee -a "$OUT/summary.txt"
  done
done
echo "=== summary (nodes, setting, results)"; cat "$OUT/summary.txt"
