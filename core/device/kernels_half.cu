// collKernel for NarrowArith<HalfCodec> and NarrowArith<Bf16Codec>.
#include "core/device/kernel_launch.cuh"

namespace weft::device {
using namespace coll::arith;
template cudaError_t launchColl<NarrowArith<HalfCodec>>(const DevWork&, unsigned, unsigned, cudaStream_t);
template cudaError_t launchColl<NarrowArith<Bf16Codec>>(const DevWork&, unsigned, unsigned, cudaStream_t);
}  // namespace weft::device
