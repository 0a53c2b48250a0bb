#include "plugins/net-ib/comm.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "plugins/net-ib/log.h"

namespace weft::ib {
namespace {
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
constexpr int kPollBatch = 16;
}  // namespace

Comm::~Comm() {
  for (Registration* g : regs_) delete g;
  ep_.reset();
  kind_ = Kind::kFreed;
}

weft_result_t Comm::fail(weft_result_t code, const std::string& message) {
  if (error_ != weftSuccess) return error_;
  error_ = code;
  return IB_FAIL(code, "NET/IB: %s: %s", ep_->device().name.c_str(), message.c_str());
}

weft_result_t Comm::keep(ibv_mr* mr, void* data, size_t size, const char* call, void** mhandle) {
  if (mr == nullptr) {
    int err = errno;
    return IB_VERBS_FAIL(weftSystemError, err, call, "%s, %p, %zu bytes", ep_->device().name.c_str(), data, size);
  }
  auto g = std::make_unique<Registration>(Registration{static_cast<char*>(data), size, MrPtr(mr)});
  regs_.insert(g.get());
  *mhandle = g.release();
  return weftSuccess;
}

weft_result_t Comm::regMr(void* data, size_t size, int type, void** mhandle) {
  if (mhandle == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: regMr: null mhandle pointer");
  if (type != WEFT_PTR_HOST) return IB_FAIL(weftInternalError, "NET/IB: regMr: memory type 0x%x is not supported (host memory only)", type);
  return keep(ibv_reg_mr(ep_->pd(), data, size, kAccess), data, size, "ibv_reg_mr", mhandle);
}

weft_result_t Comm::regMrDmaBuf(void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle) {
  if (mhandle == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: regMrDmaBuf: null mhandle pointer");
  if (!ep_->device().hca->dmabuf) {
    return IB_FAIL(weftInternalError, "NET/IB: regMrDmaBuf: %s does not support dmabuf registration (ibv_reg_dmabuf_mr)",
                   ep_->device().name.c_str());
  }
  (void)type;  // the dmabuf fd says what the memory is
  ibv_mr* mr = ibv_reg_dmabuf_mr(ep_->pd(), offset, size, reinterpret_cast<uint64_t>(data), fd, kAccess);
  return keep(mr, data, size, "ibv_reg_dmabuf_mr", mhandle);
}

weft_result_t Comm::deregMr(void* mhandle) {
  auto it = regs_.find(static_cast<Registration*>(mhandle));
  if (it == regs_.end()) return IB_FAIL(weftInvalidArgument, "NET/IB: deregMr: %p is not a registration of this comm", mhandle);
  delete *it;  // ibv_dereg_mr
  regs_.erase(it);
  return weftSuccess;
}

Registration* Comm::registrationFor(const char* call, const void* data, size_t size, void* mhandle) {
  auto* g = static_cast<Registration*>(mhandle);
  if (g == nullptr || regs_.count(g) == 0) {
    (void)IB_FAIL(weftInvalidArgument, "NET/IB: %s: mhandle %p is not a registration of this comm", call, mhandle);
    return nullptr;
  }
  const char* p = static_cast<const char*>(data);
  if (size > 0 && (p < g->base || p + size > g->base + g->size)) {
    (void)IB_FAIL(weftInvalidArgument, "NET/IB: %s: buffer %p+%zu outside its registration %p+%zu", call, data, size,
                  static_cast<void*>(g->base), g->size);
    return nullptr;
  }
  return g;
}

Request* Comm::handOut(Kind kind, int slot) {
  Request& r = requests_[static_cast<size_t>(slot)];
  r = Request{kind, this, slot};
  return &r;
}

weft_result_t Comm::poll() {
  if (error_ != weftSuccess) return error_;
  ibv_wc wcs[kPollBatch];
  for (;;) {
    int n = ibv_poll_cq(ep_->cq(), kPollBatch, wcs);
    if (n < 0) return fail(weftSystemError, "ibv_poll_cq failed");
    for (int i = 0; i < n; ++i) {
      if (wcs[i].status != IBV_WC_SUCCESS) {
        return fail(weftRemoteError, std::string("work request failed: ") + ibv_wc_status_str(wcs[i].status) +
                                         " (status " + std::to_string(wcs[i].status) + ", vendor error " +
                                         std::to_string(wcs[i].vendor_err) + ")");
      }
      if (weft_result_t rc = onCompletion(wcs[i]); rc != weftSuccess) return rc;
    }
    if (n < kPollBatch) return weftSuccess;
  }
}

weft_result_t Comm::test(Request* r, int* done, int* sizes) {
  *done = 0;
  if (r->owner != this || r->slot < 0 || r->slot >= kMaxRequests || table_.at(r->slot).kind == RequestKind::kFree) {
    return IB_FAIL(weftInvalidArgument, "NET/IB: test: %p is not a live request of this comm", static_cast<void*>(r));
  }
  if (weft_result_t rc = poll(); rc != weftSuccess) return rc;
  const RequestState& s = table_.at(r->slot);
  if (!s.done()) return weftSuccess;
  *done = 1;
  if (sizes != nullptr)
    for (int i = 0; i < s.n; ++i) sizes[i] = static_cast<int>(s.sizes[static_cast<size_t>(i)]);
  table_.release(r->slot);
  r->kind = Kind::kFreed;
  return weftSuccess;
}

SendComm::SendComm(std::unique_ptr<Endpoint> ep, std::unique_ptr<FifoEntry[]> fifo, MrPtr fifoMr)
    : Comm(Kind::kSend, std::move(ep)), fifo_(std::move(fifo)), fifoMr_(std::move(fifoMr)) {}

SendComm::~SendComm() { ep_.reset(); }  // the QP first: nothing may write the FIFO after its MR goes

weft_result_t SendComm::isend(void* data, size_t size, int tag, void* mhandle, void** request) {
  *request = nullptr;
  if (weft_result_t rc = poll(); rc != weftSuccess) return rc;
  const int fifoSlot = static_cast<int>(next_ % kMaxRequests);
  volatile FifoEntry& e = fifo_[static_cast<size_t>(fifoSlot)];
  if (e.seq != next_ + 1) return weftSuccess;  // the receiver has not posted it yet: try again
  std::atomic_thread_fence(std::memory_order_acquire);
  int n = e.n, index = -1;
  if (n < 1 || n > kMaxRecvs) return fail(weftRemoteError, "FIFO entry " + std::to_string(next_) + " has " + std::to_string(n) + " buffers");
  for (int i = 0; i < n && index < 0; ++i)
    if (e.tag[i] == tag && !used_[static_cast<size_t>(i)]) index = i;
  if (index < 0) return IB_FAIL(weftInvalidUsage, "NET/IB: isend: no receive with tag %d posted in receive %llu", tag, static_cast<unsigned long long>(next_));
  if (size > e.size[index]) {
    return IB_FAIL(weftInvalidUsage, "NET/IB: isend: %zu bytes for a %llu-byte receive (tag %d)", size,
                   static_cast<unsigned long long>(e.size[index]), tag);
  }
  Registration* g = size > 0 ? registrationFor("isend", data, size, mhandle) : nullptr;
  if (size > 0 && g == nullptr) return weftInvalidArgument;
  int slot = table_.acquireFree(RequestKind::kSend);
  if (slot < 0) return weftSuccess;  // all slots busy: the host tests and tries again
  ibv_sge sge{reinterpret_cast<uint64_t>(data), static_cast<uint32_t>(size), g ? g->mr->lkey : 0};
  ibv_send_wr wr{};
  wr.wr_id = static_cast<uint64_t>(slot);
  wr.sg_list = size > 0 ? &sge : nullptr;
  wr.num_sge = size > 0 ? 1 : 0;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(immFor(fifoSlot, index));
  wr.wr.rdma.remote_addr = e.addr[index];
  wr.wr.rdma.rkey = e.rkey[index];
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ep_->qp(), &wr, &bad)) {
    table_.release(slot);
    return IB_VERBS_FAIL(weftSystemError, rc, "ibv_post_send", "%s, RDMA write with immediate of %zu bytes", ep_->device().name.c_str(), size);
  }
  table_.at(slot).sizes[0] = size;
  used_[static_cast<size_t>(index)] = true;
  int written = 0;
  for (int i = 0; i < n; ++i) written += used_[static_cast<size_t>(i)];
  if (written == n) {  // every buffer of this receive has its send: move to the next entry
    used_ = {};
    ++next_;
  }
  *request = handOut(Kind::kSend, slot);
  return weftSuccess;
}

weft_result_t SendComm::onCompletion(const ibv_wc& wc) {
  int slot = static_cast<int>(wc.wr_id);
  std::string why;
  if (!table_.land(slot, 0, table_.at(slot).sizes[0], &why)) return fail(weftInternalError, "send completion: " + why);
  return weftSuccess;
}

RecvComm::RecvComm(std::unique_ptr<Endpoint> ep, uint64_t remoteFifo, uint32_t remoteRkey)
    : Comm(Kind::kRecv, std::move(ep)), remoteFifo_(remoteFifo), remoteRkey_(remoteRkey),
      staging_(new FifoEntry[kMaxRequests]()) {}

RecvComm::~RecvComm() { ep_.reset(); }

weft_result_t RecvComm::init() {
  const size_t bytes = sizeof(FifoEntry) * kMaxRequests;
  stagingMr_.reset(ibv_reg_mr(ep_->pd(), staging_.get(), bytes, IBV_ACCESS_LOCAL_WRITE));
  if (!stagingMr_) return IB_VERBS_FAIL(weftSystemError, errno, "ibv_reg_mr", "%s, FIFO staging, %zu bytes", ep_->device().name.c_str(), bytes);
  return weftSuccess;
}

weft_result_t RecvComm::irecv(int n, void** data, const size_t* sizes, const int* tags, void** mhandles, void** request) {
  *request = nullptr;
  if (n < 1 || n > kMaxRecvs || data == nullptr || sizes == nullptr || tags == nullptr) {
    return IB_FAIL(weftInvalidArgument, "NET/IB: irecv: n=%d (1..%d) or null arrays", n, kMaxRecvs);
  }
  if (weft_result_t rc = poll(); rc != weftSuccess) return rc;
  FifoEntry entry{};
  for (int i = 0; i < n; ++i) {
    Registration* g = sizes[i] > 0 ? registrationFor("irecv", data[i], sizes[i], mhandles ? mhandles[i] : nullptr) : nullptr;
    if (sizes[i] > 0 && g == nullptr) return weftInvalidArgument;
    entry.addr[i] = reinterpret_cast<uint64_t>(data[i]);
    entry.size[i] = sizes[i];
    entry.rkey[i] = g ? g->mr->rkey : 0;
    entry.tag[i] = tags[i];
  }
  const uint64_t seq = table_.sequence();
  int slot = table_.acquire(RequestKind::kRecv, n);
  if (slot < 0) return weftSuccess;  // this slot's previous receive is not done: try again
  entry.n = n;
  entry.seq = seq + 1;
  // Receives for the writes first: they must be there before the sender may write.
  for (int i = 0; i < n; ++i) {
    ibv_recv_wr wr{};
    wr.wr_id = static_cast<uint64_t>(slot);
    ibv_recv_wr* bad = nullptr;
    if (int rc = ibv_post_recv(ep_->qp(), &wr, &bad)) {
      return fail(weftSystemError, std::string("ibv_post_recv: ") + std::strerror(rc) + " (errno " + std::to_string(rc) + ")");
    }
  }
  staging_[static_cast<size_t>(slot)] = entry;
  ibv_sge sge{reinterpret_cast<uint64_t>(&staging_[static_cast<size_t>(slot)]), sizeof(FifoEntry), stagingMr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = kFifoWrBit | static_cast<uint64_t>(slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remoteFifo_ + static_cast<uint64_t>(slot) * sizeof(FifoEntry);
  wr.wr.rdma.rkey = remoteRkey_;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ep_->qp(), &wr, &bad)) {
    return fail(weftSystemError, std::string("ibv_post_send (FIFO write): ") + std::strerror(rc) + " (errno " + std::to_string(rc) + ")");
  }
  table_.at(slot).outstanding = 1;
  *request = handOut(Kind::kRecv, slot);
  return weftSuccess;
}

weft_result_t RecvComm::onCompletion(const ibv_wc& wc) {
  std::string why;
  if (wc.opcode == IBV_WC_RDMA_WRITE && (wc.wr_id & kFifoWrBit) != 0) {
    int slot = static_cast<int>(wc.wr_id & ~kFifoWrBit);
    if (slot >= kMaxRequests || table_.at(slot).outstanding != 1) return fail(weftInternalError, "unexpected FIFO write completion");
    table_.at(slot).outstanding = 0;
    return weftSuccess;
  }
  if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM) return fail(weftInternalError, "unexpected completion opcode " + std::to_string(wc.opcode));
  uint32_t imm = ntohl(wc.imm_data);
  int slot = static_cast<int>(imm / kMaxRecvs), index = static_cast<int>(imm % kMaxRecvs);
  if (!table_.land(slot, index, wc.byte_len, &why)) return fail(weftRemoteError, "the peer wrote unasked: " + why);
  return weftSuccess;
}

}  // namespace weft::ib
