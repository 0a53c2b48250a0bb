/* What the two halves of weft's CUDA stand-in share: the CUDA types and codes they use, written
 * out from the public API so that the stand-in builds without a CUDA toolkit. Values are those
 * of CUDA's cuda.h and driver_types.h. */
#ifndef WEFT_CUDA_STANDIN_H
#define WEFT_CUDA_STANDIN_H

#include <stdint.h>

/* The version both halves report: a CUDA 13.0 driver and runtime (13000 = 1000*13 + 10*0). */
#define STANDIN_CUDA_VERSION 13000

#define STANDIN_EXPORT __attribute__((visibility("default")))

typedef int CUresult;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_SUPPORTED 801

/* cuGetProcAddress_v2's symbolStatus, and cudaGetDriverEntryPoint's driverStatus. */
#define STANDIN_ENTRY_POINT_SUCCESS 0
#define STANDIN_ENTRY_POINT_SYMBOL_NOT_FOUND 1

typedef CUresult (*StandinGetProcAddress)(const char* symbol, void** pfn, int cudaVersion, uint64_t flags,
                                          int* symbolStatus);

#endif
