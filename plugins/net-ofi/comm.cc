#include "plugins/net-ofi/comm.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <cerrno>

#include "plugins/net-ofi/log.h"

namespace weft::ofi {
namespace {
constexpr std::chrono::milliseconds kFirstProbe{500};
constexpr std::chrono::milliseconds kLastProbe{8000};
// A probe is one small message on a connection that already carried the handshake: a live
// peer's provider takes it at once, once the data queued ahead of it on the connection has gone.
// Ten seconds without delivery, plus the time that data needs at a crawl, means nobody is there.
constexpr std::chrono::seconds kProbeDeadline{10};
// 16 MB/s: far below any link, even loopback on a loaded 2-core VM, where a 1 GiB send queued
// ahead of the probe took over 10 s and the peer was wrongly declared gone.
constexpr double kCrawlBytesPerSecond = 16e6;
}  // namespace

weft_result_t codeForCompletionError(int err) {
  switch (err) {
    case FI_ETRUNC:
      return weftInvalidUsage;
    case FI_ECONNREFUSED: case FI_ECONNRESET: case FI_ECONNABORTED: case FI_ENOTCONN:
    case FI_ESHUTDOWN: case FI_ETIMEDOUT: case FI_EHOSTUNREACH: case FI_EADDRNOTAVAIL: case FI_EIO:
    case EPIPE:
      return weftRemoteError;
    default:
      return weftSystemError;
  }
}

Request::Request(Kind k, Comm* c, int count) : kind(k), owner(c), n(count) {
  for (int i = 0; i < kMaxRecvs; ++i) ops[i] = Op{{}, this, i};
}

void Request::opDone(int slot, size_t length) {
  sizes[slot] = length;
  --pending;
  owner->noteCompletion();
}

void Request::opFailed(int slot, int err, const std::string& text) {
  --pending;
  owner->noteCompletion();
  const char* what = kind == Kind::kSend ? "send of %zu bytes to %s" : "receive of up to %zu bytes from %s";
  char head[256];
  std::snprintf(head, sizeof(head), what, capacity[slot], owner->peer().c_str());
  (void)owner->fail(codeForCompletionError(err), std::string(head) + ": " + text);
}

Comm::Comm(Kind kind, std::shared_ptr<Domain> domain, std::unique_ptr<Endpoint> ep, fi_addr_t peer, uint32_t key,
           const TagLayout& tags, bool registerAlways)
    : kind_(kind), domain_(std::move(domain)), ep_(std::move(ep)), peer_(peer), key_(key), tags_(tags),
      registerAlways_(registerAlways), peerName_(ep_->describe(peer)), probeSendOp_{{}, this, kProbeSendSlot},
      probeRecvOp_{{}, this, kProbeRecvSlot}, probeEvery_(kFirstProbe) {}

Comm::~Comm() {
  // Registrations first (a provider may refuse to close an endpoint they are bound to), then the
  // endpoint: after that libfabric no longer touches the requests' operations.
  for (Request* r : live_)
    for (MrPtr& mr : r->temporary) mr.reset();
  for (Registration* g : regs_) g->mr.reset();
  ep_.reset();
  for (Request* r : live_) delete r;
  for (Registration* g : regs_) delete g;
  kind_ = Kind::kFreed;
}

weft_result_t Comm::fail(weft_result_t code, const std::string& message) {
  if (error_ != weftSuccess) return error_;
  error_ = code;
  return OFI_FAIL(code, "NET/OFI: %s", message.c_str());
}

void Comm::opDone(int slot, size_t) {
  if (slot == kAnswerSlot) controlDone_ = true;
  if (slot == kProbeSendSlot) {  // delivered: wait longer before the next one
    probeInFlight_ = probeStarted_ = false;
    quietSince_ = Clock::now();
    probeEvery_ = std::min<Clock::duration>(probeEvery_ * 2, kLastProbe);
  }
  if (slot == kProbeRecvSlot) {
    probeRecvPosted_ = false;  // the peer is alive and waiting on us: post for its next probe
    ++completions_;
  }
}

void Comm::opFailed(int slot, int err, const std::string& text) {
  if (slot == kAnswerSlot) (void)fail(codeForCompletionError(err), "answer to the connector at " + peerName_ + ": " + text);
  if (slot == kProbeSendSlot) {
    probeInFlight_ = probeStarted_ = false;
    (void)fail(weftRemoteError, "the peer at " + peerName_ + " is gone (a probe could not reach it): " + text);
  }
  if (slot == kProbeRecvSlot) probeRecvPosted_ = false;  // a stranger's oversized message: post again
}

void Comm::track(Request* r) {
  if (live_.empty() && !refused_) {
    quietSince_ = Clock::now();
    probeEvery_ = kFirstProbe;
  }
  refused_ = false;
  live_.insert(r);
}

void Comm::noteRefused() {
  if (refused_) return;
  if (live_.empty()) {
    quietSince_ = Clock::now();
    probeEvery_ = kFirstProbe;
  }
  refused_ = true;
}

std::chrono::steady_clock::duration Comm::probeDeadline() const {
  double ahead = 0;  // bytes of sends in flight, which the probe cannot overtake
  for (const Request* r : live_)
    if (r->kind == Kind::kSend)
      for (int i = 0; i < r->n; ++i) ahead += static_cast<double>(r->capacity[i]);
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      kProbeDeadline + std::chrono::duration<double>(ahead / kCrawlBytesPerSecond));
}

weft_result_t Comm::probePeer() {
  if (!probeRecvPosted_) {
    ssize_t rc = ep_->recv(&probeIn_, sizeof(probeIn_), nullptr, FI_ADDR_UNSPEC, tags_.control(kProbeTag), &probeRecvOp_);
    if (rc != 0 && rc != -FI_EAGAIN) return fail(weftSystemError, std::string("fi_trecv for probes: ") + fiErrorText(static_cast<int>(rc)));
    probeRecvPosted_ = rc == 0;
  }
  if (live_.empty() && !refused_) return weftSuccess;
  Clock::time_point now = Clock::now();
  if (probeStarted_) {
    // Delivered (or failed) probes end the round in opDone/opFailed; this one is still out.
    if (now - probeSentAt_ >= probeDeadline()) {
      long waited = static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(now - probeSentAt_).count());
      return fail(weftRemoteError, "the peer at " + peerName_ + " is gone: a probe could not be delivered in " +
                                       std::to_string(waited) + " s");
    }
    if (probeInFlight_) return weftSuccess;
  } else {
    if (completions_ != completionsSeen_) {
      completionsSeen_ = completions_;
      quietSince_ = now;
      probeEvery_ = kFirstProbe;
      return weftSuccess;
    }
    if (now - quietSince_ < probeEvery_) return weftSuccess;
    probeStarted_ = true;
    probeSentAt_ = now;
  }
  // Over a broken connection rxm answers -FI_EAGAIN while it tries to connect again: the
  // deadline above counts from the first attempt.
  ssize_t rc = ep_->send(&probeOut_, sizeof(probeOut_), nullptr, peer_, tags_.control(kProbeTag), &probeSendOp_);
  if (rc == -FI_EAGAIN) return weftSuccess;
  if (rc != 0) return fail(weftRemoteError, "probe of the peer at " + peerName_ + ": " + fiErrorText(static_cast<int>(rc)));
  probeInFlight_ = true;
  return weftSuccess;
}

weft_result_t Comm::regMr(void* data, size_t size, int type, void** mhandle) {
  if (mhandle == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: regMr: null mhandle pointer");
  if (type != WEFT_PTR_HOST) {
    return OFI_FAIL(weftInternalError, "NET/OFI: regMr: memory type 0x%x is not supported (host memory only)", type);
  }
  auto g = std::make_unique<Registration>(Registration{static_cast<char*>(data), size, nullptr, nullptr});
  if (domain_->needsLocalMr() || registerAlways_) {
    if (weft_result_t rc = registerMemory(data, size, FI_SEND | FI_RECV, &g->mr); rc != weftSuccess) return rc;
    g->desc = fi_mr_desc(g->mr.get());
  }
  regs_.insert(g.get());
  *mhandle = g.release();
  return weftSuccess;
}

weft_result_t Comm::deregMr(void* mhandle) {
  auto it = regs_.find(static_cast<Registration*>(mhandle));
  if (it == regs_.end()) {
    return OFI_FAIL(weftInvalidArgument, "NET/OFI: deregMr: %p is not a registration of this comm", mhandle);
  }
  delete *it;  // fi_close on the MR, if any
  regs_.erase(it);
  return weftSuccess;
}

weft_result_t Comm::checkBuffer(const char* call, const void* data, size_t size, void* mhandle) const {
  if (data == nullptr && size > 0) return OFI_FAIL(weftInvalidArgument, "NET/OFI: %s: null buffer of %zu bytes", call, size);
  if (mhandle == nullptr) return weftSuccess;
  auto* g = static_cast<Registration*>(mhandle);
  if (regs_.count(g) == 0) return OFI_FAIL(weftInvalidArgument, "NET/OFI: %s: unknown mhandle %p", call, mhandle);
  const char* p = static_cast<const char*>(data);
  if (size > 0 && (p < g->base || p + size > g->base + g->size)) {
    return OFI_FAIL(weftInvalidArgument, "NET/OFI: %s: buffer %p+%zu outside its registration %p+%zu", call, data, size,
                    static_cast<void*>(g->base), g->size);
  }
  return weftSuccess;
}

weft_result_t Comm::describeBuffer(Request& r, int slot, void* mhandle, uint64_t access) {
  if (mhandle != nullptr) {
    r.desc[slot] = static_cast<Registration*>(mhandle)->desc;
    return weftSuccess;
  }
  if (!(domain_->needsLocalMr() || registerAlways_) || r.capacity[slot] == 0) return weftSuccess;
  if (weft_result_t rc = registerMemory(r.data[slot], r.capacity[slot], access, &r.temporary[slot]); rc != weftSuccess) {
    return rc;
  }
  r.desc[slot] = fi_mr_desc(r.temporary[slot].get());
  return weftSuccess;
}

weft_result_t Comm::registerMemory(void* data, size_t size, uint64_t access, MrPtr* out) {
  fid_mr* mr = nullptr;
  // Keys matter only for RMA, which the plugin does not do; they must still be unique per domain.
  uint64_t key = domain_->providerKeys() ? 0 : domain_->nextKey();
  if (int rc = fi_mr_reg(domain_->get(), data, size, access, 0, key, 0, &mr, nullptr); rc != 0) {
    return OFI_FI_FAIL(weftSystemError, rc, "fi_mr_reg", "%p, %zu bytes", data, size);
  }
  out->reset(mr);
  if (domain_->mrPerEndpoint()) {
    int rc = fi_mr_bind(mr, &ep_->ep()->fid, 0);
    if (rc == 0) rc = fi_mr_enable(mr);
    if (rc != 0) return OFI_FI_FAIL(weftSystemError, rc, "fi_mr_bind", "%p, %zu bytes", data, size);
  }
  return weftSuccess;
}

weft_result_t Comm::progress() {
  if (weft_result_t rc = ep_->progress(); rc != weftSuccess) return fail(rc, "completion queue of the comm with " + peerName_ + " failed");
  if (error_ != weftSuccess) return error_;
  if (weft_result_t rc = postWaiting(); rc != weftSuccess) return rc;
  return probePeer();
}

weft_result_t Comm::test(Request* r, int* done, int* sizes) {
  *done = 0;
  if (live_.count(r) == 0) return OFI_FAIL(weftInvalidArgument, "NET/OFI: test: unknown request %p", static_cast<void*>(r));
  if (weft_result_t rc = progress(); rc != weftSuccess) return rc;
  if (r->pending > 0 || r->posted < r->n) return weftSuccess;
  *done = 1;
  if (sizes != nullptr)
    for (int i = 0; i < r->n; ++i) sizes[i] = static_cast<int>(r->sizes[i]);
  live_.erase(r);
  delete r;
  return weftSuccess;
}

}  // namespace weft::ofi
