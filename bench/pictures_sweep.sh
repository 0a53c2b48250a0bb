#!/usr/bin/env bash
# `weft search --picture` on every corpus topology weft (and NCCL) can load, at 1, 2, 4 and 8
# nodes, every channel and both graphs: the whole picture of each, rendered to SVG. Prints one
# row per case (panels drawn, boxes, wall and CPU seconds of the whole command, SVG size, result)
# and a summary; a case that fails or runs past LIMIT seconds (weft's WEFT_DOT_TIMEOUT) is a row
# that says so. With BASE (another weft, e.g. one built from an older commit) each case runs
# with it too, in the same minute, stopped after BASE_LIMIT seconds.
#
#   bench/pictures_sweep.sh [WEFT] [CORPUS] [BASE]
#   LIMIT=10 NODES="2 4" bench/pictures_sweep.sh build/tools/weft/weft ../shared/corpus
set -uo pipefail

weft=${1:-build/tools/weft/weft}
corpus=${2:-${WEFT_CORPUS_DIR:-../shared/corpus}}
base=${3:-}
limit=${LIMIT:-10}
base_limit=${BASE_LIMIT:-60}
nodes_list=${NODES:-1 2 4 8}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# One run: prints "rc wall cpu bytes". CPU is the command's and its children's (Graphviz).
run() {
  local prog=$1 topo=$2 nodes=$3 secs=$4 svg=$out/p.svg
  rm -f "$svg"
  local t0 t1 rc
  t0=$(date +%s.%N)
  WEFT_DOT_TIMEOUT="$secs" timeout $((secs + 30)) /usr/bin/time -o "$out/time" -f '%U %S' \
    "$prog" search "$topo" --nodes "$nodes" -q --picture "$svg" > /dev/null 2> "$out/err"
  rc=$?
  t1=$(date +%s.%N)
  [ -s "$svg" ] || rc=1
  awk -v r="$rc" -v a="$t0" -v b="$t1" -v c="$(tail -1 "$out/time" 2>/dev/null)" \
    -v s="$(stat -c %s "$svg" 2>/dev/null || echo 0)" \
    'BEGIN { split(c, u, " "); printf "%d %.2f %.2f %d\n", r, b - a, u[1] + u[2], s }'
}

printf '%s, Graphviz %s, limit %s s per picture; host load %s\n\n' "$("$weft" --version 2>/dev/null || echo weft)" \
  "$(dot -V 2>&1 | sed -E 's/.*version ([^ ]+).*/\1/')" "$limit" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-56s %5s %6s %7s %7s %9s  %s' topology nodes panels "wall s" "cpu s" "SVG KB" result
[ -n "$base" ] && printf '   %8s %s' "base s" "base result"
printf '\n'
total=0 failed=0 worst=0
while IFS= read -r topo; do
  "$weft" search "$topo" -q > /dev/null 2>&1 || continue  # not a system file NCCL can build
  rel=${topo#"$corpus"/topologies/}
  for nodes in $nodes_list; do
    channels=$("$weft" search "$topo" --nodes "$nodes" -q | sed -nE 's/.*channels ([0-9]+) .*/\1/p')
    read -r rc wall cpu bytes < <(run "$weft" "$topo" "$nodes" "$limit")
    total=$((total + 1))
    result=ok
    if [ "$rc" != 0 ]; then result="FAILED: $(grep -m1 -o 'weft search.*' "$out/err" | cut -c1-80)"; failed=$((failed + 1)); fi
    worst=$(awk -v a="$worst" -v b="$wall" 'BEGIN { print (b > a) ? b : a }')
    printf '%-56s %5d %6d %7.2f %7.2f %9.1f  %s' "$rel" "$nodes" $((2 * channels)) "$wall" "$cpu" \
      "$(awk -v b="$bytes" 'BEGIN { print b / 1024 }')" "$result"
    if [ -n "$base" ]; then
      read -r brc bwall _ _ < <(run "$base" "$topo" "$nodes" "$base_limit")
      printf '   %8.2f %s' "$bwall" "$([ "$brc" = 0 ] && echo ok || echo "failed or past ${base_limit} s")"
    fi
    printf '\n'
  done
done < <(find "$corpus/topologies" -name '*.xml' | sort)
printf '\n%d pictures, %d failed, slowest %.2f s wall\n' "$total" "$failed" "$worst"
[ "$failed" -eq 0 ]
