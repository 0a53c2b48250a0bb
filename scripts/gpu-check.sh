#!/usr/bin/env bash
# Everything that needs a GPU, in one run on a machine with one (meant to take under 8 minutes):
#   1. the collective kernel on the GPU (tests/gpu, ctest label `gpu`): every collective, ring and
#      tree, every datatype, 2-4 ranks sharing the GPU, bit for bit against the host path; and the
#      communicator's device path (gpu_comm_device_test: weft_allreduce & co. on cudaMalloc'd
#      buffers and a stream, rank processes sharing the GPU through CUDA IPC, libweft loading
#      NVIDIA's runtime and libweft_cuda_kernels.so);
#   2. NVIDIA's libnccl loading weft's net and tuner plugins (ctest -R NcclLoadsWeft);
#   3. nccl-tests against weft's libnccl.so.2, when NCCL_TESTS_DIR names a built nccl-tests.
# Usage: bash scripts/gpu-check.sh [build-dir]   (default: build-gpu; configured and built here
# when it has no GPU test yet, which needs the project's build dependencies on the machine).
# Prints one line per step (PASS, FAIL or SKIP with the reason) and exits non-zero on a FAIL.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
declare -a SUMMARY=()
FAILED=0
step() {  # step NAME COMMAND...
  local name=$1; shift
  echo "=== $name: $*"
  local start=$SECONDS
  if "$@"; then SUMMARY+=("PASS  $name ($((SECONDS - start)) s)")
  else SUMMARY+=("FAIL  $name ($((SECONDS - start)) s)"); FAILED=1; fi
}

command -v nvidia-smi > /dev/null && nvidia-smi -L || echo "nvidia-smi: not found"
if [ ! -x "$BUILD/tests/gpu/gpu_coll_test" ]; then
  step "configure + build" bash -c "cmake -G Ninja -S . -B '$BUILD' -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DWEFT_WITH_CUDA=ON -DWEFT_BUILD_BENCH=OFF > /dev/null && cmake --build '$BUILD' -j \$(nproc)"
fi
# ctest where a skipped test counts as a failure: on a GPU machine nothing may skip.
strict_ctest() {
  local log
  log=$(mktemp)
  (cd "$BUILD" && ctest "$@" --output-on-failure) | tee "$log"
  local rc=${PIPESTATUS[0]}
  if grep -q '(Skipped)' "$log"; then echo "a test skipped: on a GPU machine every one must run"; rc=1; fi
  rm -f "$log"
  return "$rc"
}
step "kernels on the GPU (ctest -L gpu)" strict_ctest -L gpu --timeout 300
step "NCCL loads weft's plugins" strict_ctest -R NcclLoadsWeft --timeout 120
if [ -n "${NCCL_TESTS_DIR:-}" ] && [ -x "$NCCL_TESTS_DIR/build/all_reduce_perf" ]; then
  step "nccl-tests all_reduce_perf on weft's libnccl" env LD_LIBRARY_PATH="$PWD/$BUILD/nccl/lib:${LD_LIBRARY_PATH:-}" \
    timeout 120 "$NCCL_TESTS_DIR/build/all_reduce_perf" -b 8 -e 64M -f 4 -g 1
else
  SUMMARY+=("SKIP  nccl-tests (set NCCL_TESTS_DIR to a built nccl-tests: README, 'nccl-tests')")
fi
echo "=== summary"
printf '%s\n' "${SUMMARY[@]}"
exit $FAILED
