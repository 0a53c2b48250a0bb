// C ABI of the collectives (include/weft/comm.h) over core/coll: argument checks with NCCL's
// rules, the reduction operator as NCCL's hostToDevRedOp builds it, and groups.
#include <algorithm>
#include <cstring>

#include "core/api/comm_registry.h"
#include "core/api/group.h"
#include "core/api/last_error.h"
#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/config/values.h"
#include "core/coll/algorithm.h"
#include "core/coll/run.h"
#include "core/device/comm_device.h"
#include "core/runtime/p2p.h"
#include "weft/weft.h"

namespace weft::api {

std::vector<coll::CollTask>& groupCollectives() {
  thread_local std::vector<coll::CollTask> tasks;
  return tasks;
}

std::vector<device::P2pOp>& groupDeviceP2p() {
  thread_local std::vector<device::P2pOp> ops;
  return ops;
}

namespace {

using runtime::Comm;

Status checkType(const char* what, weft_datatype_t type) {
  if (weft_datatype_size(type) == 0)
    return invalidArgument(strprintf("%s: unknown datatype %d (expected 0..11)", what, static_cast<int>(type)));
  return Status::ok();
}

// The operator of a reduction on `comm`: a built-in op, or one of the comm's PreMulSum ops.
Result<coll::RedOp> redOpFor(const char* what, const Comm& c, weft_redop_t op, weft_datatype_t type) {
  int v = static_cast<int>(op);
  if (v >= 0 && v < weftNumOps) return coll::deviceOp(v, type, c.nranks);
  size_t i = static_cast<size_t>(v) - weftNumOps;
  if (v < weftNumOps || i >= c.userOps.size() || !c.userOps[i].live)
    return invalidArgument(strprintf("%s: op %d is neither a built-in reduction nor a live op of this communicator", what, v));
  if (c.userOps[i].type != static_cast<int>(type))
    return invalidArgument(strprintf("%s: op %d was created for datatype %d, used with datatype %d", what, v,
                                     c.userOps[i].type, static_cast<int>(type)));
  return coll::preMulSum(type, &c.userOps[i].scalar);
}

// Checks, then runs the collective now or queues it in the thread's group.
Status enqueue(const char* what, weft_comm_t* comm, void* stream, const void* send, void* recv, coll::CollArgs a,
               weft_redop_t op, bool reduces) {
  WEFT_TRY(checkType(what, a.type));
  size_t elt = weft_datatype_size(a.type);
  WEFT_ASSIGN_OR_RETURN(CallScope scope, enterComm(comm, what));
  Comm& c = commOf(comm);
  WEFT_TRY(readyForWork(c, what));
  // GPU buffers go to the device path (a kernel enqueued on the stream), host ones to the host's.
  WEFT_ASSIGN_OR_RETURN(bool onDevice, device::usesDevice(what, send, recv, a.count, stream));
  bool perRank = a.coll == coll::Coll::kAllGather || a.coll == coll::Coll::kReduceScatter;
  size_t n = perRank ? static_cast<size_t>(c.nranks) : 1;
  if (a.count > SIZE_MAX / elt / n) return invalidArgument(strprintf("%s: count %zu overflows a byte count", what, a.count));
  if (a.count > 0 && (send == nullptr || recv == nullptr))
    return invalidArgument(strprintf("%s: %s is NULL with count %zu", what, send == nullptr ? "sendbuff" : "recvbuff", a.count));
  if ((a.coll == coll::Coll::kBroadcast || a.coll == coll::Coll::kReduce) && (a.root < 0 || a.root >= c.nranks))
    return invalidArgument(strprintf("%s: root %d is not a rank of this communicator (0..%d)", what, a.root, c.nranks - 1));
  if (reduces) {
    WEFT_ASSIGN_OR_RETURN(a.op, redOpFor(what, c, op, a.type));
    a.userOp = std::min(static_cast<int>(op), static_cast<int>(weftNumOps));  // every PreMulSum op alike: scalars may differ
  }
  a.send = send;
  a.recv = recv;
  // Counted whether or not the line below is logged: the count goes with this rank's goodbye.
  uint64_t opCount = c.opCount++;
  a.seq = c.opCount;
  WEFT_INFO(log::kColl, "%s: opCount %llx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p",
            config::funcName(coll::funcOf(a.coll)), static_cast<unsigned long long>(opCount), send, recv, a.count,
            static_cast<int>(a.type), static_cast<int>(op), a.root, static_cast<void*>(comm), c.nranks, stream);
  if (a.count == 0) return Status::ok();  // NCCL drops empty operations
  WEFT_ASSIGN_OR_RETURN(coll::AlgoChoice choice, coll::chooseAlgorithm(what, c, a.coll, a.type, a.count));
  a.algo = choice.algo;
  a.doubling = choice.doubling;
  a.proto = choice.proto;
  a.channels = choice.channels;
  if (runtime::threadGroup().depth > 0) {
    coll::CollTask t{&c, a};
    if (onDevice) {
      t.onDevice = true;
      t.stream = stream;
      t.cudaDevice = device::currentDevice();
    }
    groupCollectives().push_back(t);
    return Status::ok();
  }
  if (onDevice) return device::enqueueCollective(c, a, stream);
  coll::CollTask task{&c, a};
  return coll::runCollectives({&task, 1});
}

}  // namespace
}  // namespace weft::api

using weft::Status;
using weft::api::guard;
namespace coll = weft::coll;

extern "C" {

WEFT_API weft_result_t weft_allreduce(const void* sendbuff, void* recvbuff, size_t count, weft_datatype_t datatype,
                                      weft_redop_t op, weft_comm_t* comm, void* stream) {
  return guard("weft_allreduce", [&] {
    coll::CollArgs a;
    a.coll = coll::Coll::kAllReduce;
    a.count = count;
    a.type = datatype;
    return weft::api::enqueue("weft_allreduce", comm, stream, sendbuff, recvbuff, a, op, true);
  });
}

WEFT_API weft_result_t weft_broadcast(const void* sendbuff, void* recvbuff, size_t count, weft_datatype_t datatype,
                                      int root, weft_comm_t* comm, void* stream) {
  return guard("weft_broadcast", [&] {
    coll::CollArgs a;
    a.coll = coll::Coll::kBroadcast;
    a.count = count;
    a.type = datatype;
    a.root = root;
    return weft::api::enqueue("weft_broadcast", comm, stream, sendbuff, recvbuff, a, weftSum, false);
  });
}

WEFT_API weft_result_t weft_reduce(const void* sendbuff, void* recvbuff, size_t count, weft_datatype_t datatype,
                                   weft_redop_t op, int root, weft_comm_t* comm, void* stream) {
  return guard("weft_reduce", [&] {
    coll::CollArgs a;
    a.coll = coll::Coll::kReduce;
    a.count = count;
    a.type = datatype;
    a.root = root;
    return weft::api::enqueue("weft_reduce", comm, stream, sendbuff, recvbuff, a, op, true);
  });
}

WEFT_API weft_result_t weft_allgather(const void* sendbuff, void* recvbuff, size_t sendcount, weft_datatype_t datatype,
                                      weft_comm_t* comm, void* stream) {
  return guard("weft_allgather", [&] {
    coll::CollArgs a;
    a.coll = coll::Coll::kAllGather;
    a.count = sendcount;
    a.type = datatype;
    return weft::api::enqueue("weft_allgather", comm, stream, sendbuff, recvbuff, a, weftSum, false);
  });
}

WEFT_API weft_result_t weft_reduce_scatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                           weft_datatype_t datatype, weft_redop_t op, weft_comm_t* comm, void* stream) {
  return guard("weft_reduce_scatter", [&] {
    coll::CollArgs a;
    a.coll = coll::Coll::kReduceScatter;
    a.count = recvcount;
    a.type = datatype;
    return weft::api::enqueue("weft_reduce_scatter", comm, stream, sendbuff, recvbuff, a, op, true);
  });
}

// NCCL lowers AlltoAll to n send/receive pairs in a group (block r at r * count).
WEFT_API weft_result_t weft_alltoall(const void* sendbuff, void* recvbuff, size_t count, weft_datatype_t datatype,
                                     weft_comm_t* comm, void* stream) {
  return guard("weft_alltoall", [&]() -> Status {
    size_t elt = weft_datatype_size(datatype);
    if (elt == 0) return weft::invalidArgument(weft::strprintf("weft_alltoall: unknown datatype %d", static_cast<int>(datatype)));
    int n = 0;
    if (weft_comm_count(comm, &n) != weftSuccess) return Status(weft::Code::kInvalidArgument, weft_last_error());
    if (count > SIZE_MAX / elt / static_cast<size_t>(n))
      return weft::invalidArgument(weft::strprintf("weft_alltoall: count %zu overflows a byte count", count));
    if (weft_group_start() != weftSuccess) return Status(weft::Code::kInternalError, weft_last_error());
    weft_result_t rc = weftSuccess;
    for (int r = 0; r < n && rc == weftSuccess; ++r) {
      size_t off = static_cast<size_t>(r) * count * elt;
      rc = weft_send(static_cast<const char*>(sendbuff) + off, count, datatype, r, comm, stream);
      if (rc == weftSuccess) rc = weft_recv(static_cast<char*>(recvbuff) + off, count, datatype, r, comm, stream);
    }
    std::string why = rc == weftSuccess ? "" : weft_last_error();
    weft_result_t end = weft_group_end();
    if (rc != weftSuccess) return Status(static_cast<weft::Code>(rc), why);
    if (end != weftSuccess) return Status(static_cast<weft::Code>(end), weft_last_error());
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_redop_create_pre_mul_sum(weft_redop_t* op, void* scalar, weft_datatype_t datatype,
                                                     weft_scalar_residence_t residence, weft_comm_t* comm) {
  return guard("weft_redop_create_pre_mul_sum", [&]() -> Status {
    if (op == nullptr || scalar == nullptr) return weft::invalidArgument("weft_redop_create_pre_mul_sum: op or scalar is NULL");
    WEFT_TRY(weft::api::checkType("weft_redop_create_pre_mul_sum", datatype));
    if (residence != weftScalarDevice && residence != weftScalarHostImmediate)
      return weft::invalidArgument("weft_redop_create_pre_mul_sum: residence must be weftScalarDevice or weftScalarHostImmediate");
    WEFT_ASSIGN_OR_RETURN(weft::api::CallScope scope, weft::api::enterComm(comm, "weft_redop_create_pre_mul_sum"));
    weft::runtime::Comm& c = weft::api::commOf(comm);
    weft::runtime::Comm::UserOp u;
    u.live = true;
    u.type = static_cast<int>(datatype);
    // Host memory only: the scalar is read now (a device-resident scalar would be read per call).
    std::memcpy(&u.scalar, scalar, weft_datatype_size(datatype));
    size_t i = 0;
    while (i < c.userOps.size() && c.userOps[i].live) ++i;
    if (i == c.userOps.size()) c.userOps.push_back(u);
    else c.userOps[i] = u;
    *op = static_cast<weft_redop_t>(weftNumOps + static_cast<int>(i));
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_redop_destroy(weft_redop_t op, weft_comm_t* comm) {
  return guard("weft_redop_destroy", [&]() -> Status {
    WEFT_ASSIGN_OR_RETURN(weft::api::CallScope scope, weft::api::enterComm(comm, "weft_redop_destroy"));
    weft::runtime::Comm& c = weft::api::commOf(comm);
    int v = static_cast<int>(op);
    size_t i = static_cast<size_t>(v) - weftNumOps;
    if (v < weftNumOps) return weft::invalidArgument(weft::strprintf("weft_redop_destroy: op %d is a built-in reduction", v));
    if (i >= c.userOps.size() || !c.userOps[i].live)
      return weft::invalidArgument(weft::strprintf("weft_redop_destroy: op %d is not a live op of this communicator", v));
    c.userOps[i].live = false;
    return Status::ok();
  });
}

}  // extern "C"
