// collKernel for IntArith<int64_t> and IntArith<uint64_t>.
#include "core/device/kernel_launch.cuh"

namespace weft::device {
using namespace coll::arith;
template cudaError_t launchColl<IntArith<int64_t>>(const DevWork&, unsigned, unsigned, cudaStream_t);
template cudaError_t launchColl<IntArith<uint64_t>>(const DevWork&, unsigned, unsigned, cudaStream_t);
}  // namespace weft::device
