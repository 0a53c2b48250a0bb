#!/usr/bin/env bash
# compare_symbols.sh WEFT_LIBNCCL NVIDIA_LIBNCCL: weft's libnccl.so.2 exports exactly the names
# NVIDIA's 2.28.9 exports, each bound the same way (W: weak, T: strong), nothing else, and has
# NVIDIA's SONAME. Exit 77 (skipped) without NVIDIA's library.
set -euo pipefail
weft=$1
nvidia=${2:-}
soname=$(objdump -p "$weft" | awk '/SONAME/ {print $2}')
if [ "$soname" != "libnccl.so.2" ]; then
  echo "FAIL: SONAME is '$soname', expected libnccl.so.2" >&2
  exit 1
fi
if [ -z "$nvidia" ] || [ ! -e "$nvidia" ]; then
  echo "SKIP: NVIDIA's libnccl.so.2 not found: the symbol set cannot be compared" >&2
  exit 77
fi
list() { nm -D --defined-only "$1" | awk '{print $3, $2}' | sort; }
diff_out=$(diff <(list "$nvidia") <(list "$weft") || true)
if [ -n "$diff_out" ]; then
  echo "FAIL: exported symbols differ (< NVIDIA's, > weft's):" >&2
  echo "$diff_out" >&2
  exit 1
fi
echo "OK: $(list "$weft" | wc -l) symbols, the same names and bindings as $nvidia"
