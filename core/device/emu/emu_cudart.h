// libweft_emu_cudart.so: the part of the CUDA runtime API that weft and its tests call, for
// machines without a GPU, with CUDA's own names and C signatures (cudaError_t and the enums as
// int), so that a program written against CUDA runs on it unchanged when it is loaded in place of
// libcudart. "Device memory" is host memory in a memfd, shared with other processes through
// cudaIpcGetMemHandle / cudaIpcOpenMemHandle (the handle names the owner's pid and descriptor;
// the opener maps /proc/<pid>/fd/<fd>). A stream is a host thread running its operations in
// order; events mark a point in a stream. weftDeviceLaunchColl runs weft's collective kernel
// (core/device/kernel.h, the source nvcc compiles for the GPU) on host threads, in stream order.
// libweft loads it with WEFT_CUDA_EMULATION=1 (or =<path>). Devices: $WEFT_EMU_DEVICES (8).
#pragma once

#include <cstddef>

extern "C" {

int cudaGetDeviceCount(int* count);
int cudaSetDevice(int device);
int cudaGetDevice(int* device);
int cudaMalloc(void** ptr, size_t size);
int cudaFree(void* ptr);
int cudaMemset(void* ptr, int value, size_t size);
int cudaMemcpy(void* dst, const void* src, size_t size, int kind);
int cudaMemcpyAsync(void* dst, const void* src, size_t size, int kind, void* stream);
int cudaHostAlloc(void** ptr, size_t size, unsigned flags);
int cudaHostGetDevicePointer(void** device, void* host, unsigned flags);
int cudaFreeHost(void* ptr);
int cudaStreamCreate(void** stream);
int cudaStreamDestroy(void* stream);
int cudaStreamSynchronize(void* stream);
int cudaDeviceSynchronize(void);
int cudaEventCreateWithFlags(void** event, unsigned flags);
int cudaEventRecord(void* event, void* stream);
int cudaEventQuery(void* event);
int cudaEventSynchronize(void* event);
int cudaEventDestroy(void* event);
int cudaStreamWaitEvent(void* stream, void* event, unsigned flags);
const char* cudaGetErrorString(int error);
int cudaGetLastError(void);

}  // extern "C"
