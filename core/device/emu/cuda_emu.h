// A stand-in for the CUDA execution model, so that g++ compiles weft's kernel source unchanged
// and runs it on host threads: one host thread per CUDA thread (a thread spinning on a flag can
// never starve the thread that sets it, as it could with threads multiplexed onto one), a
// std::barrier per block for __syncthreads and per named barrier, fences as C++ fences, and
// "device memory" that is ordinary host memory the ranks share. The kernels reach memory that
// other threads write through dev.h's loadVolatile/storeRelease, which are C++ atomics here
// (acquire/release, so ThreadSanitizer checks the protocols' ordering) and volatile PTX accesses
// under nvcc. Host builds only: nvcc compiles the same source for the GPU.
#pragma once

#if defined(__CUDACC__)
#error "cuda_emu.h stands in for CUDA on the host; nvcc compiles the kernels for the GPU"
#endif

#include <array>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

namespace weft::device::emu {

// What the threads of one block share: __syncthreads' barrier and the 16 named barriers (bar.sync
// id, n), each made by its first user with the thread count every user passes.
class Block {
 public:
  explicit Block(unsigned nthreads) : all_(static_cast<std::ptrdiff_t>(nthreads)) {}
  void sync() { all_.arrive_and_wait(); }
  void sync(unsigned id, unsigned nthreads);

 private:
  std::barrier<> all_;
  std::mutex mu_;
  std::array<std::unique_ptr<std::barrier<>>, 16> named_{};
};

// The calling host thread's CUDA coordinates (set by launch for the threads it starts).
struct ThreadContext {
  uint3 thread;
  uint3 blk;
  dim3 blockSize;
  dim3 gridSize;
  Block* block = nullptr;
};
ThreadContext& context();

// Runs body() on grid.x * block.x new host threads (y and z must be 1), each with its coordinates
// set, and returns when all have returned: a kernel launch followed by a synchronize.
void launch(dim3 grid, dim3 block, const std::function<void()>& body);

}  // namespace weft::device::emu

#define threadIdx (::weft::device::emu::context().thread)
#define blockIdx (::weft::device::emu::context().blk)
#define blockDim (::weft::device::emu::context().blockSize)
#define gridDim (::weft::device::emu::context().gridSize)

inline void __syncthreads() { ::weft::device::emu::context().block->sync(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
