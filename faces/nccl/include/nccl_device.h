/* nccl_device.h as weft ships it: the names of NCCL 2.28's device API (symmetric-memory windows,
 * LSA and GIN barriers, device communicators), so that programs which compile kernels against it
 * (nccl-tests 2.17 does, for its -D modes) build against weft's nccl.h unchanged.
 *
 * weft does not implement the device API: ncclDevCommCreate fails (ncclInvalidUsage, the message
 * says why) and ncclCommWindowRegister never returns a window, so no kernel ever gets a device
 * communicator or a window to work on. The device functions that would need one stop the kernel
 * with a trap instead of touching memory. Only the subset such programs use is declared; the
 * structs are weft's (a program compiled against NVIDIA's header may pass NVIDIA's, which weft's
 * library refuses the same way). */
#ifndef NCCL_DEVICE_H_
#define NCCL_DEVICE_H_

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "nccl.h"

#if defined(__CUDACC__)
#include <cuda/atomic>
#define WEFT_NCCL_DEVICE __device__ __forceinline__
#define WEFT_NCCL_HOST_DEVICE __host__ __device__ __forceinline__
#define WEFT_NCCL_UNREACHABLE() __trap()
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncclTeam {
  int nRanks, rank, stride;
} ncclTeam_t;

typedef uint32_t ncclDevResourceHandle_t;
typedef uint32_t ncclGinSignal_t;
typedef uint32_t ncclGinCounter_t;

typedef struct ncclLsaBarrierHandle {
  ncclDevResourceHandle_t bufHandle;
  int nBarriers;
} ncclLsaBarrierHandle_t;
typedef struct ncclGinBarrierHandle {
  ncclDevResourceHandle_t bufHandle;
  ncclGinSignal_t signal0;
} ncclGinBarrierHandle_t;
typedef struct ncclLLA2AHandle {
  ncclDevResourceHandle_t bufHandle;
  int nSlots;
} ncclLLA2AHandle_t;
typedef struct ncclMultimemHandle {
  void* mcBasePtr;
} ncclMultimemHandle_t;

typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
struct ncclDevResourceRequirements {
  ncclDevResourceRequirements_t* next;
  size_t bufferSize, bufferAlign;
  ncclDevResourceHandle_t* outBufferHandle;
  int ginSignalCount;
  int ginCounterCount;
  ncclGinSignal_t* outGinSignalStart;
  ncclGinCounter_t* outGinCounterStart;
};

typedef struct ncclTeamRequirements ncclTeamRequirements_t;
struct ncclTeamRequirements {
  ncclTeamRequirements_t* next;
  ncclTeam_t team;
  bool multimem;
  ncclMultimemHandle_t* outMultimemHandle;
};

/* What a program asks of a device communicator (NCCL's field names and order). */
typedef struct ncclDevCommRequirements {
  ncclDevResourceRequirements_t* resourceRequirementsList;
  ncclTeamRequirements_t* teamRequirementsList;
  bool lsaMultimem;
  int barrierCount;
  int lsaBarrierCount;
  int railGinBarrierCount;
  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;
  bool ginForceEnable;
  int ginContextCount;
  int ginSignalCount;
  int ginCounterCount;
} ncclDevCommRequirements_t;

/* A device communicator as a kernel receives it by value. weft never creates one. */
typedef struct ncclDevComm {
  int rank, nRanks;
  int lsaRank, lsaSize;
  ncclLsaBarrierHandle_t lsaBarrier;
  ncclGinBarrierHandle_t railGinBarrier;
  ncclMultimemHandle_t lsaMultimem;
} ncclDevComm_t;

/* Host calls (exported by weft's libnccl.so.2): creation fails, see above. */
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t* reqs, ncclDevComm_t* outDevComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t* devComm);
ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers, ncclLsaBarrierHandle_t* outHandle,
                                             ncclDevResourceRequirements_t* outReq);
ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                             ncclGinBarrierHandle_t* outHandle, ncclDevResourceRequirements_t* outReq);
int ncclLLA2ACalcSlots(int maxElts, int maxEltSize);
ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                        ncclDevResourceRequirements_t* outReq);
/* Teams of a host communicator: world is every rank; the LSA team (ranks whose memory this rank
 * can load and store) is the rank alone, since weft maps no peer memory; rails are then world. */
ncclTeam_t ncclTeamWorld(ncclComm_t comm);
ncclTeam_t ncclTeamLsa(ncclComm_t comm);
ncclTeam_t ncclTeamRail(ncclComm_t comm);
int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank);
int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank);

#ifdef __cplusplus
}
#endif

#if defined(__CUDACC__) && defined(__cplusplus)

/* Cooperative groups of threads, as NCCL names them. */
struct ncclCoopThread {
  WEFT_NCCL_DEVICE int thread_rank() const { return 0; }
  WEFT_NCCL_DEVICE int size() const { return 1; }
  WEFT_NCCL_DEVICE void sync() {}
};
struct ncclCoopWarp {
  WEFT_NCCL_DEVICE int thread_rank() const { return threadIdx.x % 32; }
  WEFT_NCCL_DEVICE int size() const { return 32; }
  WEFT_NCCL_DEVICE void sync() { __syncwarp(); }
};
struct ncclCoopCta {
  WEFT_NCCL_DEVICE int thread_rank() const { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
  WEFT_NCCL_DEVICE int size() const { return blockDim.x * blockDim.y * blockDim.z; }
  WEFT_NCCL_DEVICE void sync() { __syncthreads(); }
};

struct ncclTeamTagWorld {};
struct ncclTeamTagLsa {};
struct ncclTeamTagRail {};
typedef ncclTeam_t ncclTeam;

WEFT_NCCL_HOST_DEVICE ncclTeam ncclTeamWorld(const ncclDevComm& comm) { return ncclTeam{comm.nRanks, comm.rank, 1}; }
WEFT_NCCL_HOST_DEVICE ncclTeam ncclTeamLsa(const ncclDevComm& comm) { return ncclTeam{comm.lsaSize, comm.lsaRank, 1}; }
WEFT_NCCL_HOST_DEVICE ncclTeam ncclTeamRail(const ncclDevComm& comm) {
  return ncclTeam{comm.nRanks / comm.lsaSize, comm.rank / comm.lsaSize, comm.lsaSize};
}

/* Windows: none exists in weft, so none of these can be reached with a valid window. */
WEFT_NCCL_DEVICE void* ncclGetLocalPointer(ncclWindow_t, size_t) { WEFT_NCCL_UNREACHABLE(); return nullptr; }
WEFT_NCCL_DEVICE void* ncclGetLsaPointer(ncclWindow_t, size_t, int) { WEFT_NCCL_UNREACHABLE(); return nullptr; }
WEFT_NCCL_DEVICE void* ncclGetLsaMultimemPointer(ncclWindow_t, size_t, const ncclDevComm&) {
  WEFT_NCCL_UNREACHABLE();
  return nullptr;
}

template <typename Coop>
struct ncclLsaBarrierSession {
  WEFT_NCCL_DEVICE ncclLsaBarrierSession(Coop, const ncclDevComm&, ncclTeam, ncclLsaBarrierHandle_t, uint32_t,
                                         bool = false, ncclMultimemHandle_t = {}) {
    WEFT_NCCL_UNREACHABLE();
  }
  WEFT_NCCL_DEVICE ncclLsaBarrierSession(Coop, const ncclDevComm&, ncclTeamTagLsa, uint32_t, bool = false) {
    WEFT_NCCL_UNREACHABLE();
  }
  ncclLsaBarrierSession(const ncclLsaBarrierSession&) = delete;
  WEFT_NCCL_DEVICE void arrive(Coop, cuda::memory_order) { WEFT_NCCL_UNREACHABLE(); }
  WEFT_NCCL_DEVICE void wait(Coop, cuda::memory_order) { WEFT_NCCL_UNREACHABLE(); }
  WEFT_NCCL_DEVICE void sync(Coop, cuda::memory_order) { WEFT_NCCL_UNREACHABLE(); }
};

/* GPU-initiated networking (GIN). */
enum class ncclGinFenceLevel { Relaxed };
struct ncclGin_None {};
struct ncclGin_SignalInc {
  ncclGinSignal_t signal;
};
struct ncclGin {
  const ncclDevComm& comm;
  WEFT_NCCL_DEVICE ncclGin(const ncclDevComm& c, int) : comm(c) { WEFT_NCCL_UNREACHABLE(); }
  WEFT_NCCL_DEVICE uint64_t readSignal(ncclGinSignal_t) { WEFT_NCCL_UNREACHABLE(); return 0; }
  template <typename RemoteAction = ncclGin_None, typename LocalAction = ncclGin_None>
  WEFT_NCCL_DEVICE void put(ncclTeam, int, ncclWindow_t, size_t, ncclWindow_t, size_t, size_t,
                            RemoteAction = RemoteAction{}, LocalAction = LocalAction{}) {
    WEFT_NCCL_UNREACHABLE();
  }
  template <typename Coop>
  WEFT_NCCL_DEVICE void waitSignal(Coop, ncclGinSignal_t, uint64_t) { WEFT_NCCL_UNREACHABLE(); }
  template <typename Coop>
  WEFT_NCCL_DEVICE void flush(Coop) { WEFT_NCCL_UNREACHABLE(); }
};

template <typename Coop>
struct ncclBarrierSession {
  WEFT_NCCL_DEVICE ncclBarrierSession(Coop, ncclTeamTagWorld, ncclGin&, uint32_t) { WEFT_NCCL_UNREACHABLE(); }
  ncclBarrierSession(const ncclBarrierSession&) = delete;
  WEFT_NCCL_DEVICE void sync(Coop, cuda::memory_order, ncclGinFenceLevel = ncclGinFenceLevel::Relaxed) {
    WEFT_NCCL_UNREACHABLE();
  }
};

#endif /* __CUDACC__ && __cplusplus */

#endif /* NCCL_DEVICE_H_ */
