#include "core/device/cuda_api.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstddef>
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

// How many shared objects this process has loaded so far (the loader's own count, dlpi_adds): a
// host-buffer call checks it instead of asking the loader for libcuda.so.1, which costs a map and
// unmap of ld.so.cache (a TLB shootdown on every CPU) per call.
unsigned long long objectsLoaded() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* data) -> int {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
          *static_cast<unsigned long long*>(data) = info->dlpi_adds;
        return 1;  // the counts are the same in every entry: the first one is enough
      },
      &adds);
  return adds;
}

}  // namespace

const CudaApi* cudaApi(bool force, std::string* why) {
  static std::mutex mu;
  static std::unique_ptr<CudaApi> api;
  static std::atomic<const CudaApi*> loaded{nullptr};
  static bool tried = false, triedForced = false, noDriver = false;
  // The loader's count when the driver was last found missing; ~0: look again at the next call.
  static std::atomic<unsigned long long> loadedAtTry{~0ull};
  static std::atomic<bool> settled{false};  // failed with the driver present: no later look without `force`
  static std::string whyNot;
  // Every host-buffer collective passes here: the answer once CUDA is loaded, and "still no
  // driver" while no object was loaded since the last look, take no lock.
  if (const CudaApi* a = loaded.load(std::memory_order_acquire)) return a;
  if (!force && why == nullptr &&
      (settled.load(std::memory_order_acquire) || loadedAtTry.load(std::memory_order_acquire) == objectsLoaded()))
    return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (api) return api.get();
  // A program may start CUDA after its first host-buffer call (the runtime loads the driver):
  // where the driver was missing, look again once the process has loaded something new.
  const unsigned long long adds = objectsLoaded();
  const bool again = noDriver && adds != loadedAtTry.load();
  if (!tried || again || (force && !triedForced)) {
    tried = true;
    triedForced = triedForced || force;
    Result<std::unique_ptr<CudaApi>> r = load(force, &noDriver);
    if (r.isOk()) {
      api = std::move(*r);
      loaded.store(api.get(), std::memory_order_release);
      return api.get();
    }
    whyNot = r.status().message();
    // Loading may itself have loaded objects (and failed): count from after this try.
    loadedAtTry.store(noDriver ? objectsLoaded() : ~0ull);
    settled.store(!noDriver);
  }
  if (why != nullptr) *why = whyNot;
  return nullptr;
}

Status cudaError(const CudaApi& api, const char* what, int rc) {
  return Status(Code::kUnhandledCudaError,
                strprintf("%s failed: %s (%d, %s)", what, api.getErrorString(rc), rc, api.provider.c_str()));
}

}  // namespace weft::device
