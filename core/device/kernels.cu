// weftDeviceLaunchColl: the datatype's kernel (kernels_*.cu: one __global__ per element type, each
// dispatching the reduction once at entry, so the build stays small; NCCL generates one per
// collective, type, operator, algorithm and protocol).
#include <cuda_runtime.h>

#include "core/coll/reduce_arith.h"
#include "core/device/launch.h"
#include "core/device/work.h"

namespace weft::device {
template <class A>
cudaError_t launchColl(const DevWork& w, unsigned nChannels, unsigned nThreads, cudaStream_t stream);
}  // namespace weft::device

extern "C" int weftDeviceLaunchColl(const weft::device::DevWork* w, unsigned nChannels, unsigned nThreads,
                                    void* stream) {
  cudaError_t rc = cudaErrorInvalidValue;
  weft::coll::arith::visitArith(static_cast<weft_datatype_t>(w->type), [&]<class A>() {
    rc = weft::device::launchColl<A>(*w, nChannels, nThreads, static_cast<cudaStream_t>(stream));
  });
  return static_cast<int>(rc);
}
