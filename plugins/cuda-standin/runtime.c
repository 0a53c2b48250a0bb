/* The runtime half of weft's CUDA stand-in, built as libcudart.so, libcudart.so.12 and
 * libcudart.so.13 (one soname each): the CUDA runtime calls a net plugin makes to reach the
 * driver (aws-ofi-nccl built with --enable-cudart-dynamic dlopens libcudart.so, asks its version
 * and resolves driver entry points through cudaGetDriverEntryPoint[ByVersion]), answered by the
 * driver half next to it. Calls that need a GPU answer cudaErrorNoDevice. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "standin.h"

typedef int cudaError_t;
#define cudaSuccess 0
#define cudaErrorInvalidValue 1
#define cudaErrorNoDevice 100
#define cudaErrorSymbolNotFound 500

struct cudaPointerAttributes {
  int type; /* enum cudaMemoryType: 0 = cudaMemoryTypeUnregistered */
  int device;
  void* devicePointer;
  void* hostPointer;
};

STANDIN_EXPORT cudaError_t cudaRuntimeGetVersion(int* version);
STANDIN_EXPORT cudaError_t cudaDriverGetVersion(int* version);
STANDIN_EXPORT cudaError_t cudaGetDeviceCount(int* count);
STANDIN_EXPORT cudaError_t cudaGetLastError(void);
STANDIN_EXPORT cudaError_t cudaPeekAtLastError(void);
STANDIN_EXPORT const char* cudaGetErrorString(cudaError_t error);
STANDIN_EXPORT const char* cudaGetErrorName(cudaError_t error);
STANDIN_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr);
STANDIN_EXPORT cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                                   int* driverStatus);
STANDIN_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                                            unsigned long long flags, int* driverStatus);

/* The runtime keeps the last error per thread, cleared by cudaGetLastError. */
static _Thread_local cudaError_t gLastError = cudaSuccess;

static cudaError_t fail(cudaError_t e) {
  gLastError = e;
  return e;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == NULL) return fail(cudaErrorInvalidValue);
  *version = STANDIN_CUDA_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == NULL) return fail(cudaErrorInvalidValue);
  *version = STANDIN_CUDA_VERSION;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == NULL) return fail(cudaErrorInvalidValue);
  *count = 0;
  return fail(cudaErrorNoDevice); /* what the runtime says on a machine without a GPU */
}

cudaError_t cudaGetLastError(void) {
  cudaError_t e = gLastError;
  gLastError = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void) { return gLastError; }

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected (weft's CUDA stand-in has no GPU)";
    case cudaErrorSymbolNotFound: return "named symbol not found";
    default: return "unknown error";
  }
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorSymbolNotFound: return "cudaErrorSymbolNotFound";
    default: return "cudaErrorUnknown";
  }
}

/* Host memory, unregistered: what the runtime reports for any pointer when there is no GPU. */
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == NULL) return fail(cudaErrorInvalidValue);
  attributes->type = 0;
  attributes->device = -1;
  attributes->devicePointer = NULL;
  attributes->hostPointer = (void*)ptr;
  return cudaSuccess;
}

/* The driver half, loaded from this library's own folder: the pair is always used together. */
static StandinGetProcAddress driverLookup(void) {
  static StandinGetProcAddress lookup = NULL;
  if (lookup != NULL) return lookup;
  Dl_info self;
  if (dladdr((void*)&driverLookup, &self) == 0 || self.dli_fname == NULL) return NULL;
  char path[4096];
  const char* slash = strrchr(self.dli_fname, '/');
  int dirLen = slash ? (int)(slash - self.dli_fname) : 1;
  const char* dir = slash ? self.dli_fname : ".";
  if (snprintf(path, sizeof(path), "%.*s/libcuda.so.1", dirLen, dir) >= (int)sizeof(path)) return NULL;
  void* driver = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (driver == NULL) return NULL;
  lookup = (StandinGetProcAddress)dlsym(driver, "cuGetProcAddress_v2");
  return lookup;
}

static cudaError_t entryPoint(const char* symbol, void** funcPtr, int cudaVersion, unsigned long long flags,
                              int* driverStatus) {
  if (symbol == NULL || funcPtr == NULL) return fail(cudaErrorInvalidValue);
  StandinGetProcAddress lookup = driverLookup();
  int status = STANDIN_ENTRY_POINT_SYMBOL_NOT_FOUND;
  if (lookup == NULL || lookup(symbol, funcPtr, cudaVersion, flags, &status) != CUDA_SUCCESS) {
    *funcPtr = NULL;
    if (driverStatus != NULL) *driverStatus = STANDIN_ENTRY_POINT_SYMBOL_NOT_FOUND;
    return fail(cudaErrorSymbolNotFound);
  }
  if (driverStatus != NULL) *driverStatus = status;
  return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags, int* driverStatus) {
  return entryPoint(symbol, funcPtr, STANDIN_CUDA_VERSION, flags, driverStatus);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags, int* driverStatus) {
  return entryPoint(symbol, funcPtr, (int)cudaVersion, flags, driverStatus);
}

/* Everything that needs a GPU. One definition serves each name; callers' arguments are ignored. */
static cudaError_t noDevice(void) { return fail(cudaErrorNoDevice); }

#define STANDIN_NO_DEVICE(name) \
  STANDIN_EXPORT cudaError_t name(void); \
  cudaError_t name(void) { return noDevice(); }
STANDIN_NO_DEVICE(cudaGetDevice)
STANDIN_NO_DEVICE(cudaSetDevice)
STANDIN_NO_DEVICE(cudaGetDeviceProperties)
STANDIN_NO_DEVICE(cudaDeviceGetAttribute)
STANDIN_NO_DEVICE(cudaDeviceGetPCIBusId)
STANDIN_NO_DEVICE(cudaDeviceCanAccessPeer)
STANDIN_NO_DEVICE(cudaDeviceSynchronize)
STANDIN_NO_DEVICE(cudaMalloc)
STANDIN_NO_DEVICE(cudaFree)
STANDIN_NO_DEVICE(cudaMallocHost)
STANDIN_NO_DEVICE(cudaHostAlloc)
STANDIN_NO_DEVICE(cudaFreeHost)
STANDIN_NO_DEVICE(cudaHostRegister)
STANDIN_NO_DEVICE(cudaHostUnregister)
STANDIN_NO_DEVICE(cudaHostGetDevicePointer)
STANDIN_NO_DEVICE(cudaMemcpy)
STANDIN_NO_DEVICE(cudaMemcpyAsync)
STANDIN_NO_DEVICE(cudaMemset)
STANDIN_NO_DEVICE(cudaMemsetAsync)
STANDIN_NO_DEVICE(cudaStreamCreate)
STANDIN_NO_DEVICE(cudaStreamCreateWithFlags)
STANDIN_NO_DEVICE(cudaStreamDestroy)
STANDIN_NO_DEVICE(cudaStreamSynchronize)
STANDIN_NO_DEVICE(cudaEventCreate)
STANDIN_NO_DEVICE(cudaEventCreateWithFlags)
STANDIN_NO_DEVICE(cudaEventDestroy)
STANDIN_NO_DEVICE(cudaEventRecord)
STANDIN_NO_DEVICE(cudaEventSynchronize)
STANDIN_NO_DEVICE(cudaIpcGetMemHandle)
STANDIN_NO_DEVICE(cudaIpcOpenMemHandle)
STANDIN_NO_DEVICE(cudaIpcCloseMemHandle)
