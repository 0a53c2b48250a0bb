#!/usr/bin/env bash
# libweft.so exports its C ABI (weft_*) and nothing else.
set -euo pipefail
LIB=$1
extra=$(nm -D --defined-only "$LIB" | awk '{print $3}' | grep -v '^weft_' | grep -v '^WEFT_' || true)
if [ -n "$extra" ]; then
  echo "unexpected exported symbols in $LIB:"
  echo "$extra"
  exit 1
fi
echo "$(nm -D --defined-only "$LIB" | awk '{print $3}' | grep -c '^weft_') weft_* symbols, nothing else"
