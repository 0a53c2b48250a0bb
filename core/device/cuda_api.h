// The CUDA runtime as libweft reaches it: loaded with dlopen at run time, never linked, so the same
// libweft runs on machines without CUDA. The few functions the device path calls, declared here
// with the runtime's C signatures (error codes and enums as int, handles as void*), and the
// collective kernels' launch (core/device/launch.h's weftDeviceLaunchColl) from weft's kernel
// library. Two providers:
//  - CUDA: libcudart.so.13 (12, or the unversioned name), and libweft_cuda_kernels.so, the
//    nvcc-built kernels, found next to libweft (or at $WEFT_CUDA_KERNELS). Loaded only in a
//    process that already holds the CUDA driver (libcuda.so.1) or passes a stream: a host-only
//    program never starts CUDA.
//  - The emulation (WEFT_CUDA_EMULATION=1, or a path): libweft_emu_cudart.so, the same functions
//    over host memory shared between processes, streams run by host threads, and the kernel's
//    real source on host threads (core/device/emu/emu_cudart.cc). What CI runs without a GPU.
#pragma once

#include <cstddef>
#include <string>

#include "core/base/status.h"
#include "core/device/work.h"

namespace weft::device {

inline constexpr int kCudaSuccess = 0;
inline constexpr int kCudaIpcHandleSize = 64;          // CUDA_IPC_HANDLE_SIZE
inline constexpr int kCudaMemoryTypeDevice = 2;        // cudaMemoryTypeDevice
inline constexpr int kCudaMemoryTypeManaged = 3;       // cudaMemoryTypeManaged
inline constexpr unsigned kCudaHostAllocMapped = 0x02;  // cudaHostAllocMapped
inline constexpr unsigned kCudaHostRegisterPortable = 0x01;
inline constexpr unsigned kCudaHostRegisterMapped = 0x02;
inline constexpr unsigned kCudaEventDisableTiming = 0x02;
inline constexpr unsigned kCudaIpcMemLazyEnablePeerAccess = 0x01;
inline constexpr int kCudaMemcpyHostToDevice = 1;

// cudaPointerAttributes as CUDA 11+ lays it out.
struct CudaPointerAttributes {
  int type;
  int device;
  void* devicePointer;
  void* hostPointer;
  long reserved[8];
};
struct CudaIpcHandle {
  char bytes[kCudaIpcHandleSize];
};

struct CudaApi {
  std::string provider;  // what was loaded, for log lines and errors
  bool emulated = false;
  int (*getDeviceCount)(int*);
  int (*getDevice)(int*);
  int (*setDevice)(int);
  int (*pointerGetAttributes)(CudaPointerAttributes*, const void*);
  int (*malloc)(void**, size_t);
  int (*free)(void*);
  int (*memset)(void*, int, size_t);
  int (*deviceSynchronize)();
  int (*hostAlloc)(void**, size_t, unsigned);
  int (*hostGetDevicePointer)(void**, void*, unsigned);
  int (*freeHost)(void*);
  int (*hostRegister)(void*, size_t, unsigned);
  int (*hostUnregister)(void*);
  int (*memcpyAsync)(void*, const void*, size_t, int, void*);
  int (*ipcGetMemHandle)(CudaIpcHandle*, void*);
  int (*ipcOpenMemHandle)(void**, CudaIpcHandle, unsigned);
  int (*ipcCloseMemHandle)(void*);
  int (*eventCreateWithFlags)(void**, unsigned);
  int (*eventRecord)(void*, void*);
  int (*eventQuery)(void*);
  int (*eventSynchronize)(void*);
  int (*eventDestroy)(void*);
  int (*streamWaitEvent)(void*, void*, unsigned);
  const char* (*getErrorString)(int);
  int (*launchColl)(const DevWork*, unsigned, unsigned, void*);  // weftDeviceLaunchColl
};

// The CUDA runtime of this process, loaded at the first call: null where there is none to load
// (no CUDA driver in the process and `force` false, or no library), with *why saying what is
// missing. Later calls return the first call's answer, except that a call with `force` (a
// stream was given) loads CUDA where an earlier call without it did not.
const CudaApi* cudaApi(bool force, std::string* why);

// "cudaMalloc failed: <error string> (<code>)".
Status cudaError(const CudaApi& api, const char* what, int rc);

}  // namespace weft::device
