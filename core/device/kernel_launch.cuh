// The __global__ kernel for one element arithmetic and its launch, defined here and instantiated
// in kernels_*.cu, a few types per file so the build compiles them in parallel.
#pragma once

#include <cuda_runtime.h>

#include "core/coll/reduce_arith.h"
#include "core/device/kernel.h"

namespace weft::device {

template <class A>
__global__ void __launch_bounds__(512, 1) collKernel(DevWork w) {
  collKernelBody<A>(w);
}

// Enqueues collKernel<A>; the cudaError_t of the launch.
template <class A>
cudaError_t launchColl(const DevWork& w, unsigned nChannels, unsigned nThreads, cudaStream_t stream) {
  collKernel<A><<<nChannels, nThreads, 0, stream>>>(w);
  return cudaGetLastError();
}

}  // namespace weft::device
