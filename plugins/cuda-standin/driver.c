/* The driver half of weft's CUDA stand-in, built as libcuda.so.1: a CUDA driver with no GPU.
 * cuInit, the version and entry-point queries and the context queries succeed; every call that
 * needs a device answers CUDA_ERROR_NO_DEVICE. A net plugin that initialises CUDA at init (as
 * aws-ofi-nccl does) therefore starts, finds no GPU features and uses host memory. Only the
 * conformance suite loads it, by path, on a machine without a working driver (cuda_standin.h). */
#include <stddef.h>
#include <string.h>

#include "standin.h"

typedef int CUdevice;
typedef void* CUcontext;
typedef unsigned long long CUdeviceptr;

/* Declared here as they are exported (-Wmissing-prototypes wants a prototype first). */
STANDIN_EXPORT CUresult cuInit(unsigned int flags);
STANDIN_EXPORT CUresult cuDriverGetVersion(int* version);
STANDIN_EXPORT CUresult cuDeviceGetCount(int* count);
STANDIN_EXPORT CUresult cuCtxGetCurrent(CUcontext* ctx);
STANDIN_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx);
STANDIN_EXPORT CUresult cuCtxGetDevice(CUdevice* device);
STANDIN_EXPORT CUresult cuGetErrorString(CUresult error, const char** text);
STANDIN_EXPORT CUresult cuGetErrorName(CUresult error, const char** text);
STANDIN_EXPORT CUresult cuPointerGetAttribute(void* data, int attribute, CUdeviceptr ptr);
STANDIN_EXPORT CUresult cuPointerGetAttributes(unsigned int n, int* attributes, void** data, CUdeviceptr ptr);
STANDIN_EXPORT CUresult cuThreadExchangeStreamCaptureMode(int* mode);
STANDIN_EXPORT CUresult cuGetExportTable(const void** table, const void* id);
STANDIN_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, uint64_t flags);
STANDIN_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, uint64_t flags,
                                            int* symbolStatus);

CUresult cuInit(unsigned int flags) {
  (void)flags;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version) {
  if (version == NULL) return CUDA_ERROR_INVALID_VALUE;
  *version = STANDIN_CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  if (count == NULL) return CUDA_ERROR_INVALID_VALUE;
  *count = 0;
  return CUDA_SUCCESS;
}

/* No context can ever be made, so the current one is always none. */
CUresult cuCtxGetCurrent(CUcontext* ctx) {
  if (ctx == NULL) return CUDA_ERROR_INVALID_VALUE;
  *ctx = NULL;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) { return ctx == NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }

CUresult cuCtxGetDevice(CUdevice* device) {
  (void)device;
  return CUDA_ERROR_INVALID_CONTEXT;
}

static const char* errorName(CUresult e) {
  switch (e) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    default: return NULL;
  }
}

static const char* errorText(CUresult e) {
  switch (e) {
    case CUDA_SUCCESS: return "no error";
    case CUDA_ERROR_INVALID_VALUE: return "invalid argument";
    case CUDA_ERROR_NO_DEVICE: return "no CUDA-capable device is detected (weft's CUDA stand-in has no GPU)";
    case CUDA_ERROR_INVALID_CONTEXT: return "invalid device context";
    case CUDA_ERROR_NOT_FOUND: return "named symbol not found";
    case CUDA_ERROR_NOT_SUPPORTED: return "operation not supported";
    default: return NULL;
  }
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == NULL) return CUDA_ERROR_INVALID_VALUE;
  *text = errorText(error);
  return *text ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char** text) {
  if (text == NULL) return CUDA_ERROR_INVALID_VALUE;
  *text = errorName(error);
  return *text ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Without a GPU no pointer is a CUDA pointer: the single query says so with an error, as the
 * driver does; the multiple query gives the driver's defaults for host memory. */
CUresult cuPointerGetAttribute(void* data, int attribute, CUdeviceptr ptr) {
  (void)data;
  (void)attribute;
  (void)ptr;
  return CUDA_ERROR_INVALID_VALUE;
}

enum {
  kAttrContext = 1,
  kAttrMemoryType = 2,
  kAttrDevicePointer = 3,
  kAttrHostPointer = 4,
  kAttrIsManaged = 8,
  kAttrDeviceOrdinal = 9,
  kAttrIsGpuDirectRdmaCapable = 15,
};

CUresult cuPointerGetAttributes(unsigned int n, int* attributes, void** data, CUdeviceptr ptr) {
  (void)ptr;
  if (n > 0 && (attributes == NULL || data == NULL)) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned int i = 0; i < n; ++i) {
    if (data[i] == NULL) continue;
    switch (attributes[i]) {
      case kAttrContext:
      case kAttrDevicePointer:
      case kAttrHostPointer: *(void**)data[i] = NULL; break;
      case kAttrMemoryType: *(unsigned int*)data[i] = 0; break; /* not CUDA memory */
      case kAttrIsManaged:
      case kAttrIsGpuDirectRdmaCapable: *(int*)data[i] = 0; break;
      case kAttrDeviceOrdinal: *(int*)data[i] = -1; break;
      default: return CUDA_ERROR_NOT_SUPPORTED;
    }
  }
  return CUDA_SUCCESS;
}

/* The calling thread's stream capture mode: nothing is ever captured, but the exchange keeps
 * its contract (the caller gets back what it set). */
static _Thread_local int gCaptureMode = 0;

CUresult cuThreadExchangeStreamCaptureMode(int* mode) {
  if (mode == NULL) return CUDA_ERROR_INVALID_VALUE;
  int previous = gCaptureMode;
  gCaptureMode = *mode;
  *mode = previous;
  return CUDA_SUCCESS;
}

/* cudart's private tables: a real runtime linked statically cannot run on the stand-in. */
CUresult cuGetExportTable(const void** table, const void* id) {
  (void)id;
  if (table != NULL) *table = NULL;
  return CUDA_ERROR_NOT_SUPPORTED;
}

/* Everything that needs a GPU: memory, streams, events, devices, primary contexts. One
 * definition serves every name below; callers pass their own arguments, which it ignores. */
static CUresult noDevice(void) { return CUDA_ERROR_NO_DEVICE; }

#define STANDIN_NO_DEVICE(name) \
  STANDIN_EXPORT CUresult name(void); \
  CUresult name(void) { return noDevice(); }
STANDIN_NO_DEVICE(cuDeviceGet)
STANDIN_NO_DEVICE(cuDeviceGetAttribute)
STANDIN_NO_DEVICE(cuDeviceGetName)
STANDIN_NO_DEVICE(cuDeviceGetPCIBusId)
STANDIN_NO_DEVICE(cuDeviceGetUuid)
STANDIN_NO_DEVICE(cuDeviceGetUuid_v2)
STANDIN_NO_DEVICE(cuDeviceTotalMem)
STANDIN_NO_DEVICE(cuDeviceTotalMem_v2)
STANDIN_NO_DEVICE(cuDevicePrimaryCtxRetain)
STANDIN_NO_DEVICE(cuDevicePrimaryCtxRelease)
STANDIN_NO_DEVICE(cuDevicePrimaryCtxRelease_v2)
STANDIN_NO_DEVICE(cuCtxCreate)
STANDIN_NO_DEVICE(cuCtxCreate_v2)
STANDIN_NO_DEVICE(cuCtxSynchronize)
STANDIN_NO_DEVICE(cuMemAlloc)
STANDIN_NO_DEVICE(cuMemAlloc_v2)
STANDIN_NO_DEVICE(cuMemFree)
STANDIN_NO_DEVICE(cuMemFree_v2)
STANDIN_NO_DEVICE(cuMemAllocHost)
STANDIN_NO_DEVICE(cuMemAllocHost_v2)
STANDIN_NO_DEVICE(cuMemFreeHost)
STANDIN_NO_DEVICE(cuMemHostAlloc)
STANDIN_NO_DEVICE(cuMemHostRegister)
STANDIN_NO_DEVICE(cuMemHostRegister_v2)
STANDIN_NO_DEVICE(cuMemHostUnregister)
STANDIN_NO_DEVICE(cuMemHostGetDevicePointer)
STANDIN_NO_DEVICE(cuMemHostGetDevicePointer_v2)
STANDIN_NO_DEVICE(cuMemGetAddressRange)
STANDIN_NO_DEVICE(cuMemGetAddressRange_v2)
STANDIN_NO_DEVICE(cuMemsetD8)
STANDIN_NO_DEVICE(cuMemsetD8_v2)
STANDIN_NO_DEVICE(cuMemcpy)
STANDIN_NO_DEVICE(cuMemcpyAsync)
STANDIN_NO_DEVICE(cuMemcpyHtoD)
STANDIN_NO_DEVICE(cuMemcpyHtoD_v2)
STANDIN_NO_DEVICE(cuMemcpyHtoDAsync)
STANDIN_NO_DEVICE(cuMemcpyHtoDAsync_v2)
STANDIN_NO_DEVICE(cuMemcpyDtoH)
STANDIN_NO_DEVICE(cuMemcpyDtoH_v2)
STANDIN_NO_DEVICE(cuMemcpyDtoHAsync)
STANDIN_NO_DEVICE(cuMemcpyDtoHAsync_v2)
STANDIN_NO_DEVICE(cuMemCreate)
STANDIN_NO_DEVICE(cuMemRelease)
STANDIN_NO_DEVICE(cuMemAddressReserve)
STANDIN_NO_DEVICE(cuMemAddressFree)
STANDIN_NO_DEVICE(cuMemMap)
STANDIN_NO_DEVICE(cuMemUnmap)
STANDIN_NO_DEVICE(cuMemSetAccess)
STANDIN_NO_DEVICE(cuMemGetAllocationGranularity)
STANDIN_NO_DEVICE(cuMemRetainAllocationHandle)
STANDIN_NO_DEVICE(cuMemGetAllocationPropertiesFromHandle)
STANDIN_NO_DEVICE(cuMemGetHandleForAddressRange)
STANDIN_NO_DEVICE(cuFlushGPUDirectRDMAWrites)
STANDIN_NO_DEVICE(cuStreamCreate)
STANDIN_NO_DEVICE(cuStreamDestroy)
STANDIN_NO_DEVICE(cuStreamDestroy_v2)
STANDIN_NO_DEVICE(cuStreamSynchronize)
STANDIN_NO_DEVICE(cuEventCreate)
STANDIN_NO_DEVICE(cuEventDestroy)
STANDIN_NO_DEVICE(cuEventDestroy_v2)
STANDIN_NO_DEVICE(cuEventRecord)
STANDIN_NO_DEVICE(cuEventSynchronize)
STANDIN_NO_DEVICE(cuIpcGetMemHandle)
STANDIN_NO_DEVICE(cuIpcOpenMemHandle)
STANDIN_NO_DEVICE(cuIpcOpenMemHandle_v2)
STANDIN_NO_DEVICE(cuIpcCloseMemHandle)

typedef void (*AnyFn)(void); /* the generic function pointer type: casts to it are exempt from -Wcast-function-type */
struct Entry {
  const char* name;
  AnyFn fn;
};

/* The entry points handed out by name. cuGetProcAddress takes base names ("cuMemAlloc"). */
static const struct Entry kEntries[] = {
    {"cuInit", (AnyFn)cuInit},
    {"cuDriverGetVersion", (AnyFn)cuDriverGetVersion},
    {"cuDeviceGetCount", (AnyFn)cuDeviceGetCount},
    {"cuCtxGetCurrent", (AnyFn)cuCtxGetCurrent},
    {"cuCtxSetCurrent", (AnyFn)cuCtxSetCurrent},
    {"cuCtxGetDevice", (AnyFn)cuCtxGetDevice},
    {"cuGetErrorString", (AnyFn)cuGetErrorString},
    {"cuGetErrorName", (AnyFn)cuGetErrorName},
    {"cuPointerGetAttribute", (AnyFn)cuPointerGetAttribute},
    {"cuPointerGetAttributes", (AnyFn)cuPointerGetAttributes},
    {"cuThreadExchangeStreamCaptureMode", (AnyFn)cuThreadExchangeStreamCaptureMode},
    {"cuGetExportTable", (AnyFn)cuGetExportTable},
    {"cuGetProcAddress", (AnyFn)cuGetProcAddress_v2},
};

/* Any other driver name resolves to "no device": every driver call returns a CUresult, and
 * without a GPU none of them can do anything, so a plugin that resolves more entry points than
 * listed here still starts and learns at the call that there is no device. */
static CUresult lookup(const char* symbol, void** pfn, int* status) {
  if (symbol == NULL || pfn == NULL) return CUDA_ERROR_INVALID_VALUE;
  *pfn = NULL;
  for (size_t i = 0; i < sizeof(kEntries) / sizeof(kEntries[0]); ++i) {
    if (strcmp(symbol, kEntries[i].name) == 0) *pfn = (void*)kEntries[i].fn;
  }
  if (*pfn == NULL && strncmp(symbol, "cu", 2) == 0) *pfn = (void*)(AnyFn)noDevice;
  if (status != NULL) *status = *pfn ? STANDIN_ENTRY_POINT_SUCCESS : STANDIN_ENTRY_POINT_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, uint64_t flags) {
  (void)cudaVersion;
  (void)flags;
  return lookup(symbol, pfn, NULL);
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, uint64_t flags, int* symbolStatus) {
  (void)cudaVersion;
  (void)flags;
  return lookup(symbol, pfn, symbolStatus);
}
