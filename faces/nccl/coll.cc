// Collectives, point-to-point and PreMulSum over weft's calls. Host buffers go to weft's host
// path with a NULL stream (it completes each call before it returns), after the work already
// queued on the caller's stream when a GPU is present. GPU buffers go to weft's device path with
// the caller's stream, as NCCL takes them.
#include <cstdio>
#include <string>

#include "faces/nccl/cuda.h"
#include "faces/nccl/face.h"

namespace weft::nccl {
namespace {

// What every data call does before weft sees it: the deferred init of `comm` finished and, with a
// GPU, the buffers sorted out. GPU buffers go to weft's device path with the caller's stream,
// which orders the kernel; host buffers go with a NULL stream once the stream's earlier work is
// done (data the GPU wrote into host memory is there). *weftStream is the stream to pass on.
ncclResult_t prepare(const char* call, ncclComm_t comm, cudaStream_t stream, const void* send, const void* recv,
                     void** weftStream) {
  *weftStream = nullptr;
  if (ncclResult_t rc = awaitDeferred(call, comm); rc != ncclSuccess) return rc;
  const CudaDriver* cuda = CudaDriver::get();
  if (cuda == nullptr) return ncclSuccess;  // no GPU: the stream argument is not used
  if ((send != nullptr && cuda->isDeviceMemory(send)) || (recv != nullptr && cuda->isDeviceMemory(recv))) {
    *weftStream = static_cast<void*>(stream);  // weft says so if only one of them is GPU memory
    return ncclSuccess;
  }
  std::string err = cuda->synchronize(static_cast<void*>(stream));
  if (!err.empty()) return fail(call, ncclUnhandledCudaError, "waiting for the stream's earlier work: " + err);
  return ncclSuccess;
}

weft_datatype_t type(ncclDataType_t t) { return static_cast<weft_datatype_t>(t); }
weft_redop_t op(ncclRedOp_t o) { return static_cast<weft_redop_t>(o); }

// Gather and Scatter as NCCL lowers them: the root receives (sends) one block per rank, every
// rank sends (receives) its own, all in one group.
ncclResult_t rootedExchange(const char* call, bool gather, const void* sendbuff, void* recvbuff, size_t count, void* ws,
                            ncclDataType_t datatype, int root, ncclComm_t comm) {
  size_t elt = weft_datatype_size(type(datatype));
  if (elt == 0) return fail(call, ncclInvalidArgument, "unknown datatype " + std::to_string(datatype) + " (expected 0..11)");
  int n = 0, me = 0;
  if (weft_comm_count(toWeft(comm), &n) != weftSuccess || weft_comm_user_rank(toWeft(comm), &me) != weftSuccess)
    return fromWeft(call, weftInvalidArgument);
  if (root < 0 || root >= n)
    return fail(call, ncclInvalidArgument,
                "root " + std::to_string(root) + " is not a rank of this communicator (0.." + std::to_string(n - 1) + ")");
  if (count == 0) return ncclSuccess;
  if (weft_group_start() != weftSuccess) return fromWeft(call, weftInternalError);
  weft_result_t rc = weftSuccess;
  const char* in = static_cast<const char*>(sendbuff);
  char* out = static_cast<char*>(recvbuff);
  if (gather) {
    rc = weft_send(in, count, type(datatype), root, toWeft(comm), ws);
    for (int r = 0; me == root && r < n && rc == weftSuccess; ++r)
      rc = weft_recv(out + static_cast<size_t>(r) * count * elt, count, type(datatype), r, toWeft(comm), ws);
  } else {
    for (int r = 0; me == root && r < n && rc == weftSuccess; ++r)
      rc = weft_send(in + static_cast<size_t>(r) * count * elt, count, type(datatype), r, toWeft(comm), ws);
    if (rc == weftSuccess) rc = weft_recv(out, count, type(datatype), root, toWeft(comm), ws);
  }
  std::string why = rc == weftSuccess ? std::string() : weft_last_error();
  weft_result_t end = weft_group_end();
  if (rc != weftSuccess) return fail(call, static_cast<ncclResult_t>(rc), why);
  return fromWeft(call, end);
}

}  // namespace
}  // namespace weft::nccl

using weft::nccl::fail;
using weft::nccl::fromWeft;
using weft::nccl::op;
using weft::nccl::prepare;
using weft::nccl::toWeft;
using weft::nccl::type;

WEFT_NCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
              ncclRedOp_t redop, ncclComm_t comm, cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclAllReduce", comm, stream, sendbuff, recvbuff, &ws); rc != ncclSuccess) return rc;
  return fromWeft("ncclAllReduce", weft_allreduce(sendbuff, recvbuff, count, type(datatype), op(redop), toWeft(comm), ws));
}

WEFT_NCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
              int root, ncclComm_t comm, cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclBroadcast", comm, stream, sendbuff, recvbuff, &ws); rc != ncclSuccess) return rc;
  return fromWeft("ncclBroadcast", weft_broadcast(sendbuff, recvbuff, count, type(datatype), root, toWeft(comm), ws));
}

WEFT_NCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
              cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclBcast", comm, stream, buff, buff, &ws); rc != ncclSuccess) return rc;
  return fromWeft("ncclBcast", weft_broadcast(buff, buff, count, type(datatype), root, toWeft(comm), ws));
}

WEFT_NCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
              ncclRedOp_t redop, int root, ncclComm_t comm, cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclReduce", comm, stream, sendbuff, recvbuff, &ws); rc != ncclSuccess) return rc;
  return fromWeft("ncclReduce",
                  weft_reduce(sendbuff, recvbuff, count, type(datatype), op(redop), root, toWeft(comm), ws));
}

WEFT_NCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
              ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclAllGather", comm, stream, sendbuff, recvbuff, &ws); rc != ncclSuccess) return rc;
  return fromWeft("ncclAllGather", weft_allgather(sendbuff, recvbuff, sendcount, type(datatype), toWeft(comm), ws));
}

WEFT_NCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
              ncclDataType_t datatype, ncclRedOp_t redop, ncclComm_t comm, cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclReduceScatter", comm, stream, sendbuff, recvbuff, &ws); rc != ncclSuccess) return rc;
  return fromWeft("ncclReduceScatter", weft_reduce_scatter(sendbuff, recvbuff, recvcount, type(datatype), op(redop),
                                                           toWeft(comm), ws));
}

WEFT_NCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
              ncclComm_t comm, cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclAlltoAll", comm, stream, sendbuff, recvbuff, &ws); rc != ncclSuccess) return rc;
  return fromWeft("ncclAlltoAll", weft_alltoall(sendbuff, recvbuff, count, type(datatype), toWeft(comm), ws));
}

WEFT_NCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
              int root, ncclComm_t comm, cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclGather", comm, stream, sendbuff, recvbuff, &ws); rc != ncclSuccess) return rc;
  return weft::nccl::rootedExchange("ncclGather", true, sendbuff, recvbuff, count, ws, datatype, root, comm);
}

WEFT_NCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
              int root, ncclComm_t comm, cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclScatter", comm, stream, sendbuff, recvbuff, &ws); rc != ncclSuccess) return rc;
  return weft::nccl::rootedExchange("ncclScatter", false, sendbuff, recvbuff, count, ws, datatype, root, comm);
}

WEFT_NCCL_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
              ncclComm_t comm, cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclSend", comm, stream, sendbuff, nullptr, &ws); rc != ncclSuccess) return rc;
  return fromWeft("ncclSend", weft_send(sendbuff, count, type(datatype), peer, toWeft(comm), ws));
}

WEFT_NCCL_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
              cudaStream_t stream) {
  void* ws = nullptr;
  if (ncclResult_t rc = prepare("ncclRecv", comm, stream, nullptr, recvbuff, &ws); rc != ncclSuccess) return rc;
  return fromWeft("ncclRecv", weft_recv(recvbuff, count, type(datatype), peer, toWeft(comm), ws));
}

WEFT_NCCL_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* redop, void* scalar, ncclDataType_t datatype,
              ncclScalarResidence_t residence, ncclComm_t comm) {
  const char* call = "ncclRedOpCreatePreMulSum";
  if (ncclResult_t rc = weft::nccl::awaitDeferred(call, comm); rc != ncclSuccess) return rc;
  if (const weft::nccl::CudaDriver* cuda = weft::nccl::CudaDriver::get(); cuda != nullptr && scalar != nullptr &&
                                                                         cuda->isDeviceMemory(scalar))
    return fail(call, ncclInvalidUsage, "the scalar is GPU memory: this weft build reads host memory only");
  weft_redop_t w = weftSum;
  weft_result_t rc = weft_redop_create_pre_mul_sum(&w, scalar, type(datatype), static_cast<weft_scalar_residence_t>(residence),
                                                   toWeft(comm));
  if (rc == weftSuccess && redop != nullptr) *redop = static_cast<ncclRedOp_t>(w);
  return fromWeft(call, rc);
}

WEFT_NCCL_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t redop, ncclComm_t comm) {
  return fromWeft("ncclRedOpDestroy", weft_redop_destroy(op(redop), toWeft(comm)));
}
