// What weft's kernel source needs from its compiler, in one place: CUDA itself under nvcc, the
// host stand-in (emu/cuda_emu.h) under g++. The kernels use only these, the CUDA names the
// stand-in defines (threadIdx, blockIdx, blockDim, gridDim, __syncthreads, fences) and plain
// loads and stores of memory no other thread touches during the same step.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define WEFT_DEV __device__ __forceinline__
#define WEFT_HOST_DEV __host__ __device__ __forceinline__
#else
#include <atomic>
#include <thread>

#include "core/device/emu/cuda_emu.h"
#define WEFT_DEV inline
#define WEFT_HOST_DEV inline
#endif

namespace weft::device {

// A word another thread or GPU writes: a flag, a credit counter. Volatile on the GPU (NCCL's
// ld.volatile.global: no stale L1), an acquire load on the host.
WEFT_DEV uint64_t loadVolatile(const uint64_t* p) {
#if defined(__CUDACC__)
  return *reinterpret_cast<const volatile uint64_t*>(p);
#else
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(p)).load(std::memory_order_acquire);
#endif
}

// Publishes `v` after everything this thread wrote before (and, through the barrier before it,
// what the block wrote): a system-scope fence then a volatile store on the GPU (NCCL's
// fence.acq_rel.sys + st.relaxed.sys of tail), a release store on the host.
WEFT_DEV void storeRelease(uint64_t* p, uint64_t v) {
#if defined(__CUDACC__)
  __threadfence_system();
  *reinterpret_cast<volatile uint64_t*>(p) = v;
#else
  std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_release);
#endif
}

// A credit returned without a fence (NCCL's head: the reads it frees are done at the barrier).
// On the host a release store all the same, so the sender's next write to the slot is ordered
// after the reads (ThreadSanitizer sees it).
WEFT_DEV void storeVolatile(uint64_t* p, uint64_t v) {
#if defined(__CUDACC__)
  *reinterpret_cast<volatile uint64_t*>(p) = v;
#else
  std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_release);
#endif
}

// An element of a slot another GPU filled: volatile on the GPU, so that a slot used eight steps
// ago is not read from a stale L1 line (NCCL loads FIFO data with ld.volatile); a plain load on the
// host, where the acquire of the credit and the lane's barrier order it.
template <class T>
WEFT_DEV T loadSlot(const T* p) {
#if defined(__CUDACC__)
  return *reinterpret_cast<const volatile T*>(p);
#else
  return *p;
#endif
}

// Between two polls of a flag: nothing on the GPU (the next poll goes to memory anyway), a yield
// on the host, where far more emulated threads than cores may spin at once.
WEFT_DEV void spinPause() {
#if !defined(__CUDACC__)
  std::this_thread::yield();
#endif
}

}  // namespace weft::device
