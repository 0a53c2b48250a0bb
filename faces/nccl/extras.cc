// The rest of NCCL 2.28.9's exported API: memory, registration, and the calls weft cannot serve
// yet (symmetric windows, the device API, shrink, revoke), which fail with NCCL's error code and a
// message naming the call, never crash nor pretend to succeed.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "faces/nccl/cuda.h"
#include "faces/nccl/face.h"

namespace weft::nccl {
namespace {

// ncclMemAlloc's blocks, so that ncclMemFree refuses a pointer it did not hand out.
std::mutex gAllocMutex;
std::set<void*> gHostBlocks;    // posix_memalign
std::set<void*> gMappedBlocks;  // cuMemHostAlloc

// 4096: the alignment NCCL requires of window buffers (NCCL_WIN_REQUIRED_ALIGNMENT).
constexpr size_t kAlign = 4096;

const char* const kNoDeviceApi =
    "weft does not implement NCCL's device API (nccl_device.h: symmetric memory, LSA/GIN barriers, device "
    "communicators); collectives and send/recv are the way to move data with weft";

// ncclTeam_t of nccl_device/core.h: {nRanks, rank, stride}; returned and passed by value.
struct Team {
  int nRanks, rank, stride;
};

}  // namespace
}  // namespace weft::nccl

using weft::nccl::fail;
using weft::nccl::fromWeft;
using weft::nccl::Team;
using weft::nccl::toWeft;

WEFT_NCCL_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size) {
  const char* call = "ncclMemAlloc";
  if (ptr == nullptr) return fail(call, ncclInvalidArgument, "ptr is NULL");
  *ptr = nullptr;
  if (size == 0) return ncclSuccess;  // as cudaMalloc of 0 bytes
  size_t bytes = (size + weft::nccl::kAlign - 1) / weft::nccl::kAlign * weft::nccl::kAlign;
  if (bytes < size) return fail(call, ncclInvalidArgument, "size " + std::to_string(size) + " overflows");
  std::lock_guard<std::mutex> lock(weft::nccl::gAllocMutex);
  if (const weft::nccl::CudaDriver* cuda = weft::nccl::CudaDriver::get()) {
    std::string err = cuda->allocMapped(ptr, bytes);
    if (!err.empty()) return fail(call, ncclUnhandledCudaError, err);
    weft::nccl::gMappedBlocks.insert(*ptr);
  } else {
    void* p = nullptr;
    if (posix_memalign(&p, weft::nccl::kAlign, bytes) != 0)
      return fail(call, ncclSystemError, "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    std::memset(p, 0, bytes);
    weft::nccl::gHostBlocks.insert(p);
    *ptr = p;
  }
  weft::nccl::info(WEFT_LOG_ALLOC, "ncclMemAlloc %p size %zu (%s)", *ptr, size,
                   weft::nccl::gMappedBlocks.count(*ptr) ? "pinned host memory mapped into the GPUs" : "host memory");
  return ncclSuccess;
}

WEFT_NCCL_API(ncclResult_t, ncclMemFree, void* ptr) {
  if (ptr == nullptr) return ncclSuccess;  // as cudaFree(NULL)
  std::lock_guard<std::mutex> lock(weft::nccl::gAllocMutex);
  if (weft::nccl::gHostBlocks.erase(ptr) == 1) {
    std::free(ptr);
    return ncclSuccess;
  }
  if (weft::nccl::gMappedBlocks.erase(ptr) == 1) {
    const weft::nccl::CudaDriver* cuda = weft::nccl::CudaDriver::get();
    if (cuda == nullptr || !cuda->freeMapped(ptr))
      return fail("ncclMemFree", ncclUnhandledCudaError, "cuMemFreeHost failed");
    return ncclSuccess;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", ptr);
  return fail("ncclMemFree", ncclInvalidArgument, std::string(buf) + " was not allocated by ncclMemAlloc (or was freed already)");
}

// Registration only lets NCCL skip copies for GPU buffers; NCCL itself skips it when local
// registration is off and answers success with a NULL handle. weft (host memory) always does that.
WEFT_NCCL_API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle) {
  const char* call = "ncclCommRegister";
  if (handle == nullptr) return fail(call, ncclInvalidArgument, "handle is NULL");
  int n = 0;
  if (weft_comm_count(toWeft(comm), &n) != weftSuccess) return fromWeft(call, weftInvalidArgument);
  *handle = nullptr;
  weft::nccl::info(WEFT_LOG_REG, "Skipping registration for buffer %p size %zu (weft moves host memory without registration)",
                   buff, size);
  return ncclSuccess;
}

WEFT_NCCL_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm, void* handle) {
  const char* call = "ncclCommDeregister";
  int n = 0;
  if (weft_comm_count(toWeft(comm), &n) != weftSuccess) return fromWeft(call, weftInvalidArgument);
  if (handle != nullptr) return fail(call, ncclInvalidArgument, "handle is not one ncclCommRegister returned (weft's are NULL)");
  return ncclSuccess;
}

WEFT_NCCL_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
              int winFlags) {
  (void)comm, (void)buff, (void)size, (void)winFlags;
  if (win != nullptr) *win = nullptr;
  return fail("ncclCommWindowRegister", ncclInvalidUsage,
              "symmetric memory windows are not supported by weft (no window was registered); "
              "collectives on plain buffers work without them");
}

WEFT_NCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  (void)comm, (void)win;
  return fail("ncclCommWindowDeregister", ncclInvalidUsage,
              "symmetric memory windows are not supported by weft (ncclCommWindowRegister never returns one)");
}

WEFT_NCCL_API(ncclResult_t, ncclCommShrink, ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
              ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  (void)comm, (void)excludeRanksList, (void)excludeRanksCount, (void)config, (void)shrinkFlags;
  if (newcomm != nullptr) *newcomm = nullptr;
  return fail("ncclCommShrink", ncclInvalidUsage,
              "not supported by weft yet (the excluded ranks would have to take part); while every rank is "
              "alive, ncclCommSplit with NCCL_SPLIT_NOCOLOR on the ranks to drop gives the same communicator");
}

WEFT_NCCL_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags) {
  if (comm == nullptr) return ncclSuccess;  // as NCCL
  (void)revokeFlags;
  return fail("ncclCommRevoke", ncclInvalidUsage,
              "not supported by weft yet; ncclCommAbort ends the communicator's work and frees it");
}

// ---- The device API's host side (nccl_device/*.h) -------------------------------------------------

WEFT_NCCL_API(ncclResult_t, ncclDevCommCreate, ncclComm_t comm, const void* reqs, void* outDevComm) {
  (void)comm, (void)reqs, (void)outDevComm;
  return fail("ncclDevCommCreate", ncclInvalidUsage, weft::nccl::kNoDeviceApi);
}

WEFT_NCCL_API(ncclResult_t, ncclDevCommDestroy, ncclComm_t comm, const void* devComm) {
  (void)comm, (void)devComm;
  return fail("ncclDevCommDestroy", ncclInvalidUsage, weft::nccl::kNoDeviceApi);
}

WEFT_NCCL_API(ncclResult_t, ncclLsaBarrierCreateRequirement, Team team, int nBarriers, void* outHandle, void* outReq) {
  (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return fail("ncclLsaBarrierCreateRequirement", ncclInvalidUsage, weft::nccl::kNoDeviceApi);
}

WEFT_NCCL_API(ncclResult_t, ncclGinBarrierCreateRequirement, ncclComm_t comm, Team team, int nBarriers, void* outHandle,
              void* outReq) {
  (void)comm, (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return fail("ncclGinBarrierCreateRequirement", ncclInvalidUsage, weft::nccl::kNoDeviceApi);
}

WEFT_NCCL_API(ncclResult_t, ncclLLA2ACreateRequirement, int nBlocks, int nSlots, void* outHandle, void* outReq) {
  (void)nBlocks, (void)nSlots, (void)outHandle, (void)outReq;
  return fail("ncclLLA2ACreateRequirement", ncclInvalidUsage, weft::nccl::kNoDeviceApi);
}

// Slots an LL all-to-all needs: one 8-byte word per element per 8 bytes of element (NCCL's sizing).
WEFT_NCCL_API(int, ncclLLA2ACalcSlots, int maxElts, int maxEltSize) { return maxElts * ((maxEltSize + 7) / 8); }

// Teams. World is every rank; the LSA team (ranks whose memory this rank can load and store)
// is this rank alone, since weft maps no peer memory for the device API; rails are then world.
WEFT_NCCL_API(Team, ncclTeamWorld, ncclComm_t comm) {
  int n = 0, r = 0;
  if (weft_comm_count(toWeft(comm), &n) != weftSuccess || weft_comm_user_rank(toWeft(comm), &r) != weftSuccess) {
    fromWeft("ncclTeamWorld", weftInvalidArgument);
    return Team{0, 0, 0};
  }
  return Team{n, r, 1};
}

WEFT_NCCL_API(Team, ncclTeamLsa, ncclComm_t comm) {
  (void)comm;
  return Team{1, 0, 1};
}

WEFT_NCCL_API(Team, ncclTeamRail, ncclComm_t comm) { return pncclTeamWorld(comm); }

WEFT_NCCL_API(int, ncclTeamRankToWorld, ncclComm_t comm, Team team, int rank) {
  int me = 0;
  if (weft_comm_user_rank(toWeft(comm), &me) != weftSuccess) {
    fromWeft("ncclTeamRankToWorld", weftInvalidArgument);
    return -1;
  }
  return me + (rank - team.rank) * team.stride;
}

WEFT_NCCL_API(int, ncclTeamRankToLsa, ncclComm_t comm, Team team, int rank) {
  (void)comm;
  return (rank - team.rank) * team.stride;  // this rank is 0 of its one-rank LSA team
}
