// collKernel for IntArith<int32_t> and IntArith<uint32_t>.
#include "core/device/kernel_launch.cuh"

namespace weft::device {
using namespace coll::arith;
template cudaError_t launchColl<IntArith<int32_t>>(const DevWork&, unsigned, unsigned, cudaStream_t);
template cudaError_t launchColl<IntArith<uint32_t>>(const DevWork&, unsigned, unsigned, cudaStream_t);
}  // namespace weft::device
