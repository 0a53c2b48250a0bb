#!/usr/bin/env bash
# bench/comm/run.sh: weft's communicator against its baselines, measured in the same run, one
# table per part (see bench/README.md, "Communicator: init, send/recv"):
#   init  init time of 2-, 4- and 8-rank communicators of processes on this host
#   shm   send/recv between two processes on this host vs Open MPI's MPI_Send/MPI_Recv (vader)
#   net   send/recv over the socket plugin between two network namespaces vs iperf3 (root only)
#   coll  allreduce, allgather, reducescatter and broadcast (COLL_OPS), 2 and 4 processes on this
#         host, vs Open MPI (btl self,vader) and Gloo (TCP over loopback: its default algorithm, and
#         AllreduceRing, AllgatherRing, halving-doubling where Gloo has them)
#   netcoll the same ops (NETCOLL_OPS) across 2 network namespaces ("hosts", a veth pair), 1 and 2
#         ranks per host: weft (socket plugin) vs Open MPI (TCP BTL between them) (root only)
#   floor 8-byte allreduce: the floor of NCCL's ring schedule here (weft_bench_hop) vs weft, Open MPI
#   algo  small allreduce by algorithm, 2 and 4 processes: weft's pick (cost model), weft forced to
#         NCCL's ring (WEFT_HOST_ALGO=nccl) and to recursive doubling (=doubling), another build's
#         weft (BASE_BUILD, e.g. main's) and Open MPI, alternating in one run; the model's pick
#         (weft tune --cpu) beside the measured best
#   mem   peak resident memory (VmHWM) of each rank of a 4-rank 256 MiB allreduce vs its buffers,
#         weft, Open MPI and Gloo
#
# usage: bench/comm/run.sh [PART...]        (default: init shm net; coll, netcoll, mem and floor only when named)
# environment: BUILD (build dir, default build), ROUNDS (alternating rounds, default 3),
#              SIZES (default 4M,16M,64M,256M), INIT_REPS (default 7), KEEP (keep raw output dir),
#              COLL_SIZES (default 8,64K,1M,16M,64M), COLL_OPS (default allreduce,allgather,
#              reducescatter,broadcast), COLL_BIG (extra 2-rank allreduce size, default
#              256M; empty for none), COLL_REPS (timed reps per size, default 3), MEM_SIZE (mem's
#              allreduce size, default 256M), MEM_RANKS (default 4), NETCOLL_PER_HOST (ranks per
#              namespace, default 1,2), NETCOLL_SIZES (default COLL_SIZES), NETCOLL_OPS (default COLL_OPS), NETCOLL_ROUNDS (default 1),
#              ALGO_SIZES (algo's sizes, default 8,1K,4K,16K,64K), BASE_BUILD (algo's baseline build dir:
#              its bench/weft_bench_comm runs with its core/api/libweft.so.0)
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$root/build}
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-4M,16M,64M,256M}
INIT_REPS=${INIT_REPS:-7}
BIN=$BUILD/bench/weft_bench_comm
MPI_BIN=$BUILD/bench/weft_bench_comm_mpi
GLOO_BIN=$BUILD/bench/weft_bench_comm_gloo
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(init shm net)

# A hung init (a weft bug, see README) fails after this many seconds instead of 120, and the run
# goes on with the next attempt.
export WEFT_INIT_TIMEOUT=${WEFT_INIT_TIMEOUT:-5}

# shellcheck source=bench/common/netns.sh
. "$root/bench/common/netns.sh"
bench_netns_init comm

if [ ! -x "$BIN" ]; then
  echo "no $BIN: cmake --build $BUILD --target weft_bench_comm" >&2
  exit 2
fi

header() {
  echo
  echo "-------------------------------------------------------------------------------------------"
  echo " $1"
  echo " $(date '+%Y-%m-%d %H:%M:%S'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "-------------------------------------------------------------------------------------------"
}

# Runs "$@" up to 3 times until it exits 0 (a failed weft init is retried); the output of the
# successful attempt goes to stdout. Returns 1 if all failed.
retry3() {
  local i
  for i in 1 2 3; do
    if "$@" >"$out/attempt" 2>"$out/attempt.err"; then cat "$out/attempt"; return 0; fi
    echo "  (attempt $i failed: $(head -c 300 "$out/attempt.err" | tr '\n' ' '))" >&2
  done
  return 1
}

# stdin: RESULT lines. Prints "key value..." with the values of field $3 for every key made of
# the fields named in $1 and $2 (e.g. impl bytes gbps).
collect() {
  awk -v k1="$1" -v k2="$2" -v v="$3" '
    /^RESULT / {
      delete f
      for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      if (!(v in f)) next
      key = f[k1] " " f[k2]
      vals[key] = vals[key] " " f[v]
    }
    END { for (k in vals) print k vals[k] }'
}

# stdin: "k1 k2 v v v ..." lines. Prints "k1 k2 median best n" (best = min when $1 == min).
summarize() {
  awk -v best="$1" '{
    n = NF - 2
    for (i = 1; i <= n; i++) a[i] = $(i + 2) + 0
    for (i = 2; i <= n; i++) { x = a[i]; j = i - 1; while (j >= 1 && a[j] > x) { a[j + 1] = a[j]; j-- } a[j + 1] = x }
    med = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    print $1, $2, med, (best == "min" ? a[1] : a[n]), n
  }'
}

# Looks up "k1 k2" in a summary file; prints field $3 (3: median, 4: best, 5: count) or "-".
lookup() { awk -v a="$2" -v b="$3" -v f="$4" '$1 == a && $2 == b { print $f; found = 1 } END { if (!found) print "-" }' "$1"; }

human() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%d MiB", b / 1048576; else if (b >= 1024) printf "%d KiB", b / 1024; else printf "%d B", b }'; }

bytes_list() {
  local s
  for s in ${SIZES//,/ }; do
    awk -v s="$s" 'BEGIN { n = s + 0; u = substr(s, length(s)); if (u == "K") n *= 1024; if (u == "M") n *= 1048576; if (u == "G") n *= 1073741824; printf "%d\n", n }'
  done
}

# fmt DECIMALS X: X with that many decimals, or "-".
fmt() { awk -v d="$1" -v x="$2" 'BEGIN { if (x == "-" || x == "") print "-"; else printf "%.*f\n", d, x }'; }

# ratio A B: A/B with 2 decimals, or "-" when either is missing.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
# verdict R OP T: ok when R OP T holds (OP is >= or <=), MISS otherwise, "-" without a ratio.
verdict() { awk -v r="$1" -v op="$2" -v t="$3" 'BEGIN { if (r == "-") print "-"; else if ((op == ">=" && r + 0 >= t) || (op == "<=" && r + 0 <= t)) print "ok"; else print "MISS" }'; }

# ---------------------------------------------------------------------------------------------
part_init() {
  header "weft_comm_init_rank on one host: N forked processes, time from just before the call to its return"
  timeout 300 "$BIN" init --ranks 2,4,8 --reps "$INIT_REPS" --warmup 1 --timeout 5 --max-failures 20 \
    >"$out/init.txt" 2>"$out/init.err"
  local rc=$?
  [ $rc -ne 0 ] && echo " init benchmark failed (exit $rc): $(tail -3 "$out/init.err")"
  collect impl ranks max_ms <"$out/init.txt" | summarize min >"$out/init.max"
  collect impl ranks span_ms <"$out/init.txt" | summarize min >"$out/init.span"
  echo " per job: max over ranks of the rank's own init time; median and best of $INIT_REPS jobs after 1 untimed;"
  echo " span: first rank's start to last rank's return; a failed job (killed after 5 s) is run again"
  echo
  printf " %5s  %9s  %9s  %9s  %12s  %11s  %-10s %s\n" ranks "median ms" "best ms" "span ms" "median/rank" "failed jobs" target ""
  local n
  for n in 2 4 8; do
    local med best span jobs failed perrank target ok
    med=$(lookup "$out/init.max" weft "$n" 3)
    best=$(lookup "$out/init.max" weft "$n" 4)
    span=$(lookup "$out/init.span" weft "$n" 3)
    jobs=$(lookup "$out/init.max" weft "$n" 5)
    failed=$(grep -c "test=init-failed impl=weft ranks=$n " "$out/init.txt")
    perrank=$(awk -v m="$med" -v n="$n" 'BEGIN { if (m == "-") print "-"; else printf "%.3f", m / n }')
    target="" ok=""
    if [ "$n" = 4 ]; then target="<= 50 ms"; ok=$(verdict "$med" "<=" 50); fi
    [ "$jobs" = - ] && jobs=0
    printf " %5s  %9s  %9s  %9s  %12s  %11s  %-10s %s\n" "$n" "$(fmt 2 "$med")" "$(fmt 2 "$best")" "$(fmt 2 "$span")" \
      "$perrank" "$failed of $((jobs + 1 + failed))" "$target" "$ok"
  done
  echo
  echo " NCCL baseline: none (NCCL needs a GPU; none here). NCCL's init takes hundreds of ms."
}

# ---------------------------------------------------------------------------------------------
mpirun_p2p() {
  timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader "$@"
}

part_shm() {
  header "send/recv between 2 processes on one host: weft (shared memory) vs Open MPI (btl self,vader)"
  if [ ! -x "$MPI_BIN" ] || ! command -v mpirun >/dev/null; then
    echo " SKIP: no Open MPI baseline ($MPI_BIN not built or mpirun missing; apt-get install openmpi-bin libopenmpi-dev)"
    return 0
  fi
  local args=(--sizes "$SIZES" --reps 2 --bytes-per-rep 1G --lat-iters 10000 --lat-warmup 1000)
  local r
  : >"$out/shm.txt"
  for r in $(seq 1 "$ROUNDS"); do
    retry3 timeout 120 "$BIN" p2p "${args[@]}" --label weft >>"$out/shm.txt" || echo " weft round $r failed"
    mpirun_p2p "$MPI_BIN" "${args[@]}" --label mpi >>"$out/shm.txt" 2>"$out/mpi.err" ||
      echo " mpi round $r failed: $(tail -2 "$out/mpi.err")"
    MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=68719476736 mpirun_p2p -x MALLOC_MMAP_MAX_ -x MALLOC_TRIM_THRESHOLD_ \
      "$MPI_BIN" "${args[@]}" --label mpi-env >>"$out/shm.txt" 2>"$out/mpi.err" ||
      echo " mpi-env round $r failed: $(tail -2 "$out/mpi.err")"
  done
  collect impl bytes gbps <"$out/shm.txt" | summarize max >"$out/shm.bw"
  collect impl bytes us <"$out/shm.txt" | summarize min >"$out/shm.lat"
  local samples
  samples=$(lookup "$out/shm.bw" weft "$(bytes_list | head -1)" 5)
  echo " $(mpirun --version 2>/dev/null | head -1); MPI+env: MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=68719476736"
  echo " bandwidth: one-way streaming, rank 0 sends back-to-back blocking messages (1 GiB per sample,"
  echo " at least 4), rank 1 answers 8 bytes; latency: 8-byte ping-pong, half round trip (10000 per sample)"
  echo " medians of $samples samples ($ROUNDS rounds alternating weft, MPI, MPI+env); ratio against the better MPI"
  echo
  printf " %10s  %10s  %10s  %12s  %6s  %-8s %s\n" size "weft GB/s" "MPI GB/s" "MPI+env GB/s" ratio target ""
  local b
  for b in $(bytes_list); do
    local w m e best rt
    w=$(lookup "$out/shm.bw" weft "$b" 3)
    m=$(lookup "$out/shm.bw" mpi "$b" 3)
    e=$(lookup "$out/shm.bw" mpi-env "$b" 3)
    best=$(awk -v m="$m" -v e="$e" 'BEGIN { if (m == "-") print e; else if (e == "-" || m + 0 > e + 0) print m; else print e }')
    rt=$(ratio "$w" "$best")
    printf " %10s  %10s  %10s  %12s  %6s  %-8s %s\n" "$(human "$b")" "$(fmt 2 "$w")" "$(fmt 2 "$m")" "$(fmt 2 "$e")" \
      "$rt" ">= 1.00" "$(verdict "$rt" ">=" 1.0)"
  done
  local w m e best rt
  w=$(lookup "$out/shm.lat" weft 8 3)
  m=$(lookup "$out/shm.lat" mpi 8 3)
  e=$(lookup "$out/shm.lat" mpi-env 8 3)
  best=$(awk -v m="$m" -v e="$e" 'BEGIN { if (m == "-") print e; else if (e == "-" || m + 0 < e + 0) print m; else print e }')
  rt=$(ratio "$w" "$best")
  echo
  printf " %10s  %10s  %10s  %12s  %6s  %-8s %s\n" latency "weft us" "MPI us" "MPI+env us" ratio target ""
  printf " %10s  %10s  %10s  %12s  %6s  %-8s %s\n" "8 B" "$(fmt 3 "$w")" "$(fmt 3 "$m")" "$(fmt 3 "$e")" "$rt" "<= 1.50" \
    "$(verdict "$rt" "<=" 1.5)"
}

# ---------------------------------------------------------------------------------------------
# bench_netns_make, or says SKIP and why and fails (not root, no iproute2, no veth); idempotent.
setup_namespaces() {
  [ -e "/var/run/netns/$ns0" ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
    echo " SKIP: creating network namespaces needs root and iproute2"
    return 1
  fi
  if ! bench_netns_make 10.99.0 2>"$out/netns.err"; then
    echo " SKIP: could not create network namespaces and a veth pair: $(head -2 "$out/netns.err" | tr '\n' ' ')"
    return 1
  fi
}

# One weft run: rank 0 in ns0, rank 1 in ns1, two "hosts" (NCCL_HOSTID), the id from NCCL_COMM_ID.
weft_net_once() {
  local comm_id=10.99.0.1:29517
  ip netns exec "$ns1" env NCCL_COMM_ID=$comm_id NCCL_HOSTID=weft-bench-host1 NCCL_SOCKET_IFNAME=wb1 \
    timeout 100 "$BIN" p2p --rank 1 --timeout 90 "$@" >/dev/null 2>"$out/net1.err" &
  local peer=$!
  ip netns exec "$ns0" env NCCL_COMM_ID=$comm_id NCCL_HOSTID=weft-bench-host0 NCCL_SOCKET_IFNAME=wb0 \
    timeout 100 "$BIN" p2p --rank 0 --timeout 90 "$@" 2>"$out/net0.err"
  local rc=$?
  wait $peer || rc=1
  [ $rc -ne 0 ] && cat "$out/net0.err" "$out/net1.err" >&2
  return $rc
}

# One iperf3 run (one stream, its defaults, -t 3); prints the receiver's GB/s.
iperf3_once() {
  local port=29518 i
  ip netns exec "$ns0" timeout 30 iperf3 -s -1 -B 10.99.0.1 -p $port >/dev/null 2>&1 &
  local server=$!
  for i in $(seq 1 50); do
    ip netns exec "$ns0" ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
    sleep 0.1
  done
  ip netns exec "$ns1" timeout 30 iperf3 -c 10.99.0.1 -p $port -t 3 -f m 2>&1 |
    awk '/receiver/ { for (i = 1; i < NF; i++) if ($(i + 1) == "Mbits/sec") printf "RESULT test=bw impl=iperf3 bytes=0 rep=0 gbps=%.4f\n", $i / 8000 }'
  wait $server
}

part_net() {
  header "send/recv across 2 network namespaces (veth): weft socket plugin vs iperf3"
  setup_namespaces || return 0
  local have_iperf=1
  command -v iperf3 >/dev/null || have_iperf=0
  local args=(--sizes "$SIZES" --reps 2 --bytes-per-rep 1G --lat-iters 5000 --lat-warmup 500 --label weft)
  local r
  : >"$out/net.txt"
  for r in $(seq 1 "$ROUNDS"); do
    retry3 weft_net_once "${args[@]}" >>"$out/net.txt" || echo " weft round $r failed"
    [ $have_iperf = 1 ] && iperf3_once >>"$out/net.txt"
  done
  collect impl bytes gbps <"$out/net.txt" | summarize max >"$out/net.bw"
  collect impl bytes us <"$out/net.txt" | summarize min >"$out/net.lat"
  local ip3 ip3n samples
  ip3=$(lookup "$out/net.bw" iperf3 0 3)
  ip3n=$(lookup "$out/net.bw" iperf3 0 5)
  samples=$(lookup "$out/net.bw" weft "$(bytes_list | head -1)" 5)
  echo " ranks: NCCL_HOSTID differs per namespace (two hosts: the net plugin, $(basename "$BUILD")/lib/libweft-net-socket.so),"
  echo " NCCL_SOCKET_IFNAME=wb0/wb1 (10.99.0.1/2), id from NCCL_COMM_ID; weft: the same streaming as above,"
  echo " medians of $samples samples; iperf3 $(iperf3 --version | head -1 | cut -d' ' -f2): one stream, -t 3,"
  echo " receiver rate, median of $ip3n runs; $ROUNDS rounds alternating weft and iperf3"
  echo
  [ $have_iperf = 0 ] && echo " (no iperf3: install it for the baseline)"
  printf " %10s  %10s  %12s  %6s  %-8s %s\n" size "weft GB/s" "iperf3 GB/s" ratio target ""
  local b
  for b in $(bytes_list); do
    local w rt
    w=$(lookup "$out/net.bw" weft "$b" 3)
    rt=$(ratio "$w" "$ip3")
    printf " %10s  %10s  %12s  %6s  %-8s %s\n" "$(human "$b")" "$(fmt 2 "$w")" "$(fmt 2 "$ip3")" "$rt" ">= 0.90" \
      "$(verdict "$rt" ">=" 0.9)"
  done
  echo
  echo " 8-byte half round trip over the plugin: $(fmt 2 "$(lookup "$out/net.lat" weft 8 3)") us (no target)"
}

# ---------------------------------------------------------------------------------------------
# coll_medians FILE: "impl op ranks bytes median_us" of its RESULT test=coll lines (test=memcpy:
# op and ranks "-").
coll_medians() {
  awk '/^RESULT test=(coll|memcpy) / {
      delete f
      for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      if (f["test"] == "memcpy") { f["op"] = "-"; f["ranks"] = "-" }
      key = f["impl"] " " f["op"] " " f["ranks"] " " f["bytes"]
      vals[key] = vals[key] " " f["us"]
    }
    END { for (k in vals) print k vals[k] }' "$1" |
    awk '{ n = NF - 4; for (i = 1; i <= n; i++) a[i] = $(i + 4) + 0
      for (i = 2; i <= n; i++) { x = a[i]; j = i - 1; while (j >= 1 && a[j] > x) { a[j + 1] = a[j]; j-- } a[j + 1] = x }
      print $1, $2, $3, $4, (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }'
}

# coll_lookup MEDIANS IMPL OP RANKS BYTES: the median us, or "-".
coll_lookup() {
  awk -v i="$2" -v o="$3" -v n="$4" -v b="$5" '$1 == i && $2 == o && $3 == n && $4 == b { print $5; f = 1 }
    END { if (!f) print "-" }' "$1"
}

# coll_busbw DECIMALS OP N BYTES US: busbw GB/s as nccl-tests: allreduce bytes/us * 2(n-1)/n, allgather
# and reducescatter bytes/us * (n-1)/n, broadcast bytes/us.
coll_busbw() {
  awk -v d="$1" -v op="$2" -v n="$3" -v b="$4" -v us="$5" 'BEGIN { if (us == "-") { print "-"; exit }
    f = (op == "allreduce") ? 2 * (n - 1) / n : (op == "broadcast") ? 1 : (n - 1) / n; printf "%.*f", d, b / us / 1e3 * f }'
}

# op_sizes OP N SIZES: SIZES (comma list, K/M/G suffixes) with each size rounded up to what OP on N
# ranks takes (reducescatter: 4 x N bytes, floats per rank; allgather: N; allreduce: 4), as bytes.
op_sizes() {
  local q=1 b out=()
  case $1 in allreduce) q=4 ;; allgather) q=$2 ;; reducescatter) q=$((4 * $2)) ;; esac
  for b in $(SIZES=$3 bytes_list); do out+=($(((b + q - 1) / q * q))); done
  local IFS=,
  echo "${out[*]}"
}

COLL_SIZES=${COLL_SIZES:-8,64K,1M,16M,64M}
COLL_OPS=${COLL_OPS:-allreduce,allgather,reducescatter,broadcast}
COLL_BIG=${COLL_BIG-256M}
COLL_REPS=${COLL_REPS:-3}

have_mpi() { [ -x "$MPI_BIN" ] && command -v mpirun >/dev/null; }
have_gloo() { [ -x "$GLOO_BIN" ]; }

# mpirun_coll N ARGS...: the Open MPI collective benchmark under N ranks, malloc tuned as issue 21 asks.
mpirun_coll() {
  local n=$1
  shift
  MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=68719476736 timeout 120 mpirun --allow-run-as-root --oversubscribe \
    -np "$n" --mca btl self,vader -x MALLOC_MMAP_MAX_ -x MALLOC_TRIM_THRESHOLD_ "$MPI_BIN" coll "$@"
}

part_coll() {
  header "collectives, N processes on one host: weft (shared memory) vs Open MPI (btl self,vader) and Gloo (TCP, lo)"
  echo " ops: $COLL_OPS"
  local mpi=1 gloo=1
  have_mpi || { mpi=0; echo " (no Open MPI baseline: $MPI_BIN not built or mpirun missing)"; }
  have_gloo || { gloo=0; echo " (no Gloo baseline: $GLOO_BIN not built; apt-get install libgloo-dev, reconfigure)"; }
  : >"$out/coll.txt"
  local op n sizes memcpy
  for op in ${COLL_OPS//,/ }; do
    for n in 2 4; do
      sizes=$COLL_SIZES memcpy=0
      if [ $op = allreduce ] && [ $n = 2 ]; then
        memcpy=1
        [ -n "$COLL_BIG" ] && sizes=$sizes,$COLL_BIG
      fi
      sizes=$(op_sizes $op $n "$sizes")
      retry3 timeout 120 "$BIN" coll --op $op --ranks $n --sizes "$sizes" --reps "$COLL_REPS" --memcpy $memcpy \
        --timeout 100 --label weft >>"$out/coll.txt" || echo " weft $op $n ranks failed"
      if [ $mpi = 1 ]; then
        mpirun_coll $n --op $op --sizes "$sizes" --reps "$COLL_REPS" --label mpi >>"$out/coll.txt" 2>"$out/mpi.err" ||
          echo " mpi $op $n ranks failed (exit $?): $(tail -2 "$out/mpi.err" | tr '\n' ' ')"
      fi
      if [ $gloo = 1 ]; then
        timeout 900 "$GLOO_BIN" coll --op $op --ranks $n --sizes "$sizes" --reps "$COLL_REPS" --timeout 280 \
          --label gloo >>"$out/coll.txt" 2>"$out/gloo.err" ||
          echo " gloo $op $n ranks failed (exit $?): $(tail -2 "$out/gloo.err" | tr '\n' ' ')"
      fi
    done
  done
  coll_medians "$out/coll.txt" >"$out/coll.us"
  cl() { coll_lookup "$out/coll.us" "$@"; }
  busbw() { coll_busbw 2 "$@"; }
  echo " $(mpirun --version 2>/dev/null | head -1), mpirun -np N --mca btl self,vader with MALLOC_MMAP_MAX_=0"
  echo " MALLOC_TRIM_THRESHOLD_=68719476736; Gloo $(dpkg-query -W -f='${Version}' libgloo-dev 2>/dev/null) (Debian libgloo-dev),"
  echo " N forked ranks, TCP transport on lo, FileStore rendezvous, a fresh context per algorithm: Gloo = gloo::allreduce,"
  echo " gloo::allgather or gloo::broadcast (default algorithm, separate buffers), ring = AllreduceRing (in place) or"
  echo " AllgatherRing, HD = AllreduceHalvingDoubling or ReduceScatterHalvingDoubling (in place; Gloo's only reduce-"
  echo " scatter). MPI: MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block, MPI_Bcast (root 0)."
  echo " nccl-tests' method on all sides: buffers malloc'd and touched once"
  echo " per size, max(2, iters/5) warm-up calls, then $COLL_REPS timed reps of iters = clamp(128 MiB / size, 5, 1000) calls"
  echo " between barriers (Gloo: iters cut to about 1 s per rep, at least 5); us = time per call, max over ranks, median"
  echo " of the reps; size = the whole buffer as nccl-tests: allreduce's (float sum), allgather's output (bytes),"
  echo " reducescatter's input (float sum), broadcast's (bytes, root 0); sizes rounded up to a multiple of what the"
  echo " op takes (reducescatter 8 B on 4 ranks: 16 B); busbw: allreduce algbw*2(n-1)/n, allgather and reducescatter"
  echo " algbw*(n-1)/n, broadcast algbw; best = the baseline with the highest busbw; ratio: busbw weft/best"
  echo " (8 B: latency MPI/weft); memcpy: single-thread memcpy of the size, GB/s"
  echo
  local fmtline=" %-13s %5s %8s %10s %10s %10s %10s %10s %7s %7s %-6s %6s %-11s %-4s %7s\n"
  # shellcheck disable=SC2059
  printf "$fmtline" op ranks size "weft us" "MPI us" "Gloo us" "ring us" "HD us" "weft bw" "best bw" "(of)" ratio target "" memcpy
  local b wu mu gu ru hu wb bb bi rt tgt ok mc
  for op in ${COLL_OPS//,/ }; do
    for n in 2 4; do
      sizes=$COLL_SIZES
      [ $op = allreduce ] && [ $n = 2 ] && [ -n "$COLL_BIG" ] && sizes=$sizes,$COLL_BIG
      for b in $(SIZES=$(op_sizes $op $n "$sizes") bytes_list); do
        wu=$(cl weft $op $n "$b")
        mu=$(cl mpi $op $n "$b")
        gu=$(cl gloo $op $n "$b")
        ru=$(cl gloo-ring $op $n "$b")
        hu=$(cl gloo-hd $op $n "$b")
        wb=$(busbw $op $n "$b" "$wu")
        # the fastest baseline (lowest us = highest busbw at the same size)
        read -r bi bu < <(awk -v m="$mu" -v g="$gu" -v r="$ru" -v h="$hu" 'BEGIN {
          split("MPI Gloo ring HD", name, " "); split(m " " g " " r " " h, us, " "); best = "-"; bu = "-"
          for (i = 1; i <= 4; i++) if (us[i] != "-" && (bu == "-" || us[i] + 0 < bu + 0)) { best = name[i]; bu = us[i] }
          print best, bu }')
        bb=$(busbw $op $n "$b" "$bu")
        mc=$(cl memcpy - - "$b")
        mc=$(awk -v b="$b" -v us="$mc" 'BEGIN { if (us == "-") print "-"; else printf "%.2f", b / us / 1e3 }')
        if [ "$b" -le 64 ]; then
          rt=$(ratio "$mu" "$wu") tgt="lat >= 0.83" ok=$(verdict "$rt" ">=" 0.83)
        elif [ "$b" -lt 1048576 ]; then
          rt=$(ratio "$wb" "$bb") tgt=">= 0.90" ok=$(verdict "$rt" ">=" 0.9)
        else
          rt=$(ratio "$wb" "$bb") tgt=">= 1.00" ok=$(verdict "$rt" ">=" 1.0)
        fi
        # shellcheck disable=SC2059
        printf "$fmtline" $op $n "$(human "$b")" "$(fmt 2 "$wu")" "$(fmt 2 "$mu")" "$(fmt 2 "$gu")" "$(fmt 2 "$ru")" \
          "$(fmt 2 "$hu")" "$wb" "$bb" "($bi)" "$rt" "$tgt" "$ok" "$mc"
      done
    done
  done
  echo " weft bw, best bw (of): busbw GB/s of weft and of the best baseline. Targets: 8 B latency <= 1.2x Open MPI's"
  echo " (MPI/weft >= 0.83); busbw >= 0.9x the best baseline from 64 KiB, >= 1.0x from 1 MiB"
}

# ---------------------------------------------------------------------------------------------
NETCOLL_PER_HOST=${NETCOLL_PER_HOST:-1,2}
NETCOLL_SIZES=${NETCOLL_SIZES:-$COLL_SIZES}
NETCOLL_ROUNDS=${NETCOLL_ROUNDS:-1}
NETCOLL_OPS=${NETCOLL_OPS:-$COLL_OPS}
netcoll_port=29530

# weft_netcoll_once PER_HOST ARGS...: one weft job of 2 x PER_HOST ranks, ranks 0..PER_HOST-1 in
# ns0 (host 0), the others in ns1 (host 1); each rank is its own process (--rank/--nranks, the id
# from NCCL_COMM_ID); rank 0's output goes to stdout. NETCOLL_ENV: extra VAR=value for every rank.
weft_netcoll_once() {
  local per=$1 n=$(($1 * 2)) r extra=()
  shift
  read -ra extra <<<"${NETCOLL_ENV:-}"
  netcoll_port=$((netcoll_port + 1))
  local comm_id=10.99.0.1:$netcoll_port pids=()
  for r in $(seq $((n - 1)) -1 1); do
    local h=$((r / per))
    ip netns exec "$([ $h = 0 ] && echo "$ns0" || echo "$ns1")" env NCCL_COMM_ID="$comm_id" \
      NCCL_HOSTID=weft-bench-host$h NCCL_SOCKET_IFNAME=wb$h "${extra[@]}" \
      timeout 110 "$BIN" coll --rank "$r" --nranks $n --timeout 100 "$@" >/dev/null 2>"$out/netcoll$r.err" &
    pids+=($!)
  done
  ip netns exec "$ns0" env NCCL_COMM_ID="$comm_id" NCCL_HOSTID=weft-bench-host0 NCCL_SOCKET_IFNAME=wb0 \
    "${extra[@]}" timeout 110 "$BIN" coll --rank 0 --nranks $n --timeout 100 "$@" 2>"$out/netcoll0.err"
  local rc=$? p
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  [ $rc -ne 0 ] && cat "$out"/netcoll*.err >&2
  return $rc
}

# The Open MPI baseline sees the namespaces as two nodes: mpirun (in ns0, starting no rank itself)
# launches one orted per namespace through an rsh agent that runs it with `ip netns exec` in its
# own UTS namespace named after the host, so each orted has its own PMIx server (on its namespace's
# loopback) and node name; TCP between the nodes on the veth subnet only (btl_tcp_if_include,
# oob_tcp_if_include), shared memory (vader) only within a node. Ranks are not bound: each orted
# would bind its first rank to CPU 0 (it sees the whole machine as its own).
netcoll_mpi_setup() {
  cat >"$out/rsh-agent" <<'AGENT'
#!/bin/sh
# rsh agent for mpirun: "host" = a network namespace; runs the orted command line there.
host=$1
shift
exec ip netns exec "$host" unshare --uts sh -c "hostname $host; $*"
AGENT
  chmod +x "$out/rsh-agent"
}

NETCOLL_MPI_BTL=${NETCOLL_MPI_BTL:-tcp,vader,self}

# mpirun_netcoll PER_HOST CMD...: CMD as PER_HOST ranks in ns0 (ranks 0..P-1), then PER_HOST in ns1.
mpirun_netcoll() {
  local per=$1
  shift
  printf '%s slots=%s\n%s slots=%s\n' "$ns0" "$per" "$ns1" "$per" >"$out/hostfile"
  # Each orted sees the whole machine as its node, so mpirun does not know when the ranks outnumber
  # the CPUs; then it would have them spin without yielding. Say so, as it does on one node.
  local yield=0 extra=()
  [ $((per * 2)) -gt "$(nproc)" ] && yield=1
  read -ra extra <<<"${NETCOLL_MPI_ARGS:-}"
  MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=68719476736 timeout 120 ip netns exec "$ns0" \
    mpirun --allow-run-as-root --hostfile "$out/hostfile" --mca plm_rsh_agent "$out/rsh-agent" \
    --mca btl "$NETCOLL_MPI_BTL" --mca btl_tcp_if_include 10.99.0.0/24 --mca oob_tcp_if_include 10.99.0.0/24 \
    --mca mpi_yield_when_idle $yield --bind-to none --map-by slot -x MALLOC_MMAP_MAX_ -x MALLOC_TRIM_THRESHOLD_ "${extra[@]}" \
    -np $((per * 2)) "$@"
}

# Bytes through wb0 (received + sent) so far.
veth_bytes() {
  ip netns exec "$ns0" cat /sys/class/net/wb0/statistics/rx_bytes /sys/class/net/wb0/statistics/tx_bytes |
    awk '{ s += $1 } END { printf "%.0f\n", s }'
}

part_netcoll() {
  header "collectives across 2 network namespaces (veth): weft (socket plugin) vs Open MPI (TCP BTL between them)"
  setup_namespaces || return 0
  local mpi=1 placement=""
  have_mpi || { mpi=0; echo " (no Open MPI baseline: $MPI_BIN not built or mpirun missing)"; }
  # Which transport weft takes between the hosts: one small 2x2 job with NCCL_DEBUG=INFO (rank 0).
  NETCOLL_ENV="${NETCOLL_ENV:-} NCCL_DEBUG=INFO" retry3 weft_netcoll_once 2 --op allreduce --sizes 8 --reps 1 \
    --label probe >"$out/probe.txt" || echo " weft probe failed"
  local via
  via=$(grep -hoE "Using network [A-Za-z]+|NET/Socket: [0-9]+ helper threads x [0-9]+ data sockets|nNodes [0-9]+|via [A-Za-z/]+" \
    "$out/probe.txt" | sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s%s (%d)", (NR > 1 ? ", " : ""), substr($0, 2), c }')
  if [ $mpi = 1 ]; then
    netcoll_mpi_setup
    # shellcheck disable=SC2016  # expanded by each rank's shell
    placement=$(mpirun_netcoll 2 sh -c 'echo "$OMPI_COMM_WORLD_RANK:$(hostname)"' 2>&1 | sort | sed "s/$ns0/ns0/; s/$ns1/ns1/" |
      tr '\n' ' ')
  fi
  : >"$out/netcoll.txt"
  : >"$out/netcoll.veth"
  local op per r sizes=$NETCOLL_SIZES before
  for r in $(seq 1 "$NETCOLL_ROUNDS"); do
    for op in ${NETCOLL_OPS//,/ }; do
      for per in ${NETCOLL_PER_HOST//,/ }; do
        sizes=$(op_sizes $op $((per * 2)) "$NETCOLL_SIZES")
        before=$(veth_bytes)
        retry3 weft_netcoll_once "$per" --op $op --sizes "$sizes" --reps "$COLL_REPS" --label weft >>"$out/netcoll.txt" ||
          echo " weft $op $per per host failed"
        echo "weft $op $per $before $(veth_bytes)" >>"$out/netcoll.veth"
        if [ $mpi = 1 ]; then
          before=$(veth_bytes)
          mpirun_netcoll "$per" "$MPI_BIN" coll --op $op --sizes "$sizes" --reps "$COLL_REPS" --label mpi >>"$out/netcoll.txt" \
            2>"$out/mpi.err" || echo " mpi $op $per per host failed (exit $?): $(tail -2 "$out/mpi.err" | tr '\n' ' ')"
          echo "mpi $op $per $before $(veth_bytes)" >>"$out/netcoll.veth"
        fi
      done
    done
  done
  coll_medians "$out/netcoll.txt" >"$out/netcoll.us"
  echo " 2 namespaces joined by a veth pair (10.99.0.1/24 wb0, 10.99.0.2/24 wb1), 1 or 2 ranks in each, one process"
  echo " per rank; weft: NCCL_HOSTID per namespace, NCCL_SOCKET_IFNAME=wb0/wb1, id from NCCL_COMM_ID, the socket"
  echo " plugin's settings from the environment${NETCOLL_ENV:+ and $NETCOLL_ENV}; weft's log (2x2 probe, rank 0, NCCL_DEBUG=INFO):"
  echo " ${via:-(no NET line found)}"
  echo " $(mpirun --version 2>/dev/null | head -1): mpirun in ns0, one orted per namespace (rsh agent: ip netns exec +"
  echo " unshare --uts: 2 nodes), --mca btl $NETCOLL_MPI_BTL, btl_tcp_if_include and oob_tcp_if_include 10.99.0.0/24,"
  echo " --bind-to none --map-by slot (2x2 placement, rank:node: $placement), mpi_yield_when_idle 1 when the"
  echo " ranks outnumber the $(nproc) CPUs (as mpirun sets itself on one oversubscribed node), MALLOC_MMAP_MAX_=0"
  echo " MALLOC_TRIM_THRESHOLD_=68719476736${NETCOLL_MPI_ARGS:+, $NETCOLL_MPI_ARGS}; nccl-tests' method on both sides"
  echo " as in coll: $COLL_REPS timed reps of clamp(128 MiB / size, 5, 1000) calls, us = per call, max over ranks,"
  echo " median of reps x $NETCOLL_ROUNDS round(s); sizes and busbw as in coll (allreduce algbw*2(n-1)/n,"
  echo " allgather and reducescatter algbw*(n-1)/n, broadcast algbw)"
  echo
  local fmtline=" %-13s %5s %8s %10s %10s %9s %9s %6s %-11s %-4s %10s %10s\n"
  # shellcheck disable=SC2059
  printf "$fmtline" op ranks size "weft us" "MPI us" "weft bw" "MPI bw" ratio target "" "weft veth" "MPI veth"
  local b wu mu wb mb rt tgt ok n wv mv
  for op in ${NETCOLL_OPS//,/ }; do
    for per in ${NETCOLL_PER_HOST//,/ }; do
      n=$((per * 2))
      sizes=$(op_sizes $op $n "$NETCOLL_SIZES")
      wv=$(awk -v o=$op -v p="$per" '$1 == "weft" && $2 == o && $3 == p { s += $5 - $4 } END { printf "%.0f MiB", s / 1048576 }' "$out/netcoll.veth")
      mv=$(awk -v o=$op -v p="$per" '$1 == "mpi" && $2 == o && $3 == p { s += $5 - $4 } END { printf "%.0f MiB", s / 1048576 }' "$out/netcoll.veth")
      for b in $(SIZES=$sizes bytes_list); do
        wu=$(coll_lookup "$out/netcoll.us" weft $op $n "$b")
        mu=$(coll_lookup "$out/netcoll.us" mpi $op $n "$b")
        wb=$(coll_busbw 3 $op $n "$b" "$wu")
        mb=$(coll_busbw 3 $op $n "$b" "$mu")
        if [ "$b" -le 64 ]; then
          rt=$(ratio "$mu" "$wu") tgt="(lat info)" ok=""
        elif [ "$b" -lt 1048576 ]; then
          rt=$(ratio "$wb" "$mb") tgt="(info)" ok=""
        else
          rt=$(ratio "$wb" "$mb") tgt=">= 1.00" ok=$(verdict "$rt" ">=" 1.0)
        fi
        # shellcheck disable=SC2059
        printf "$fmtline" $op "${per}x2" "$(human "$b")" "$(fmt 2 "$wu")" "$(fmt 2 "$mu")" "$wb" "$mb" "$rt" "$tgt" "$ok" "$wv" "$mv"
        wv="" mv=""
      done
    done
  done
  echo " ranks: per host x hosts; bw: busbw GB/s; ratio: busbw weft/MPI (8 B: latency MPI us/weft us, for"
  echo " information); veth: bytes through wb0 (rx+tx) during all of that op's jobs (the traffic crossed the veth)."
  echo " Target (issue 21): busbw >= 1.0x Open MPI's TCP BTL from 1 MiB"
}

# ---------------------------------------------------------------------------------------------
MEM_SIZE=${MEM_SIZE:-256M}
MEM_RANKS=${MEM_RANKS:-4}

part_mem() {
  header "peak resident memory (VmHWM) per rank: $MEM_RANKS-rank float allreduce of $(human "$(SIZES=$MEM_SIZE bytes_list)"), vs its buffers"
  local common=(--op allreduce --sizes "$MEM_SIZE" --reps 1 --min-iters 2 --hwm 1)
  : >"$out/mem.txt"
  retry3 timeout 300 "$BIN" coll --ranks "$MEM_RANKS" "${common[@]}" --timeout 280 --label weft >>"$out/mem.txt" ||
    echo " weft failed"
  if have_mpi; then
    mpirun_coll "$MEM_RANKS" "${common[@]}" --label mpi >>"$out/mem.txt" 2>"$out/mpi.err" ||
      echo " mpi failed (exit $?): $(tail -2 "$out/mpi.err" | tr '\n' ' ')"
    timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$MEM_RANKS" --mca btl self,vader "$MPI_BIN" coll \
      "${common[@]}" --label mpi-plain >>"$out/mem.txt" 2>"$out/mpi.err" ||
      echo " mpi-plain failed (exit $?): $(tail -2 "$out/mpi.err" | tr '\n' ' ')"
  else
    echo " (no Open MPI baseline)"
  fi
  if have_gloo; then
    timeout 900 "$GLOO_BIN" coll --ranks "$MEM_RANKS" "${common[@]}" --algos default,ring,hd --timeout 280 \
      --label gloo >>"$out/mem.txt" 2>"$out/gloo.err" || echo " gloo failed (exit $?): $(tail -2 "$out/gloo.err" | tr '\n' ' ')"
  else
    echo " (no Gloo baseline)"
  fi
  echo " each rank: malloc'd send and receive buffers touched once, 2 warm-up calls (Gloo 3) and 2 timed ones, then"
  echo " VmHWM from /proc/self/status (binary, libraries and every shared-memory page the rank touched included);"
  echo " buffers = sendbuf + recvbuf of one rank; MPI: tuned malloc as in coll, mpi-plain: without it; Gloo: as in"
  echo " coll (gloo = gloo::allreduce, ring and HD in place but still given both buffers: the same 2 x size malloc'd)"
  echo
  local fmtline=" %-10s %10s %10s %10s %10s %10s %11s %6s %-8s %s\n"
  # shellcheck disable=SC2059
  printf "$fmtline" impl "rank0 MiB" "rank1 MiB" "rank2 MiB" "rank3 MiB" "max MiB" "buffers MiB" ratio target ""
  local impl
  for impl in weft mpi mpi-plain gloo gloo-ring gloo-hd; do
    grep -q "impl=$impl " "$out/mem.txt" || continue
    local row
    row=$(awk -v want="$impl" '/^RESULT test=hwm / {
        delete f
        for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        if (f["impl"] != want) next
        hwm[f["rank"]] = f["hwm_kib"] / 1024; buf = f["buffers_kib"] / 1024
        if (f["hwm_kib"] / 1024 > max) max = f["hwm_kib"] / 1024
      }
      END { for (r = 0; r < 4; r++) printf "%s ", (r in hwm) ? sprintf("%.1f", hwm[r]) : "-"
        printf "%.1f %.0f %.2f\n", max, buf, max / buf }' "$out/mem.txt")
    local r0 r1 r2 r3 mx bf rt tgt="" ok=""
    read -r r0 r1 r2 r3 mx bf rt <<<"$row"
    [ "$impl" = weft ] && tgt="<= 2.00" && ok=$(verdict "$rt" "<=" 2.0)
    # shellcheck disable=SC2059
    printf "$fmtline" "$impl" "$r0" "$r1" "$r2" "$r3" "$mx" "$bf" "$rt" "$tgt" "$ok"
  done
  echo " ratio: max over ranks of VmHWM / buffers; target (issue 21): weft <= 2x its buffers"
}

# ---------------------------------------------------------------------------------------------
# floor: what NCCL's ring schedule allows an 8-byte allreduce here. weft_bench_hop passes a token
# around N processes with weft's Waiter; NCCL's ring allreduce of one chunk is 2(N-1) such hops.
part_floor() {
  header "8-byte allreduce: the floor of NCCL's ring (2(N-1) hops) vs weft and Open MPI (btl self,vader)"
  local hop=$BUILD/bench/weft_bench_hop
  if [ ! -x "$hop" ]; then echo " no $hop: cmake --build $BUILD --target weft_bench_hop"; return; fi
  : >"$out/floor.txt"
  local n
  for n in 2 4; do
    timeout 120 "$hop" --ranks $n --reps "$COLL_REPS" >>"$out/floor.txt" 2>"$out/floor.err" || echo " hop $n ranks failed"
    retry3 timeout 120 "$BIN" coll --op allreduce --ranks $n --sizes 8 --reps "$COLL_REPS" --timeout 100 \
      --label weft >>"$out/floor.txt" || echo " weft allreduce $n ranks failed"
    if have_mpi; then
      mpirun_coll $n --op allreduce --sizes 8 --reps "$COLL_REPS" --label mpi >>"$out/floor.txt" 2>"$out/mpi.err" ||
        echo " mpi allreduce $n ranks failed: $(tail -2 "$out/mpi.err" | tr '\n' ' ')"
    fi
  done
  med() { awk -v t="$1" -v n="$2" -v k="$3" -v impl="$4" '/^RESULT / {
      delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      if (f["test"] == t && f["ranks"] == n && (impl == "" || f["impl"] == impl)) v[++c] = f[k] + 0 }
    END { if (!c) { print "-"; exit } for (i = 2; i <= c; i++) { x = v[i]; j = i - 1; while (j >= 1 && v[j] > x) { v[j + 1] = v[j]; j-- } v[j + 1] = x }
      printf "%.3f\n", (c % 2) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2 }' "$out/floor.txt"; }
  echo " medians of $COLL_REPS reps; hop: one token pass between processes sharing a cache line;"
  echo " floor = 2(N-1) hops; ratio = MPI / x (issue 21's target for weft: >= 0.83)"
  echo
  printf " %5s  %8s  %9s  %8s  %8s  %11s  %10s\n" ranks "hop us" "floor us" "weft us" "MPI us" "MPI/floor" "MPI/weft"
  for n in 2 4; do
    local h fl w m
    h=$(med hop $n us_per_hop "")
    fl=$(med hop $n ring_allreduce_floor_us "")
    w=$(med coll $n us weft)
    m=$(med coll $n us mpi)
    printf " %5s  %8s  %9s  %8s  %8s  %11s  %10s\n" $n "$h" "$fl" "$w" "$m" "$(ratio "$m" "$fl")" "$(ratio "$m" "$w")"
  done
}

# ---------------------------------------------------------------------------------------------
# algo: small allreduces by algorithm. weft (its cost model's pick: recursive doubling for small
# buffers on CPU endpoints), weft with WEFT_HOST_ALGO=nccl (NCCL's ring, as before issue 31), the
# weft of BASE_BUILD (main's build, when given) and Open MPI, each run ROUNDS times alternating.
part_algo() {
  local sizes=${ALGO_SIZES:-8,1K,4K,16K,64K}
  local base=${BASE_BUILD:+$BASE_BUILD/bench/weft_bench_comm}
  local tool=$BUILD/tools/weft/weft
  header "small allreduce by algorithm: weft (model's pick), ring (WEFT_HOST_ALGO=nccl), recursive doubling (=doubling), main, Open MPI"
  : >"$out/algo.txt"
  local n r
  for n in 2 4; do
    for ((r = 0; r < ROUNDS; r++)); do
      retry3 timeout 120 "$BIN" coll --op allreduce --ranks $n --sizes "$sizes" --reps "$COLL_REPS" --timeout 100 \
        --label weft >>"$out/algo.txt" || echo " weft allreduce $n ranks failed"
      WEFT_HOST_ALGO=nccl retry3 timeout 120 "$BIN" coll --op allreduce --ranks $n --sizes "$sizes" --reps "$COLL_REPS" \
        --timeout 100 --label ring >>"$out/algo.txt" || echo " weft ring allreduce $n ranks failed"
      WEFT_HOST_ALGO=doubling retry3 timeout 120 "$BIN" coll --op allreduce --ranks $n --sizes "$sizes" --reps "$COLL_REPS" \
        --timeout 100 --label dbl >>"$out/algo.txt" || echo " weft doubling allreduce $n ranks failed"
      if [ -n "$base" ] && [ -x "$base" ]; then
        LD_LIBRARY_PATH="$BASE_BUILD/core/api${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" retry3 timeout 120 "$base" coll --op allreduce --ranks $n --sizes "$sizes" --reps "$COLL_REPS" --timeout 100 \
          --label main >>"$out/algo.txt" || echo " main allreduce $n ranks failed"
      fi
      if have_mpi; then
        mpirun_coll $n --op allreduce --sizes "$sizes" --reps "$COLL_REPS" --label mpi >>"$out/algo.txt" 2>"$out/mpi.err" ||
          echo " mpi allreduce $n ranks failed: $(tail -2 "$out/mpi.err" | tr '\n' ' ')"
      fi
    done
  done
  med() { awk -v n="$1" -v b="$2" -v impl="$3" '/^RESULT / {
      delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      if (f["test"] == "coll" && f["ranks"] == n && f["bytes"] == b && f["impl"] == impl) v[++c] = f["us"] + 0 }
    END { if (!c) { print "-"; exit } for (i = 2; i <= c; i++) { x = v[i]; j = i - 1; while (j >= 1 && v[j] > x) { v[j + 1] = v[j]; j-- } v[j + 1] = x }
      printf "%.3f\n", (c % 2) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2 }' "$out/algo.txt"; }
  echo " medians of ROUNDS x COLL_REPS reps ($ROUNDS x $COLL_REPS), us per allreduce; ratio = MPI / x."
  echo " pick: the model's choice (weft tune --cpu, the communicator's rule); best: the faster of ring and dbl;"
  echo " pick/best: the picked algorithm's time over the best's (target <= 1.10; a miss is a bug in the model)"
  echo
  printf " %5s  %8s  %8s  %8s  %8s  %8s  %8s  %9s  %9s  %-6s %-5s %9s\n" ranks bytes "weft us" "ring us" "dbl us" "main us" \
    "MPI us" "MPI/weft" "MPI/ring" pick best pick/best
  local b w g d m o pk bst pr
  for n in 2 4; do
    for b in $(awk '/^RESULT / && /impl=weft/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        if (f["ranks"] == '"$n"') print f["bytes"] }' "$out/algo.txt" | sort -n -u); do
      w=$(med $n "$b" weft)
      g=$(med $n "$b" ring)
      d=$(med $n "$b" dbl)
      m=$(med $n "$b" main)
      o=$(med $n "$b" mpi)
      pk=$("$tool" tune --cpu --ranks $n --coll allreduce --sizes "$b" --format json 2>/dev/null |
        sed -n 's/.*"algo":"\([A-Za-z]*\)".*/\1/p')
      case $pk in RecursiveDoubling) pk=dbl ;; Ring) pk=ring ;; "") pk=- ;; esac
      bst=$(awk -v g="$g" -v d="$d" 'BEGIN { if (g == "-" || d == "-") print "-"; else print (d + 0 < g + 0) ? "dbl" : "ring" }')
      pr=$(awk -v g="$g" -v d="$d" -v p="$pk" 'BEGIN { if (g == "-" || d == "-" || p == "-") { print "-"; exit }
        t = (p == "dbl") ? d : g; b = (d + 0 < g + 0) ? d : g; printf "%.2f", t / b }')
      printf " %5s  %8s  %8s  %8s  %8s  %8s  %8s  %9s  %9s  %-6s %-5s %9s\n" $n "$b" "$w" "$g" "$d" "$m" "$o" \
        "$(ratio "$o" "$w")" "$(ratio "$o" "$g")" "$pk" "$bst" "$pr"
    done
  done
}

for p in "${parts[@]}"; do
  case $p in
    init) part_init ;;
    shm) part_shm ;;
    net) part_net ;;
    coll) part_coll ;;
    netcoll) part_netcoll ;;
    mem) part_mem ;;
    floor) part_floor ;;
    algo) part_algo ;;
    *) echo "unknown part: $p (init, shm, net, coll, netcoll, mem, floor, algo)" >&2; exit 2 ;;
  esac
done
