#include "core/device/cuda_api.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::device {
namespace {

// The directory libweft was loaded from ("" if unknown), with a trailing slash.
std::string ownDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaApi), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// dlopen of the first name that loads; *tried lists each failure.
void* openFirst(std::initializer_list<std::string> names, std::string* tried) {
  for (const std::string& n : names) {
    if (n.empty()) continue;
    if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    *tried += strprintf("%s%s", tried->empty() ? "" : "; ", e != nullptr ? e : n.c_str());
  }
  return nullptr;
}

template <class F>
bool bind(void* lib, const char* name, F** out, std::string* missing) {
  *out = reinterpret_cast<F*>(dlsym(lib, name));
  if (*out == nullptr) *missing += strprintf("%s%s", missing->empty() ? "" : ", ", name);
  return *out != nullptr;
}

Result<std::unique_ptr<CudaApi>> load(bool force, bool* noDriver) {
  *noDriver = false;
  auto api = std::make_unique<CudaApi>();
  void* rt = nullptr;
  void* kernels = nullptr;
  std::string tried;
  const char* emu = std::getenv("WEFT_CUDA_EMULATION");
  if (emu != nullptr && *emu != '\0' && std::strcmp(emu, "0") != 0) {
    const std::string lib = "libweft_emu_cudart.so";
    rt = std::strcmp(emu, "1") == 0 ? openFirst({ownDirectory() + lib, lib}, &tried) : openFirst({emu}, &tried);
    if (rt == nullptr) return systemError("WEFT_CUDA_EMULATION: cannot load the emulated CUDA runtime: " + tried);
    kernels = rt;
    api->emulated = true;
    Dl_info info{};
    api->provider = "the CUDA emulation";
    if (dladdr(dlsym(rt, "cudaMalloc"), &info) != 0 && info.dli_fname != nullptr)
      api->provider += std::string(" (") + info.dli_fname + ")";
  } else {
    // A process holding GPU buffers has the driver loaded; one without never starts CUDA here.
    if (!force) {
      void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
      *noDriver = driver == nullptr;
      if (driver != nullptr) dlclose(driver);
    }
    if (*noDriver)
      return systemError("no CUDA driver (libcuda.so.1) is loaded in this process");
    rt = openFirst({"libcudart.so.13", "libcudart.so.12", "libcudart.so"}, &tried);
    if (rt == nullptr) return systemError("cannot load the CUDA runtime: " + tried);
    const char* path = std::getenv("WEFT_CUDA_KERNELS");
    std::string kt;
    kernels = path != nullptr && *path != '\0'
                  ? openFirst({path}, &kt)
                  : openFirst({ownDirectory() + "libweft_cuda_kernels.so", "libweft_cuda_kernels.so"}, &kt);
    if (kernels == nullptr)
      return systemError("cannot load weft's CUDA kernels (built where nvcc was found; WEFT_CUDA_KERNELS names the "
                         "library): " + kt);
    api->provider = "the CUDA runtime";
  }
  std::string missing;
  bind(rt, "cudaGetDeviceCount", &api->getDeviceCount, &missing);
  bind(rt, "cudaGetDevice", &api->getDevice, &missing);
  bind(rt, "cudaSetDevice", &api->setDevice, &missing);
  bind(rt, "cudaPointerGetAttributes", &api->pointerGetAttributes, &missing);
  bind(rt, "cudaMalloc", &api->malloc, &missing);
  bind(rt, "cudaFree", &api->free, &missing);
  bind(rt, "cudaMemset", &api->memset, &missing);
  bind(rt, "cudaDeviceSynchronize", &api->deviceSynchronize, &missing);
  bind(rt, "cudaHostAlloc", &api->hostAlloc, &missing);
  bind(rt, "cudaHostGetDevicePointer", &api->hostGetDevicePointer, &missing);
  bind(rt, "cudaFreeHost", &api->freeHost, &missing);
  bind(rt, "cudaHostRegister", &api->hostRegister, &missing);
  bind(rt, "cudaHostUnregister", &api->hostUnregister, &missing);
  bind(rt, "cudaMemcpyAsync", &api->memcpyAsync, &missing);
  bind(rt, "cudaIpcGetMemHandle", &api->ipcGetMemHandle, &missing);
  bind(rt, "cudaIpcOpenMemHandle", &api->ipcOpenMemHandle, &missing);
  bind(rt, "cudaIpcCloseMemHandle", &api->ipcCloseMemHandle, &missing);
  bind(rt, "cudaEventCreateWithFlags", &api->eventCreateWithFlags, &missing);
  bind(rt, "cudaEventRecord", &api->eventRecord, &missing);
  bind(rt, "cudaEventQuery", &api->eventQuery, &missing);
  bind(rt, "cudaEventSynchronize", &api->eventSynchronize, &missing);
  bind(rt, "cudaEventDestroy", &api->eventDestroy, &missing);
  bind(rt, "cudaStreamWaitEvent", &api->streamWaitEvent, &missing);
  bind(rt, "cudaGetErrorString", &api->getErrorString, &missing);
  bind(kernels, "weftDeviceLaunchColl", &api->launchColl, &missing);
  if (!missing.empty()) return systemError(api->provider + " lacks " + missing);
  int n = 0;
  int rc = api->getDeviceCount(&n);
  if (rc != kCudaSuccess || n == 0)
    return systemError(strprintf("%s finds no GPU (cudaGetDeviceCount: %s)", api->provider.c_str(),
                                 rc != kCudaSuccess ? api->getErrorString(rc) : "0 devices"));
  WEFT_INFO(log::kInit, "GPU buffers through %s: %d device(s)", api->provider.c_str(), n);
  return api;
}

}  // namespace

const CudaApi* cudaApi(bool force, std::string* why) {
  static std::mutex mu;
  static std::unique_ptr<CudaApi> api;
  static bool tried = false, triedForced = false, noDriver = false;
  static std::chrono::steady_clock::time_point lastTry;
  static std::string whyNot;
  std::lock_guard<std::mutex> lock(mu);
  if (api) return api.get();
  // A program may start CUDA after its first host-buffer call: where the driver was missing, look
  // again, at most once a millisecond (this is on the path of every host collective).
  const auto now = std::chrono::steady_clock::now();
  const bool again = noDriver && now - lastTry > std::chrono::milliseconds(1);
  if (!tried || again || (force && !triedForced)) {
    tried = true;
    triedForced = triedForced || force;
    lastTry = now;
    Result<std::unique_ptr<CudaApi>> r = load(force, &noDriver);
    if (r.isOk()) {
      api = std::move(*r);
      return api.get();
    }
    whyNot = r.status().message();
  }
  if (why != nullptr) *why = whyNot;
  return nullptr;
}

Status cudaError(const CudaApi& api, const char* what, int rc) {
  return Status(Code::kUnhandledCudaError,
                strprintf("%s failed: %s (%d, %s)", what, api.getErrorString(rc), rc, api.provider.c_str()));
}

}  // namespace weft::device
