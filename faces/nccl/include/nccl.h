/* nccl.h as weft ships it: NCCL 2.28's host API, source-compatible with NVIDIA's header (same
 * type names, enum values, struct layouts, macros and function signatures), implemented by weft's
 * libnccl.so.2 on top of libweft. Written for weft; see README.md, "Programs built for NCCL".
 *
 * What differs from NVIDIA's library is listed there; in short: without a GPU, buffers are host
 * memory and the stream argument is accepted and not used (each call completes before it
 * returns); calls weft cannot serve yet return an error that names them. */
#ifndef NCCL_H_
#define NCCL_H_

/* cudaStream_t and the CUDA element types come from the CUDA toolkit when it is on the include
 * path; without it (a CPU-only program) cudaStream_t is declared here exactly as CUDA declares
 * it, so both may be included in either order. */
#if defined(__has_include)
#if __has_include(<cuda_runtime.h>)
#define WEFT_NCCL_HAS_CUDA_HEADERS 1
#endif
#endif
#if defined(WEFT_NCCL_HAS_CUDA_HEADERS) && !defined(WEFT_NCCL_NO_CUDA_HEADERS)
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#if CUDART_VERSION >= 11000
#include <cuda_bf16.h>
#endif
#if defined(__cplusplus) && CUDART_VERSION >= 11080
#include <cuda_fp8.h>
#endif
#else
typedef struct CUstream_st* cudaStream_t;
#endif

#include <limits.h>
#include <stddef.h>

/* The NCCL release whose API this header and weft's library implement. */
#define NCCL_MAJOR 2
#define NCCL_MINOR 28
#define NCCL_PATCH 9
#define NCCL_SUFFIX ""
/* Version codes: releases up to 2.8 count X*1000 + Y*100 + Z, later ones X*10000 + Y*100 + Z
 * (2.28.9 is 22809). */
#define NCCL_VERSION(X, Y, Z) \
  (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
#define NCCL_VERSION_CODE 22809

/* Set by weft's nccl.h only: lets a program tell at compile time which implementation it got. */
#define WEFT_NCCL 1

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncclComm* ncclComm_t;
typedef struct ncclWindow_vidmem* ncclWindow_t;
#define NCCL_COMM_NULL NULL

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

/* ncclCommWindowRegister flags and alignment. */
#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

/* ncclConfig_t.CTAPolicy values. */
#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

/* ncclCommShrink and ncclCommRevoke flags. */
#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01
#define NCCL_REVOKE_DEFAULT 0x00

/* A communicator's configuration, in NCCL 2.28's field order (the order is the ABI: a program
 * compiled against an older header passes a shorter struct, told apart by `size` and
 * `version`). Create it with NCCL_CONFIG_INITIALIZER; every field left undefined takes the
 * library's default or the NCCL_* setting that overrides it. */
typedef struct ncclConfig_v22800 {
  size_t size;          /* sizeof(ncclConfig_t) of the caller's header */
  unsigned int magic;   /* 0xcafebeef: proves the initializer was used */
  unsigned int version; /* NCCL_VERSION_CODE of the caller's header */
  int blocking;         /* 0: init and collectives may return ncclInProgress */
  int cgaClusterSize;
  int minCTAs;          /* weft: lower bound on the channels */
  int maxCTAs;          /* weft: upper bound on the channels */
  const char* netName;  /* net plugin by name, as NCCL_NET */
  int splitShare;
  int trafficClass;
  const char* commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                                                                    \
  {                                                                                                \
    sizeof(ncclConfig_t), 0xcafebeef, NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH),            \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, \
        NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT                                               \
  }

/* What ncclGroupSimulateEnd reports. */
typedef struct ncclSimInfo_v22200 {
  size_t size;
  unsigned int magic; /* 0x74685283 */
  unsigned int version;
  float estimatedTime;
} ncclSimInfo_t;

#define NCCL_SIM_INFO_INITIALIZER \
  { sizeof(ncclSimInfo_t), 0x74685283, NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), NCCL_UNDEF_FLOAT }

/* The enum below exists only so that ncclMaxRedOp fits the enum's size, as in NCCL. */
typedef enum { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5, /* ops from ncclRedOpCreatePreMulSum follow */
  ncclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(ncclRedOp_dummy_t))
} ncclRedOp_t;

typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;

typedef enum { ncclScalarDevice = 0, ncclScalarHostImmediate = 1 } ncclScalarResidence_t;

/* Every function below exists twice, as NCCL exports it: ncclX (a weak symbol, which a profiler
 * or shim may override) and pncclX (the strong one it can forward to). */
#define WEFT_NCCL_DECLARE(ret, name, args) \
  ret name args;                           \
  ret p##name args

/* ---- Memory, versions, ids ------------------------------------------------------------------
 * ncclMemAlloc: without a GPU, zeroed host memory aligned to 4096 bytes; with one, memory that
 * both the GPU and the host can reach (see README). ncclMemFree takes only its pointers. */
WEFT_NCCL_DECLARE(ncclResult_t, ncclMemAlloc, (void** ptr, size_t size));
WEFT_NCCL_DECLARE(ncclResult_t, ncclMemFree, (void* ptr));
/* The NCCL_VERSION_CODE of the API implemented (22809). */
WEFT_NCCL_DECLARE(ncclResult_t, ncclGetVersion, (int* version));
WEFT_NCCL_DECLARE(ncclResult_t, ncclGetUniqueId, (ncclUniqueId * uniqueId));

/* ---- Communicators --------------------------------------------------------------------------- */
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommInitRankConfig,
                  (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommInitRank, (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommInitAll, (ncclComm_t * comm, int ndev, const int* devlist));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommInitRankScalable,
                  (ncclComm_t * newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds, ncclConfig_t* config));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommFinalize, (ncclComm_t comm));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommDestroy, (ncclComm_t comm));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommAbort, (ncclComm_t comm));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommRevoke, (ncclComm_t comm, int revokeFlags));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommSplit,
                  (ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommShrink,
                  (ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                   ncclConfig_t* config, int shrinkFlags));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t* asyncError));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommCount, (const ncclComm_t comm, int* count));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommCuDevice, (const ncclComm_t comm, int* device));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommUserRank, (const ncclComm_t comm, int* rank));

/* ---- Errors and logging ------------------------------------------------------------------------ */
WEFT_NCCL_DECLARE(const char*, ncclGetErrorString, (ncclResult_t result));
/* The message of the most recent failure (this thread's, else the process's); `comm` is not
 * used, as in NCCL. Never NULL. */
WEFT_NCCL_DECLARE(const char*, ncclGetLastError, (ncclComm_t comm));
#if defined(__GNUC__)
__attribute__((deprecated("ncclResetDebugInit is not part of the NCCL API")))
#endif
void ncclResetDebugInit(void);
#if defined(__GNUC__)
__attribute__((deprecated("pncclResetDebugInit is not part of the NCCL API")))
#endif
void pncclResetDebugInit(void);

/* ---- Buffer registration ------------------------------------------------------------------------
 * Registration is a hint; weft moves host memory without it and answers as NCCL does when it
 * skips registration (success, *handle = NULL). Windows (symmetric memory) are not supported. */
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommRegister, (const ncclComm_t comm, void* buff, size_t size, void** handle));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommDeregister, (const ncclComm_t comm, void* handle));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommWindowRegister,
                  (ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags));
WEFT_NCCL_DECLARE(ncclResult_t, ncclCommWindowDeregister, (ncclComm_t comm, ncclWindow_t win));

/* ---- Reductions --------------------------------------------------------------------------------- */
WEFT_NCCL_DECLARE(ncclResult_t, ncclRedOpCreatePreMulSum,
                  (ncclRedOp_t * op, void* scalar, ncclDataType_t datatype, ncclScalarResidence_t residence,
                   ncclComm_t comm));
WEFT_NCCL_DECLARE(ncclResult_t, ncclRedOpDestroy, (ncclRedOp_t op, ncclComm_t comm));

/* ---- Collectives and point-to-point (NCCL's argument order and semantics) ----------------------- */
WEFT_NCCL_DECLARE(ncclResult_t, ncclReduce,
                  (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                   int root, ncclComm_t comm, cudaStream_t stream));
/* In-place broadcast (deprecated in NCCL, kept for old programs). */
WEFT_NCCL_DECLARE(ncclResult_t, ncclBcast,
                  (void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream));
WEFT_NCCL_DECLARE(ncclResult_t, ncclBroadcast,
                  (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                   ncclComm_t comm, cudaStream_t stream));
WEFT_NCCL_DECLARE(ncclResult_t, ncclAllReduce,
                  (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                   ncclComm_t comm, cudaStream_t stream));
WEFT_NCCL_DECLARE(ncclResult_t, ncclReduceScatter,
                  (const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op,
                   ncclComm_t comm, cudaStream_t stream));
WEFT_NCCL_DECLARE(ncclResult_t, ncclAllGather,
                  (const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype, ncclComm_t comm,
                   cudaStream_t stream));
WEFT_NCCL_DECLARE(ncclResult_t, ncclAlltoAll,
                  (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                   cudaStream_t stream));
WEFT_NCCL_DECLARE(ncclResult_t, ncclGather,
                  (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                   ncclComm_t comm, cudaStream_t stream));
WEFT_NCCL_DECLARE(ncclResult_t, ncclScatter,
                  (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                   ncclComm_t comm, cudaStream_t stream));
WEFT_NCCL_DECLARE(ncclResult_t, ncclSend,
                  (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                   cudaStream_t stream));
WEFT_NCCL_DECLARE(ncclResult_t, ncclRecv,
                  (void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                   cudaStream_t stream));

/* ---- Groups ----------------------------------------------------------------------------------------
 * Calls between ncclGroupStart and ncclGroupEnd run together at the outermost ncclGroupEnd,
 * communicator initialisations included (so one thread may initialise several ranks). */
WEFT_NCCL_DECLARE(ncclResult_t, ncclGroupStart, (void));
WEFT_NCCL_DECLARE(ncclResult_t, ncclGroupEnd, (void));
WEFT_NCCL_DECLARE(ncclResult_t, ncclGroupSimulateEnd, (ncclSimInfo_t * simInfo));

#undef WEFT_NCCL_DECLARE

#ifdef __cplusplus
}
#endif

#endif /* NCCL_H_ */
