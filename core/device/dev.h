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

// LL lines: {data1, flag1, data2, flag2}. One 16-byte volatile store and load on the GPU, so a
// reader sees a line whole or not at all; on the host the data halves are plain and the flags
// release-stored after them and acquire-loaded before them.
WEFT_DEV void storeLine(uint32_t* line, uint64_t data, uint32_t flag) {
#if defined(__CUDACC__)
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(line), "r"(static_cast<uint32_t>(data)),
               "r"(flag), "r"(static_cast<uint32_t>(data >> 32)), "r"(flag)
               : "memory");
#else
  line[0] = static_cast<uint32_t>(data);
  line[2] = static_cast<uint32_t>(data >> 32);
  std::atomic_ref<uint32_t>(line[1]).store(flag, std::memory_order_release);
  std::atomic_ref<uint32_t>(line[3]).store(flag, std::memory_order_release);
#endif
}

// True, with the line's 8 data bytes, when both of its flags are `flag`.
WEFT_DEV bool loadLine(const uint32_t* line, uint32_t flag, uint64_t* data) {
#if defined(__CUDACC__)
  uint32_t d1, f1, d2, f2;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(d1), "=r"(f1), "=r"(d2), "=r"(f2)
               : "l"(line)
               : "memory");
  if (f1 != flag || f2 != flag) return false;
  *data = d1 | static_cast<uint64_t>(d2) << 32;
  return true;
#else
  uint32_t* l = const_cast<uint32_t*>(line);
  if (std::atomic_ref<uint32_t>(l[1]).load(std::memory_order_acquire) != flag) return false;
  if (std::atomic_ref<uint32_t>(l[3]).load(std::memory_order_acquire) != flag) return false;
  *data = l[0] | static_cast<uint64_t>(l[2]) << 32;
  return true;
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
