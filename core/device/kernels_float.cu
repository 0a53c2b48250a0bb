// collKernel for FloatArith<float> and FloatArith<double>.
#include "core/device/kernel_launch.cuh"

namespace weft::device {
using namespace coll::arith;
template cudaError_t launchColl<FloatArith<float>>(const DevWork&, unsigned, unsigned, cudaStream_t);
template cudaError_t launchColl<FloatArith<double>>(const DevWork&, unsigned, unsigned, cudaStream_t);
}  // namespace weft::device
