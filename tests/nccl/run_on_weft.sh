#!/usr/bin/env bash
# run_on_weft.sh WEFT_NCCL_LIBDIR PROGRAM ARGS...: runs a program linked against NVIDIA's
# libnccl.so.2 with weft's first on LD_LIBRARY_PATH, and checks that weft's library served it
# (its "NCCL version" line says so) and that the program passed.
set -uo pipefail
libdir=$1
shift
out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" NCCL_DEBUG=VERSION "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if ! grep -q "NCCL version 2.28.9+weft.*not NVIDIA's" <<<"$out"; then
  echo "FAIL: the program did not run on weft's libnccl.so.2 (no weft version line)" >&2
  exit 1
fi
if grep -q "NCCL version 2.28.9+cuda" <<<"$out"; then
  echo "FAIL: NVIDIA's libnccl.so.2 was loaded" >&2
  exit 1
fi
exit $rc
