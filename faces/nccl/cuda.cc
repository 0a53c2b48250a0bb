// libcuda.so.1 through dlopen: the few driver entry points the face needs (stable driver ABI,
// the `_v2` names where the driver has them).
#include "faces/nccl/cuda.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace weft::nccl {

// CUDA driver types and constants (cuda.h), declared here so that the face builds without CUDA.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
constexpr int kPointerAttributeMemoryType = 2;  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr unsigned kMemoryTypeDevice = 2;       // CU_MEMORYTYPE_DEVICE
constexpr unsigned kMemoryTypeArray = 3;        // CU_MEMORYTYPE_ARRAY
constexpr unsigned kHostAllocPortable = 0x01;   // CU_MEMHOSTALLOC_PORTABLE
constexpr unsigned kHostAllocDeviceMap = 0x02;  // CU_MEMHOSTALLOC_DEVICEMAP

struct CudaDriver::Api {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*deviceGetCount)(int*) = nullptr;
  CUresult (*pointerGetAttribute)(void*, int, CUdeviceptr) = nullptr;
  CUresult (*streamSynchronize)(void*) = nullptr;
  CUresult (*memHostAlloc)(void**, size_t, unsigned) = nullptr;
  CUresult (*memFreeHost)(void*) = nullptr;
  CUresult (*memHostGetFlags)(unsigned*, void*) = nullptr;
  CUresult (*ctxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*ctxSetCurrent)(CUcontext) = nullptr;
  CUresult (*ctxGetDevice)(CUdevice*) = nullptr;
  CUresult (*primaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*getErrorString)(CUresult, const char**) = nullptr;
};

namespace {

template <typename F>
bool bind(void* lib, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

const CudaDriver::Api* loadApi() {
  const char* off = std::getenv("WEFT_NCCL_CUDA");
  if (off != nullptr && std::strcmp(off, "0") == 0) return nullptr;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return nullptr;
  static CudaDriver::Api api;
  bool ok = bind(lib, api.init, "cuInit") && bind(lib, api.deviceGetCount, "cuDeviceGetCount") &&
            bind(lib, api.pointerGetAttribute, "cuPointerGetAttribute") &&
            bind(lib, api.streamSynchronize, "cuStreamSynchronize") &&
            bind(lib, api.memHostAlloc, "cuMemHostAlloc") && bind(lib, api.memFreeHost, "cuMemFreeHost") &&
            bind(lib, api.memHostGetFlags, "cuMemHostGetFlags") &&
            bind(lib, api.ctxGetCurrent, "cuCtxGetCurrent") && bind(lib, api.ctxSetCurrent, "cuCtxSetCurrent") &&
            bind(lib, api.ctxGetDevice, "cuCtxGetDevice") &&
            bind(lib, api.primaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
            bind(lib, api.getErrorString, "cuGetErrorString");
  int count = 0;
  // A driver without a GPU (a CI machine, CUDA's stub libcuda) fails cuInit or counts 0.
  if (!ok || api.init(0) != 0 || api.deviceGetCount(&count) != 0 || count < 1) {
    dlclose(lib);
    return nullptr;
  }
  return &api;  // the library stays loaded for the process
}

std::string errorText(const CudaDriver::Api* api, const char* what, CUresult rc) {
  const char* s = nullptr;
  if (api->getErrorString(rc, &s) != 0 || s == nullptr) s = "unknown CUDA error";
  return std::string(what) + " failed: " + s + " (CUresult " + std::to_string(rc) + ")";
}

}  // namespace

const CudaDriver* CudaDriver::get() {
  static const Api* api = loadApi();
  static const CudaDriver driver(api);
  return api != nullptr ? &driver : nullptr;
}

bool CudaDriver::isDeviceMemory(const void* ptr) const {
  unsigned type = 0;
  // Pageable host memory is unknown to the driver: the query fails and the memory is the host's.
  if (api_->pointerGetAttribute(&type, kPointerAttributeMemoryType, reinterpret_cast<uintptr_t>(ptr)) != 0)
    return false;
  return type == kMemoryTypeDevice || type == kMemoryTypeArray;
}

std::string CudaDriver::synchronize(void* stream) const {
  CUresult rc = api_->streamSynchronize(stream);
  return rc == 0 ? std::string() : errorText(api_, "cuStreamSynchronize", rc);
}

std::string CudaDriver::allocMapped(void** ptr, size_t bytes) const {
  // Host allocations need a context: the caller's, else device 0's primary context.
  CUcontext ctx = nullptr;
  if (api_->ctxGetCurrent(&ctx) != 0 || ctx == nullptr) {
    CUresult rc = api_->primaryCtxRetain(&ctx, 0);
    if (rc != 0) return errorText(api_, "cuDevicePrimaryCtxRetain", rc);
    rc = api_->ctxSetCurrent(ctx);
    if (rc != 0) return errorText(api_, "cuCtxSetCurrent", rc);
  }
  CUresult rc = api_->memHostAlloc(ptr, bytes, kHostAllocPortable | kHostAllocDeviceMap);
  if (rc != 0) return errorText(api_, "cuMemHostAlloc", rc);
  std::memset(*ptr, 0, bytes);
  return {};
}

bool CudaDriver::freeMapped(void* ptr) const {
  unsigned flags = 0;
  if (api_->memHostGetFlags(&flags, ptr) != 0) return false;
  return api_->memFreeHost(ptr) == 0;
}

int CudaDriver::currentDevice() const {
  CUdevice dev = -1;
  return api_->ctxGetDevice(&dev) == 0 ? dev : -1;
}

}  // namespace weft::nccl
