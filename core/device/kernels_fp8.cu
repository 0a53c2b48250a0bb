// collKernel for E4M3Arith and E5M2Arith.
#include "core/device/kernel_launch.cuh"

namespace weft::device {
using namespace coll::arith;
template cudaError_t launchColl<E4M3Arith>(const DevWork&, unsigned, unsigned, cudaStream_t);
template cudaError_t launchColl<E5M2Arith>(const DevWork&, unsigned, unsigned, cudaStream_t);
}  // namespace weft::device
