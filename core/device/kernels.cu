// The collective kernel for the GPU: one __global__ per element type (12), each dispatching the
// reduction once at entry, so the build stays small (NCCL generates one per collective, type,
// operator, algorithm and protocol).
#include <cuda_runtime.h>

#include "core/coll/reduce_arith.h"
#include "core/device/kernel.h"
#include "core/device/launch.h"

namespace weft::device {
namespace {

template <class A>
__global__ void __launch_bounds__(512, 1) collKernel(DevWork w) {
  collKernelBody<A>(w);
}

}  // namespace
}  // namespace weft::device

extern "C" int weftDeviceLaunchColl(const weft::device::DevWork* w, unsigned nChannels, unsigned nThreads,
                                    void* stream) {
  using namespace weft::device;
  cudaError_t rc = cudaErrorInvalidValue;
  const DevWork work = *w;
  weft::coll::arith::visitArith(static_cast<weft_datatype_t>(work.type), [&]<class A>() {
    collKernel<A><<<nChannels, nThreads, 0, static_cast<cudaStream_t>(stream)>>>(work);
    rc = cudaGetLastError();
  });
  return static_cast<int>(rc);
}
