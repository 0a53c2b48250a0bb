#!/usr/bin/env bash
# bench/net_plugins/run.sh: `weft perf` between two "hosts" (network namespaces joined by a veth
# pair, one rank in each) over several net plugins in the same run, rounds alternating between
# them, and one table of busbw per size (see bench/README.md, "Net plugins side by side").
#
# Rows: weft's socket plugin (weft-socket), weft's libfabric plugin (weft-ofi, tcp provider), and
# when their paths are given, AWS's aws-ofi-nccl (AWS_OFI_NCCL=/path/libnccl-net-ofi.so, tcp
# provider, SENDRECV protocol) and NCCL's ext-net example (EXAMPLE_PLUGIN=/path/libnccl-net-example.so).
# Every row runs with WEFT_NET_FALLBACK=deny, so a plugin that cannot run fails its row instead
# of silently measuring another plugin; rank 0's NET/Plugin line says which one ran. Before its
# row, each plugin goes through `weft net-test` (the checks of NCCL's usage); a plugin whose init
# fails without weft's CUDA stand-in and passes with it (no CUDA driver here) gets the stand-in
# in its ranks by LD_PRELOAD.
#
# usage: bench/net_plugins/run.sh           (root: it creates two network namespaces)
# environment: BUILD (default build), COLLS (default all_reduce,sendrecv), MINBYTES (64K),
#              MAXBYTES (64M), ITERS (timed iterations per size, 20), ROUNDS (3), KEEP (keep raw
#              output), AWS_OFI_NCCL, EXAMPLE_PLUGIN (plugin files for the extra rows)
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$root/build}
WEFT=$BUILD/tools/weft/weft
STANDIN=$BUILD/lib/weft-cuda-standin
COLLS=${COLLS:-all_reduce,sendrecv}
MINBYTES=${MINBYTES:-64K}
MAXBYTES=${MAXBYTES:-64M}
ITERS=${ITERS:-20}
ROUNDS=${ROUNDS:-3}
export WEFT_INIT_TIMEOUT=${WEFT_INIT_TIMEOUT:-30}

# shellcheck source=bench/common/netns.sh
. "$root/bench/common/netns.sh"
bench_netns_init plugins

if [ ! -x "$WEFT" ]; then echo "no $WEFT: cmake --build $BUILD" >&2; exit 2; fi
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "SKIP: two network namespaces need root and iproute2" >&2
  exit 77
fi
bench_netns_make 10.98.0 || { echo "could not make the namespaces" >&2; exit 1; }

# Rows: label | NCCL_NET_PLUGIN | NCCL_NET | extra environment (host index substituted for %h)
rows=("weft-socket|weft-socket|Socket|NCCL_SOCKET_IFNAME=wb%h"
      "weft-ofi|weft-ofi|OFI|FI_PROVIDER=tcp FI_TCP_IFACE=wb%h WEFT_OFI_PROVIDER=tcp")
[ -n "${AWS_OFI_NCCL:-}" ] &&
  rows+=("aws-ofi-nccl|$AWS_OFI_NCCL|Libfabric|FI_PROVIDER=tcp FI_TCP_IFACE=wb%h OFI_NCCL_PROTOCOL=SENDRECV OFI_NCCL_EXCLUDE_TCP_IF=lo,docker0")
[ -n "${EXAMPLE_PLUGIN:-}" ] && rows+=("nccl-example|$EXAMPLE_PLUGIN|Plugin|")

field() { echo "$1" | cut -d'|' -f"$2"; }
label_of() { field "$1" 1; }

# net-test per plugin; LD_PRELOAD of the stand-in for a plugin that starts only with it.
declare -A preload
for row in "${rows[@]}"; do
  label=$(label_of "$row")
  env_h=$(field "$row" 4)
  env_h=${env_h//%h/0}
  # shellcheck disable=SC2086  # the row's environment is a word list
  ip netns exec "$ns0" env $env_h NCCL_SOCKET_IFNAME=wb0 timeout 600 "$WEFT" net-test "$(field "$row" 2)" \
    >"$out/nettest-$label.txt" 2>&1
  echo "net-test $label: exit $? ($(tail -1 "$out/nettest-$label.txt"))"
  # shellcheck disable=SC2086
  if grep -q "^cuda: weft's CUDA stand-in" "$out/nettest-$label.txt" &&
    ! ip netns exec "$ns0" env $env_h timeout 120 "$WEFT" net-test "$(field "$row" 2)" --check init --cuda-standin off \
      >"$out/nettest-$label-nocuda.txt" 2>&1 && grep -q "^PASS  init" "$out/nettest-$label.txt"; then
    preload[$label]="$STANDIN/libcuda.so.1:$STANDIN/libcudart.so"
  fi
done

# One job: rank 0 in ns0, rank 1 in ns1, NCCL_HOSTID per namespace, the id from NCCL_COMM_ID.
perf_once() {
  local row=$1 coll=$2 label env0 env1
  label=$(label_of "$row")
  env0=$(field "$row" 4); env0=${env0//%h/0}
  env1=$(field "$row" 4); env1=${env1//%h/1}
  local common=(NCCL_COMM_ID=10.98.0.1:29611 WORLD_SIZE=2 WEFT_NET_FALLBACK=deny NCCL_NET_PLUGIN="$(field "$row" 2)"
                NCCL_NET="$(field "$row" 3)" LD_PRELOAD="${preload[$label]:-}")
  # shellcheck disable=SC2086
  ip netns exec "$ns1" env "${common[@]}" $env1 RANK=1 NCCL_HOSTID=host1 NCCL_SOCKET_IFNAME=wb1 \
    timeout 300 "$WEFT" perf "$coll" -b "$MINBYTES" -e "$MAXBYTES" -f 4 -n "$ITERS" -w 3 -c 1 >/dev/null 2>"$out/rank1.err" &
  local peer=$!
  # shellcheck disable=SC2086
  ip netns exec "$ns0" env "${common[@]}" $env0 RANK=0 NCCL_HOSTID=host0 NCCL_SOCKET_IFNAME=wb0 \
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET timeout 300 "$WEFT" perf "$coll" -b "$MINBYTES" -e "$MAXBYTES" -f 4 -n "$ITERS" \
    -w 3 -c 1 >"$out/rank0.out" 2>&1
  local rc=$?
  wait $peer || rc=1
  grep -m1 "NET/Plugin: using" "$out/rank0.out" | sed 's/.*NET\/Plugin: //' >"$out/via-$label"
  # size, out-of-place busbw and #wrong of every row of the table
  awk -v l="$label" -v c="$coll" '/^ +[0-9]+ +[0-9]+ / { print "RESULT", l, c, $1, $8, $9 }' "$out/rank0.out"
  # The first failure of each plugin and collective, with the line that says why.
  if [ $rc -ne 0 ] && [ ! -e "$out/fail-$label-$coll" ]; then
    grep -h -v "Ignoring settings" "$out/rank0.out" "$out/rank1.err" | grep -m1 -E "WARN|error|failed" |
      sed 's/^[^ ]* \[[0-9]*\] //' | cut -c1-240 >"$out/fail-$label-$coll"
  fi
  return $rc
}

echo
echo "-------------------------------------------------------------------------------------------"
echo " weft perf between 2 network namespaces (veth, 10.98.0.1/2), one rank each, per net plugin"
echo " $(date '+%Y-%m-%d %H:%M:%S'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "-------------------------------------------------------------------------------------------"
: >"$out/results"
for _ in $(seq 1 "$ROUNDS"); do
  for coll in ${COLLS//,/ }; do
    for row in "${rows[@]}"; do
      perf_once "$row" "$coll" >>"$out/results" || true
    done
  done
done

echo " plugins (rank 0's NET/Plugin line):"
for row in "${rows[@]}"; do
  label=$(label_of "$row")
  printf "   %-13s %s%s\n" "$label" "$(cat "$out/via-$label" 2>/dev/null || echo "-")" \
    "${preload[$label]:+ [CUDA stand-in by LD_PRELOAD]}"
done
for f in "$out"/fail-*; do
  [ -e "$f" ] || continue
  echo " failed: ${f##*/fail-}: $(cat "$f")"
done
echo " busbw GB/s, out-of-place, median of $ROUNDS rounds (rounds alternate the plugins); -c 1: every"
echo " size checked, #wrong summed over rounds in brackets when not 0"
for coll in ${COLLS//,/ }; do
  echo
  printf " %-10s %10s" "$coll" size
  for row in "${rows[@]}"; do printf " %14s" "$(label_of "$row")"; done
  echo
  awk -v c="$coll" '$3 == c { print $4 }' "$out/results" | sort -n -u | while read -r size; do
    printf " %-10s %10s" "" "$size"
    for row in "${rows[@]}"; do
      awk -v l="$(label_of "$row")" -v c="$coll" -v s="$size" '
        $2 == l && $3 == c && $4 == s { v[++n] = $5; w += ($6 == "N/A" ? 0 : $6) }
        END {
          if (!n) { printf " %14s", "-"; exit }
          for (i = 2; i <= n; i++) { x = v[i]; j = i - 1; while (j >= 1 && v[j] > x) { v[j + 1] = v[j]; j-- } v[j + 1] = x }
          m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
          printf " %14s", sprintf("%.2f", m) (w ? sprintf(" [%d]", w) : "")
        }' "$out/results"
    done
    echo
  done
done
