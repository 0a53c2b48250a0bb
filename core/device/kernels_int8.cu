// collKernel for IntArith<int8_t> and IntArith<uint8_t>.
#include "core/device/kernel_launch.cuh"

namespace weft::device {
using namespace coll::arith;
template cudaError_t launchColl<IntArith<int8_t>>(const DevWork&, unsigned, unsigned, cudaStream_t);
template cudaError_t launchColl<IntArith<uint8_t>>(const DevWork&, unsigned, unsigned, cudaStream_t);
}  // namespace weft::device
