#!/usr/bin/env bash
# `weft search` output never depends on timing: two runs, and a run under valgrind (whose
# instrumented code runs tens of times slower), print identical bytes.
set -euo pipefail
WEFT=$1
TOPO=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$WEFT" search "$TOPO" --nodes 2 > "$out/a.txt"
"$WEFT" search "$TOPO" --nodes 2 > "$out/b.txt"
cmp "$out/a.txt" "$out/b.txt"
if command -v valgrind >/dev/null; then
  valgrind --quiet --error-exitcode=3 "$WEFT" search "$TOPO" --nodes 2 > "$out/v.txt"
  cmp "$out/a.txt" "$out/v.txt"
  echo "identical: 2 native runs and 1 valgrind run ($(wc -l < "$out/a.txt") lines)"
else
  echo "valgrind not installed: compared 2 native runs only ($(wc -l < "$out/a.txt") lines)"
fi
