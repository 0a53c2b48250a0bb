#!/usr/bin/env bash
# `weft topo show -o FILE.svg` and `weft search --picture FILE.svg` write SVG through Graphviz's
# dot; without dot (WEFT_DOT naming nothing) they write the DOT text beside it and say how to
# render it; usage errors leave no file.
set -euo pipefail
WEFT=$1
TOPO=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$WEFT" topo show "$TOPO" --format dot > "$out/topo.dot"
head -1 "$out/topo.dot" | grep -q '^graph topology {$' || fail "--format dot does not print DOT"
WEFT_DOT="$out/none" "$WEFT" topo show "$TOPO" -o "$out/nodot.svg" 2> "$out/nodot.err"
[ -e "$out/nodot.svg" ] && fail "an SVG was written without dot"
cmp -s "$out/topo.dot" "$out/nodot.dot" || fail "without dot, the DOT text differs from --format dot"
grep -q "render it with \`dot -Tsvg $out/nodot.dot -o $out/nodot.svg\`" "$out/nodot.err" || fail "no render hint: $(cat "$out/nodot.err")"
"$WEFT" topo show "$TOPO" -o "$out/bad.svg" --format text 2>/dev/null && fail "-o with --format text succeeded"
"$WEFT" search "$TOPO" --nodes 9 --picture "$out/nine.svg" > /dev/null 2>&1 && fail "--picture accepted 9 nodes"
[ -e "$out/nine.svg" ] && fail "a refused picture was written"

# Without dot the rest is reported skipped (exit 77, ctest's SKIP_RETURN_CODE), never passed.
if ! command -v dot > /dev/null; then
  echo "SKIP: Graphviz's dot is not installed: SVG output not checked"
  exit 77
fi
"$WEFT" topo show "$TOPO" -o "$out/topo.svg"
grep -q '<svg' "$out/topo.svg" || fail "topo show -o .svg wrote no SVG"
[ "$(grep -c 'class="node"' "$out/topo.svg")" -eq 35 ] || fail "topo SVG: expected 35 nodes"
"$WEFT" search "$TOPO" --nodes 2 -q --picture "$out/ch.svg" --picture-channels 0-1 > "$out/summary.txt"
grep -q '^ranks 16 ' "$out/summary.txt" || fail "--picture changed the summary"
grep -q '<svg' "$out/ch.svg" || fail "--picture wrote no SVG"
# two channels, a ring and a tree panel each
[ "$(grep -c 'class="cluster"' "$out/ch.svg")" -eq $((4 * 3)) ] || fail "expected 4 panels of 2 nodes"
echo "PASS"
