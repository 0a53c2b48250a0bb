#!/usr/bin/env bash
# The connect phase at scale: `weft search --quiet` on N identical nodes of a topology (by default
# the bundled 8-GPU, 8-NIC HGX H100 at 1k, 10k and 100k ranks). --quiet searches node 0 only,
# connects every rank (presets, exchange, postset, ring checks) and prints a summary; this script
# runs each size REPS times and prints the best run's figures (the machine may be shared: the
# minimum is the least disturbed run) and the largest peak memory.
#
# With BASE=path/to/another/weft (e.g. one built from an older commit), each run of weft is
# followed by one of BASE on the same size, and the table adds BASE's connect time and peak
# memory and the ratio: baseline and change side by side, in the same minutes.
#
#   bench/connect_scale.sh [WEFT] [TOPO] [REPS] [NODES...]
#   bench/connect_scale.sh build/tools/weft/weft examples/topologies/hgx-h100-8gpu.xml 5
#   BASE=/tmp/weft-main bench/connect_scale.sh build/tools/weft/weft ../shared/corpus/topologies/oracle-oci-hpc/H100-topology.xml 3 125 1250 12500 125000
set -euo pipefail

weft=${1:-build/tools/weft/weft}
topo=${2:-examples/topologies/hgx-h100-8gpu.xml}
reps=${3:-5}
shift $(( $# < 3 ? $# : 3 ))
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(125 1250 12500)
base=${BASE:-}

field() { sed -E "s/.*\"$1\":([0-9.eE+-]+).*/\1/" <<<"$2"; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a > b) ? a : b }'; }

printf '%s on %s, best of %s runs; load average %s at the start\n\n' "$("$weft" --version 2>/dev/null || echo weft)" \
  "$topo" "$reps" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %7s | %7s | %8s | %8s | %8s | %9s | %11s | %12s | %11s | %8s |' \
  nodes ranks "wall s" "cpu s" "search s" "connect s" "connect cpu" "cpu/rank (c)" "wall/rank" "peak MB"
[ -n "$base" ] && printf ' %11s | %10s | %11s |' "base conn s" "base MB" "conn speedup"
printf '\n|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|' --------: --------: ---------: ---------: ---------: \
  ----------: ------------: -------------: ------------: ---------:
[ -n "$base" ] && printf '%s|%s|%s|' ------------: -----------: ------------:
printf '\n'
for nodes in "${sizes[@]}"; do
  wall="" cpu="" search="" connect="" ccpu="" peak="" ranks=0 bconnect="" bpeak=""
  for ((i = 0; i < reps; i++)); do
    out=$("$weft" search "$topo" --nodes "$nodes" --quiet --format json)
    ranks=$(field nRanks "$out")
    wall=$(min "$(field wall "$out")" "$wall")
    cpu=$(min "$(field cpu "$out")" "$cpu")
    search=$(min "$(field search "$out")" "$search")
    connect=$(min "$(field connect "$out")" "$connect")
    ccpu=$(min "$(field connectCpu "$out")" "$ccpu")
    peak=$(max "$(field peakMemoryMB "$out")" "$peak")
    if [ -n "$base" ]; then
      out=$("$base" search "$topo" --nodes "$nodes" --quiet --format json)
      bconnect=$(min "$(field connect "$out")" "$bconnect")
      bpeak=$(max "$(field peakMemoryMB "$out")" "$bpeak")
    fi
  done
  awk -v n="$nodes" -v r="$ranks" -v w="$wall" -v c="$cpu" -v s="$search" -v k="$connect" -v kc="$ccpu" \
      -v m="$peak" 'BEGIN {
    printf "| %7d | %7d | %8.3f | %8.3f | %8.3f | %9.3f | %11.3f | %9.2f us | %8.2f us | %8.1f |",
           n, r, w, c, s, k, kc, kc * 1e6 / r, w * 1e6 / r, m }'
  if [ -n "$base" ]; then
    awk -v bk="$bconnect" -v bm="$bpeak" -v k="$connect" 'BEGIN { printf " %11.3f | %10.1f | %11.1fx |", bk, bm, bk / k }'
  fi
  printf '\n'
done
