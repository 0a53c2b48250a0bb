// The CUDA driver as the face sees it, loaded with dlopen (libweft and its faces never link
// CUDA). The face's part is small: tell GPU memory (which goes to weft's device path with the
// caller's stream) apart from host memory, order a host-buffer call after the work already on its
// stream, and give ncclMemAlloc memory that both a GPU and the host can reach.
#pragma once

#include <cstddef>
#include <string>

namespace weft::nccl {

class CudaDriver {
 public:
  // The process's driver if libcuda.so.1 loads, cuInit succeeds and at least one GPU is
  // present; otherwise nullptr (every buffer is then host memory and streams are not used).
  // WEFT_NCCL_CUDA=0 forces nullptr.
  static const CudaDriver* get();

  // True when `ptr` is GPU memory the host cannot read directly.
  bool isDeviceMemory(const void* ptr) const;
  // Waits for the work queued on `stream` (a cudaStream_t; NULL is the legacy default stream).
  // Returns "" or the driver's error.
  std::string synchronize(void* stream) const;
  // Page-locked host memory mapped into every GPU's address space, zeroed; "" or the error.
  std::string allocMapped(void** ptr, size_t bytes) const;
  // True if `ptr` came from allocMapped (then it is freed).
  bool freeMapped(void* ptr) const;
  // The device of the calling thread's current context, or -1.
  int currentDevice() const;

  struct Api;
  explicit CudaDriver(const Api* api) : api_(api) {}

 private:
  const Api* api_;
};

}  // namespace weft::nccl
