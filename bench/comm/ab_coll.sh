#!/usr/bin/env bash
# A/B of two builds of weft on the same collective: runs `weft_bench_comm coll` of build A and of
# build B alternately (ROUNDS rounds each, A first in odd rounds, B first in even ones, so drift
# in the machine's load hits both alike) over shared memory and over the socket plugin on lo, and
# prints the median time per call of each build and B/A.
#
#   bench/comm/ab_coll.sh A_BIN B_BIN            # e.g. a build of main and of a branch
#   ROUNDS=7 SIZES=8,64K OP=allreduce RANKS=2 PATHS="shm net" bench/comm/ab_coll.sh A B
#
# A_BIN/B_BIN are weft_bench_comm binaries (each finds its own libweft through its RUNPATH).
set -euo pipefail

[ $# -eq 2 ] || { sed -n 2,10p "$0" >&2; exit 2; }
A=$1 B=$2
ROUNDS=${ROUNDS:-5}
SIZES=${SIZES:-8,64K,1M}
OP=${OP:-allreduce}
RANKS=${RANKS:-2}
REPS=${REPS:-5}
PATHS=${PATHS:-shm net}
out=$(mktemp -d /tmp/weft-ab.XXXXXX)
trap 'rm -rf "$out"' EXIT

run() {  # run LABEL BIN PATH
  local env=()
  [ "$3" = net ] && env=(NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo)
  env "${env[@]}" timeout 300 "$2" coll --op "$OP" --ranks "$RANKS" --sizes "$SIZES" --reps "$REPS" --timeout 280 \
    --label "$1-$3" | grep '^RESULT test=coll' >>"$out/results.txt" || echo " $1 on $3 failed (exit $?)" >&2
}

for ((r = 1; r <= ROUNDS; ++r)); do
  for p in $PATHS; do
    if ((r % 2 == 1)); then run A "$A" "$p"; run B "$B" "$p"; else run B "$B" "$p"; run A "$A" "$p"; fi
  done
done

echo "-------------------------------------------------------------------------------"
echo " $OP, $RANKS ranks: A = $A"
echo "                  B = $B"
echo " $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo " us per call (max over ranks, nccl-tests' method), median of $ROUNDS rounds x $REPS reps;"
echo " shm: shared memory; net: the socket plugin on lo (NCCL_SHM_DISABLE=1)"
echo "-------------------------------------------------------------------------------"
printf " %-5s %10s %10s %10s %7s\n" path bytes "A us" "B us" "B/A"
awk '
  { for (i = 1; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
    split(f["impl"], ip, "-"); key = ip[2] " " f["bytes"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    v[key, ip[1], ++c[key, ip[1]]] = f["us"] }
  function median(key, side,   k, i, j, t, a) {
    k = c[key, side]; if (k == 0) return "-"
    for (i = 1; i <= k; ++i) a[i] = v[key, side, i] + 0
    for (i = 2; i <= k; ++i) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; --j) a[j + 1] = a[j]; a[j + 1] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
  END {
    for (i = 1; i <= n; ++i) {
      split(order[i], kb, " "); ma = median(order[i], "A"); mb = median(order[i], "B")
      printf " %-5s %10s %10s %10s %7s\n", kb[1], kb[2], ma, mb, (ma == "-" || mb == "-" || ma == 0) ? "-" : sprintf("%.3f", mb / ma) } }
' "$out/results.txt"
