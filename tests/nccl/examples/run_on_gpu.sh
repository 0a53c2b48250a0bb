#!/usr/bin/env bash
# run_on_gpu.sh PROGRAM [LAUNCHER...]: runs one of the device-buffer examples where a GPU is
# present (exit 77, skipped, otherwise). Until weft's core moves GPU memory (core/device), weft's
# libnccl refuses cudaMalloc'd buffers with a clear error: that refusal is what this test expects
# today, and Success once core/device is in.
set -uo pipefail
prog=$1
shift
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L 2> /dev/null | grep -q '^GPU'; then
  echo "SKIP: no GPU on this machine" >&2
  exit 77
fi
out=$("$@" "$prog" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -eq 0 ] && grep -q Success <<<"$out"; then exit 0; fi
if grep -q "is GPU memory: this weft build moves host memory only" <<<"$out"; then
  echo "EXPECTED: weft's libnccl refused GPU memory (core/device not built yet)"
  exit 0
fi
exit 1
