# shellcheck shell=bash
# Two "hosts" for the benchmark scripts (sourced, bash): network namespaces joined by a veth pair,
# wb0 (SUBNET.1/24) in the first and wb1 (SUBNET.2/24) in the second, loopback up in both.
#
# bench_netns_init NAME: sets $out (a fresh /tmp/weft-bench-NAME.XXXXXX), $ns0 and $ns1 (names
# with this shell's pid), and on exit deletes the namespaces and $out (unless KEEP is set).
bench_netns_init() {
  out=$(mktemp -d "/tmp/weft-bench-$1.XXXXXX")
  ns0=weft-$1-0-$$
  ns1=weft-$1-1-$$
  trap bench_netns_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_netns_cleanup() {
  ip netns del "$ns0" 2>/dev/null
  ip netns del "$ns1" 2>/dev/null
  if [ -n "${KEEP:-}" ]; then echo "raw output kept in $out"; else rm -rf "$out"; fi
}

# A veth's carrier comes up asynchronously after `link set up`: wait for LOWER_UP (10 s at most).
bench_netns_wait_carrier() {
  local _
  for _ in $(seq 500); do
    ip -n "$1" -o link show "$2" | grep -q LOWER_UP && return 0
    sleep 0.02
  done
  echo "$2 in $1: no carrier 10 s after it was set up" >&2
  return 1
}

# bench_netns_make SUBNET: creates $ns0 and $ns1 and the veth pair between them (root only).
bench_netns_make() {
  local a="wa$$" b="wz$$"
  ip netns add "$ns0" && ip netns add "$ns1" &&
    ip link add "$a" type veth peer name "$b" &&
    ip link set "$a" netns "$ns0" && ip link set "$b" netns "$ns1" &&
    ip -n "$ns0" link set "$a" name wb0 && ip -n "$ns1" link set "$b" name wb1 &&
    ip -n "$ns0" addr add "$1.1/24" dev wb0 && ip -n "$ns1" addr add "$1.2/24" dev wb1 &&
    ip -n "$ns0" link set lo up && ip -n "$ns1" link set lo up &&
    ip -n "$ns0" link set wb0 up && ip -n "$ns1" link set wb1 up &&
    bench_netns_wait_carrier "$ns0" wb0 && bench_netns_wait_carrier "$ns1" wb1
}
