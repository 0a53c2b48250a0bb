// Test plugins for the conformance suite, built over weft's socket plugin (loaded by path): its
// connections move the bytes, and this shim changes what the suite sees at the ABI. Modes:
//   SHIM_MODE_NCCL_MINIMAL  a plugin that does what NCCL 2.28 needs and nothing more, with the
//       habits of aws-ofi-nccl that weft's suite once failed: isend/irecv refuse a NULL memory
//       handle, sends and receives match in posting order only (every tag becomes 0 below),
//       speed is 0, maxRecvs 1, init logs a harmless WARN, and irecv does not check n.
//   SHIM_MODE_CUDA_INIT  a plugin that initialises CUDA at init the way aws-ofi-nccl built with
//       --enable-cudart-dynamic does (dlopen libcudart.so, cudaRuntimeGetVersion, driver entry
//       points through cudaGetDriverEntryPoint[ByVersion], cuDriverGetVersion, a GPU Direct RDMA
//       probe) and fails init without a driver; regMr asks the driver what the memory is.
//       Otherwise it passes everything through.
#include <dlfcn.h>

#include <cstdint>
#include <cstring>

#include "weft/net.h"

namespace {

constexpr int kModeNcclMinimal = 1;
constexpr int kModeCudaInit = 2;
constexpr int kMode = SHIM_MODE;

const weft_net_v11_t* gInner = nullptr;
weft_debug_logger_t gLog = nullptr;

#define SHIM_WARN(...) \
  if (gLog) gLog(WEFT_LOG_WARN, WEFT_LOG_ALL, __FILE__, __LINE__, __VA_ARGS__)
#define SHIM_INFO(...) \
  if (gLog) gLog(WEFT_LOG_INFO, WEFT_LOG_NET, __func__, __LINE__, __VA_ARGS__)

// The socket plugin, once per process; never unloaded (the shim keeps its table).
bool loadInner() {
  if (gInner != nullptr) return true;
  void* lib = dlopen(SHIM_TARGET, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return false;
  gInner = static_cast<const weft_net_v11_t*>(dlsym(lib, "ncclNetPlugin_v11"));
  return gInner != nullptr;
}

// ---- CUDA, the way aws-ofi-nccl's nccl_net_ofi_gpu_init reaches it ----------------------------

using CudaRuntimeGetVersionFn = int (*)(int*);
using CudaGetDriverEntryPointFn = int (*)(const char*, void**, unsigned long long, int*);
using CudaGetDriverEntryPointByVersionFn = int (*)(const char*, void**, unsigned int, unsigned long long, int*);
using CuDriverGetVersionFn = int (*)(int*);
using CuCtxGetDeviceFn = int (*)(int*);
using CuDeviceGetAttributeFn = int (*)(int*, int, int);
using CuPointerGetAttributesFn = int (*)(unsigned, int*, void**, unsigned long long);

struct Cuda {
  CudaGetDriverEntryPointFn entryPoint = nullptr;
  CudaGetDriverEntryPointByVersionFn entryPointByVersion = nullptr;
  CuDriverGetVersionFn driverGetVersion = nullptr;
  CuCtxGetDeviceFn ctxGetDevice = nullptr;
  CuDeviceGetAttributeFn deviceGetAttribute = nullptr;
  CuPointerGetAttributesFn pointerGetAttributes = nullptr;
} gCuda;

// cudaGetDriverEntryPointByVersion first (CUDA 13), the unversioned one as the fallback.
bool resolve(const char* symbol, unsigned int version, void** fn) {
  int err = -1, status = -1;
  *fn = nullptr;
  if (gCuda.entryPointByVersion != nullptr) err = gCuda.entryPointByVersion(symbol, fn, version, 0, &status);
  if (*fn == nullptr && gCuda.entryPoint != nullptr) err = gCuda.entryPoint(symbol, fn, 0, &status);
  if (*fn != nullptr && err == 0) return true;
  SHIM_WARN("Failed to resolve CUDA function %s (last error: %d, result: %d)", symbol, err, status);
  return false;
}

bool initCuda() {
  void* rt = dlopen("libcudart.so", RTLD_NOW);
  if (rt == nullptr) {
    SHIM_WARN("Failed to find CUDA Runtime library: %s", dlerror());
    return false;
  }
  auto runtimeVersion = reinterpret_cast<CudaRuntimeGetVersionFn>(dlsym(rt, "cudaRuntimeGetVersion"));
  int version = 0;
  if (runtimeVersion == nullptr || runtimeVersion(&version) != 0) {
    SHIM_WARN("Failed to query CUDA runtime version.");
    return false;
  }
  if (version >= 13000) {
    gCuda.entryPointByVersion = reinterpret_cast<CudaGetDriverEntryPointByVersionFn>(dlsym(rt, "cudaGetDriverEntryPointByVersion"));
  } else {
    gCuda.entryPoint = reinterpret_cast<CudaGetDriverEntryPointFn>(dlsym(rt, "cudaGetDriverEntryPoint"));
  }
  // The entry points aws-ofi-nccl v1.21.1 resolves at init (a subset; all must resolve).
  const char* more[] = {"cuGetErrorString", "cuCtxSetCurrent", "cuCtxGetCurrent", "cuMemAlloc", "cuMemFree",
                        "cuMemHostRegister", "cuMemGetHandleForAddressRange", "cuFlushGPUDirectRDMAWrites",
                        "cuThreadExchangeStreamCaptureMode", "cuMemCreate", "cuMemMap"};
  void* fn = nullptr;
  if (!resolve("cuDriverGetVersion", 2020, &fn)) return false;
  gCuda.driverGetVersion = reinterpret_cast<CuDriverGetVersionFn>(fn);
  if (!resolve("cuCtxGetDevice", 2000, &fn)) return false;
  gCuda.ctxGetDevice = reinterpret_cast<CuCtxGetDeviceFn>(fn);
  if (!resolve("cuDeviceGetAttribute", 2000, &fn)) return false;
  gCuda.deviceGetAttribute = reinterpret_cast<CuDeviceGetAttributeFn>(fn);
  if (!resolve("cuPointerGetAttributes", 7000, &fn)) return false;
  gCuda.pointerGetAttributes = reinterpret_cast<CuPointerGetAttributesFn>(fn);
  for (const char* name : more)
    if (!resolve(name, 3020, &fn)) return false;
  int driver = 0;
  if (gCuda.driverGetVersion(&driver) != 0) {
    SHIM_WARN("Failed to query CUDA driver version.");
    return false;
  }
  // GPU Direct RDMA needs a current context on a device that supports it.
  int dev = -1, gdr = 0;
  bool haveGdr = gCuda.ctxGetDevice(&dev) == 0 && gCuda.deviceGetAttribute(&gdr, 116, dev) == 0 && gdr != 0;
  SHIM_INFO("Using CUDA driver version %d with runtime %d; GPU Direct RDMA %s", driver, version,
            haveGdr ? "supported" : "not supported: host memory only");
  return true;
}

// True when the driver says `data` is device memory (CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
// CU_MEMORYTYPE_DEVICE = 2), which this host-memory plugin cannot register.
bool isDeviceMemory(void* data) {
  unsigned int type = 0;
  int attr = 2;
  void* out[1] = {&type};
  return gCuda.pointerGetAttributes(1, &attr, out, reinterpret_cast<unsigned long long>(data)) == 0 && type == 2;
}

// ---- the table ------------------------------------------------------------------------------

// A registration of ours around the inner plugin's (which may be NULL: sockets register nothing),
// so that a NULL handle at isend/irecv is the caller's, never a registered buffer's.
struct Registration {
  void* inner;
};

weft_result_t shimInit(void** ctx, uint64_t commId, weft_net_comm_config_v11_t* config, weft_debug_logger_t log,
                       weft_profiler_callback_t prof) {
  gLog = log;
  if (!loadInner()) {
    SHIM_WARN("shim: cannot load %s: %s", SHIM_TARGET, dlerror());
    return weftSystemError;
  }
  if (kMode == kModeCudaInit && !initCuda()) return weftSystemError;
  if (kMode == kModeNcclMinimal) SHIM_WARN("NET/Shim : RDMA protocol probe failed (not supported here), using SENDRECV");
  return gInner->init(ctx, commId, config, log, prof);
}

weft_result_t shimGetProperties(int dev, weft_net_properties_v11_t* props) {
  weft_result_t r = gInner->getProperties(dev, props);
  if (r != weftSuccess || kMode != kModeNcclMinimal) return r;
  props->speed = 0;  // as aws-ofi-nccl reports on libfabric's tcp provider
  props->maxRecvs = 1;
  return r;
}

weft_result_t shimRegMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (kMode == kModeCudaInit && isDeviceMemory(data)) return weftInternalError;
  auto* reg = new Registration{nullptr};
  weft_result_t r = gInner->regMr(comm, data, size, type, &reg->inner);
  if (r != weftSuccess) {
    delete reg;
    return r;
  }
  *mhandle = reg;
  return weftSuccess;
}

weft_result_t shimDeregMr(void* comm, void* mhandle) {
  auto* reg = static_cast<Registration*>(mhandle);
  if (reg == nullptr) return weftInvalidArgument;
  weft_result_t r = gInner->deregMr(comm, reg->inner);
  delete reg;
  return r;
}

weft_result_t shimIsend(void* comm, void* data, size_t size, int tag, void* mhandle, void* phandle, void** request) {
  if (kMode == kModeNcclMinimal && mhandle == nullptr) {
    SHIM_WARN("Invalid argument: NULL pointer detected (isend without a memory handle)");
    return weftInvalidArgument;
  }
  void* inner = mhandle ? static_cast<Registration*>(mhandle)->inner : nullptr;
  return gInner->isend(comm, data, size, kMode == kModeNcclMinimal ? 0 : tag, inner, phandle, request);
}

weft_result_t shimIrecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles, void** phandles,
                        void** request) {
  if (kMode == kModeNcclMinimal) {
    if (n < 1) {  // NCCL never asks for nothing; this plugin does not check
      *request = nullptr;
      return weftSuccess;
    }
    if (mhandles == nullptr || mhandles[0] == nullptr) {
      SHIM_WARN("Invalid argument: NULL pointer detected (irecv without a memory handle)");
      return weftInvalidArgument;
    }
  }
  void* inner[WEFT_NET_MAX_REQUESTS] = {};
  int zeros[WEFT_NET_MAX_REQUESTS] = {};
  for (int i = 0; i < n && i < WEFT_NET_MAX_REQUESTS; ++i)
    inner[i] = mhandles && mhandles[i] ? static_cast<Registration*>(mhandles[i])->inner : nullptr;
  return gInner->irecv(comm, n, data, sizes, kMode == kModeNcclMinimal ? zeros : tags, inner, phandles, request);
}

weft_result_t shimIflush(void* comm, int n, void** data, int* sizes, void** mhandles, void** request) {
  return gInner->iflush(comm, n, data, sizes, mhandles, request);
}

// Everything else goes straight through.
weft_result_t shimDevices(int* ndev) { return gInner->devices(ndev); }
weft_result_t shimListen(void* ctx, int dev, void* handle, void** listenComm) {
  return gInner->listen(ctx, dev, handle, listenComm);
}
weft_result_t shimConnect(void* ctx, int dev, void* handle, void** sendComm, weft_net_device_handle_v11_t** dh) {
  return gInner->connect(ctx, dev, handle, sendComm, dh);
}
weft_result_t shimAccept(void* listenComm, void** recvComm, weft_net_device_handle_v11_t** dh) {
  return gInner->accept(listenComm, recvComm, dh);
}
weft_result_t shimRegMrDmaBuf(void* c, void* d, size_t s, int t, uint64_t o, int fd, void** m) {
  return gInner->regMrDmaBuf(c, d, s, t, o, fd, m);
}
weft_result_t shimTest(void* request, int* done, int* sizes) { return gInner->test(request, done, sizes); }
weft_result_t shimCloseSend(void* c) { return gInner->closeSend(c); }
weft_result_t shimCloseRecv(void* c) { return gInner->closeRecv(c); }
weft_result_t shimCloseListen(void* c) { return gInner->closeListen(c); }
weft_result_t shimGetDeviceMr(void* c, void* m, void** d) { return gInner->getDeviceMr(c, m, d); }
weft_result_t shimIrecvConsumed(void* c, int n, void* r) { return gInner->irecvConsumed(c, n, r); }
weft_result_t shimFinalize(void* ctx) { return gInner->finalize(ctx); }

}  // namespace

extern "C" WEFT_NET_EXPORT const weft_net_v11_t ncclNetPlugin_v11 = {
    .name = SHIM_NAME,
    .init = shimInit,
    .devices = shimDevices,
    .getProperties = shimGetProperties,
    .listen = shimListen,
    .connect = shimConnect,
    .accept = shimAccept,
    .regMr = shimRegMr,
    .regMrDmaBuf = shimRegMrDmaBuf,
    .deregMr = shimDeregMr,
    .isend = shimIsend,
    .irecv = shimIrecv,
    .iflush = shimIflush,
    .test = shimTest,
    .closeSend = shimCloseSend,
    .closeRecv = shimCloseRecv,
    .closeListen = shimCloseListen,
    .getDeviceMr = shimGetDeviceMr,
    .irecvConsumed = shimIrecvConsumed,
    .makeVDevice = nullptr,
    .finalize = shimFinalize,
    .setNetAttr = nullptr,
};
