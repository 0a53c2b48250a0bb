#!/usr/bin/env bash
# run_on_gpu.sh PROGRAM [LAUNCHER...]: runs one of the device-buffer examples where a GPU is
# present (exit 77, skipped, otherwise). weft's libnccl passes cudaMalloc'd buffers of AllReduce
# to weft's device path (core/device) with the caller's stream: the example must print Success.
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
exit 1
