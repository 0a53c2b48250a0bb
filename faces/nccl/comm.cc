// Communicators: ids, init (blocking, non-blocking, inside groups), split, teardown, queries.
#include <cstddef>
#include <cstring>
#include <string>

#include "faces/nccl/cuda.h"
#include "faces/nccl/face.h"

namespace weft::nccl {
namespace {

static_assert(sizeof(ncclUniqueId) == sizeof(weft_unique_id_t), "unique ids are the same 128 bytes");

// Reads the caller's config with the size and version its header had: fields past `size` are
// undefined; fields newer than `version` are reset to undefined, as NCCL resets them.
ncclConfig_t readCallerConfig(const ncclConfig_t* in) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  size_t size = 0;
  std::memcpy(&size, in, sizeof(size));
  std::memcpy(static_cast<void*>(&c), in, size < sizeof(c) ? size : sizeof(c));
  const ncclConfig_t undef = NCCL_CONFIG_INITIALIZER;
  if (c.version < NCCL_VERSION(2, 14, 0)) c.blocking = undef.blocking;
  if (c.version < NCCL_VERSION(2, 17, 0)) {
    c.cgaClusterSize = undef.cgaClusterSize;
    c.minCTAs = undef.minCTAs;
    c.maxCTAs = undef.maxCTAs;
    c.netName = undef.netName;
  }
  if (c.version < NCCL_VERSION(2, 25, 0)) c.trafficClass = undef.trafficClass;
  if (c.version < NCCL_VERSION(2, 27, 0)) {
    c.collnetEnable = undef.collnetEnable;
    c.CTAPolicy = undef.CTAPolicy;
    c.shrinkShare = undef.shrinkShare;
    c.nvlsCTAs = undef.nvlsCTAs;
  }
  if (c.version < NCCL_VERSION(2, 28, 0)) {
    c.nChannelsPerNetPeer = undef.nChannelsPerNetPeer;
    c.nvlinkCentricSched = undef.nvlinkCentricSched;
  }
  return c;
}

// weft's config for a rank of this process: undefined fields as NCCL's, and the GPU the
// calling thread uses when a GPU is present.
weft_config_t baseConfig() {
  weft_config_t w = WEFT_CONFIG_INITIALIZER;
  if (const CudaDriver* cuda = CudaDriver::get()) {
    int dev = cuda->currentDevice();
    if (dev >= 0) w.device = dev;
  }
  return w;
}

ncclResult_t initRank(const char* call, ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank,
                      ncclConfig_t* config) {
  if (comm == nullptr) return fail(call, ncclInvalidArgument, "comm is NULL");
  *comm = nullptr;
  showVersionOnce(rank);
  weft_config_t cfg = baseConfig();
  if (ncclResult_t rc = convertConfig(call, config, &cfg); rc != ncclSuccess) return rc;
  bool callerBlocking = cfg.blocking != 0;  // undefined means blocking, as in NCCL
  // Inside a group NCCL starts the init and finishes it at ncclGroupEnd, so that one thread may
  // initialise several ranks; weft's non-blocking init does exactly the first half.
  bool deferred = inGroup();
  if (deferred) cfg.blocking = 0;
  weft_unique_id_t wid;
  std::memcpy(wid.internal, id.internal, sizeof(wid.internal));
  weft_comm_t* w = nullptr;
  weft_result_t rc = weft_comm_init_rank_config(&w, nranks, wid, rank, &cfg);
  *comm = toNccl(w);
  if (deferred && rc == weftInProgress) {
    deferInit(w, callerBlocking);
    return callerBlocking ? ncclSuccess : ncclInProgress;
  }
  return fromWeft(call, rc);
}

}  // namespace

ncclResult_t convertConfig(const char* call, const ncclConfig_t* in, weft_config_t* out) {
  if (in == nullptr) return ncclSuccess;
  ncclConfig_t c = readCallerConfig(in);
  if (c.magic != 0xcafebeef)
    return fail(call, ncclInvalidArgument, "ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER");
  out->blocking = c.blocking;
  out->cga_cluster_size = c.cgaClusterSize;
  out->min_ctas = c.minCTAs;
  out->max_ctas = c.maxCTAs;
  out->net_name = c.netName;
  out->split_share = c.splitShare;
  out->traffic_class = c.trafficClass;
  out->comm_name = c.commName;
  out->collnet_enable = c.collnetEnable;
  out->cta_policy = c.CTAPolicy;
  out->shrink_share = c.shrinkShare;
  out->nvls_ctas = c.nvlsCTAs;
  out->n_channels_per_net_peer = c.nChannelsPerNetPeer;
  out->nvlink_centric_sched = c.nvlinkCentricSched;
  return ncclSuccess;
}

}  // namespace weft::nccl

using weft::nccl::fail;
using weft::nccl::fromWeft;
using weft::nccl::toNccl;
using weft::nccl::toWeft;

WEFT_NCCL_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId) {
  if (uniqueId == nullptr) return fail("ncclGetUniqueId", ncclInvalidArgument, "uniqueId is NULL");
  weft_unique_id_t id;
  weft_result_t rc = weft_get_unique_id(&id);
  if (rc == weftSuccess) std::memcpy(uniqueId->internal, id.internal, sizeof(id.internal));
  return fromWeft("ncclGetUniqueId", rc);
}

WEFT_NCCL_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
              ncclConfig_t* config) {
  return weft::nccl::initRank("ncclCommInitRankConfig", comm, nranks, commId, rank, config);
}

WEFT_NCCL_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return weft::nccl::initRank("ncclCommInitRank", comm, nranks, commId, rank, nullptr);
}

// One id: the usual init. Several ids spread NCCL's bootstrap over several roots; weft's
// bootstrap has one root, so every rank joins the first id's root, which its creator serves.
WEFT_NCCL_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
              ncclUniqueId* commIds, ncclConfig_t* config) {
  const char* call = "ncclCommInitRankScalable";
  if (commIds == nullptr) return fail(call, ncclInvalidArgument, "commIds is NULL");
  if (nId < 1 || nId > nranks)
    return fail(call, ncclInvalidArgument,
                "nId = " + std::to_string(nId) + ": expected 1.." + std::to_string(nranks) + " (one id per root, at most nranks)");
  return weft::nccl::initRank(call, newcomm, nranks, commIds[0], myrank, config);
}

WEFT_NCCL_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comm, int ndev, const int* devlist) {
  const char* call = "ncclCommInitAll";
  if (comm == nullptr) return fail(call, ncclInvalidArgument, "comm is NULL");
  if (ndev < 1) return fail(call, ncclInvalidArgument, "ndev = " + std::to_string(ndev) + ": expected at least 1");
  weft::nccl::showVersionOnce(0);
  // ncclComm_t and weft_comm_t* are the same pointer: the array is filled in place.
  static_assert(sizeof(ncclComm_t) == sizeof(weft_comm_t*));
  return fromWeft(call, weft_comm_init_all(reinterpret_cast<weft_comm_t**>(comm), ndev, devlist));
}

WEFT_NCCL_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
              ncclConfig_t* config) {
  const char* call = "ncclCommSplit";
  if (newcomm == nullptr) return fail(call, ncclInvalidArgument, "newcomm is NULL");
  if (ncclResult_t rc = weft::nccl::awaitDeferred(call, comm); rc != ncclSuccess) return rc;
  weft_config_t cfg = WEFT_CONFIG_INITIALIZER;
  weft_config_t* cfgp = nullptr;  // NULL: the parent's configuration, as NCCL
  if (config != nullptr) {
    if (ncclResult_t rc = weft::nccl::convertConfig(call, config, &cfg); rc != ncclSuccess) return rc;
    cfgp = &cfg;
  }
  weft_comm_t* w = nullptr;
  weft_result_t rc = weft_comm_split(toWeft(comm), color, key, &w, cfgp);
  *newcomm = toNccl(w);
  return fromWeft(call, rc);
}

WEFT_NCCL_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;  // as NCCL
  if (ncclResult_t rc = weft::nccl::awaitDeferred("ncclCommFinalize", comm); rc != ncclSuccess) return rc;
  return fromWeft("ncclCommFinalize", weft_comm_finalize(toWeft(comm)));
}

WEFT_NCCL_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;  // as NCCL
  (void)weft::nccl::awaitDeferred("ncclCommDestroy", comm);
  return fromWeft("ncclCommDestroy", weft_comm_destroy(toWeft(comm)));
}

WEFT_NCCL_API(ncclResult_t, ncclCommAbort, ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;  // as NCCL
  return fromWeft("ncclCommAbort", weft_comm_abort(toWeft(comm)));
}

WEFT_NCCL_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError) {
  const char* call = "ncclCommGetAsyncError";
  if (asyncError == nullptr) return fail(call, ncclInvalidArgument, "asyncError is NULL");
  weft_result_t state = weftSuccess;
  weft_result_t rc = weft_comm_get_async_error(toWeft(comm), &state);
  if (rc != weftSuccess) return fromWeft(call, rc);
  *asyncError = static_cast<ncclResult_t>(state);
  return ncclSuccess;
}

WEFT_NCCL_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count) {
  if (count == nullptr) return fail("ncclCommCount", ncclInvalidArgument, "count is NULL");
  if (ncclResult_t rc = weft::nccl::awaitDeferred("ncclCommCount", comm); rc != ncclSuccess) return rc;
  return fromWeft("ncclCommCount", weft_comm_count(toWeft(comm), count));
}

WEFT_NCCL_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device) {
  if (device == nullptr) return fail("ncclCommCuDevice", ncclInvalidArgument, "device is NULL");
  if (ncclResult_t rc = weft::nccl::awaitDeferred("ncclCommCuDevice", comm); rc != ncclSuccess) return rc;
  return fromWeft("ncclCommCuDevice", weft_comm_cu_device(toWeft(comm), device));
}

WEFT_NCCL_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank) {
  if (rank == nullptr) return fail("ncclCommUserRank", ncclInvalidArgument, "rank is NULL");
  if (ncclResult_t rc = weft::nccl::awaitDeferred("ncclCommUserRank", comm); rc != ncclSuccess) return rc;
  return fromWeft("ncclCommUserRank", weft_comm_user_rank(toWeft(comm), rank));
}
