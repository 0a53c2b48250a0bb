#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "plugins/net-socket/comm.h"
#include "plugins/net-socket/log.h"

namespace weft::socket {
namespace {
// 64 KiB of staging lets one recv() pick up many small messages with their headers; payloads
// at least this large (kDirect) are read straight into the user's buffer instead.
constexpr size_t kStageBytes = 64 * 1024;
constexpr uint64_t kDirect = 4096;
// One staging read takes at most this much: enough for dozens of small messages, and little
// of a large payload, which is better read straight into its buffer than copied twice.
constexpr size_t kStageRead = 4096;
}  // namespace

RecvComm::RecvComm(Fd ctrl, std::vector<Fd> data, int nThreads, std::string peer)
    : Comm(Kind::kRecv, std::move(ctrl), std::move(data), nThreads, std::move(peer)), stage_(kStageBytes) {}

RecvComm::~RecvComm() {
  workers_.clear();
  for (RecvRequest* r : live_) delete r;
}

weft_result_t RecvComm::irecv(int n, void** data, const size_t* sizes, const int* tags, void** mhandles,
                              void** request) {
  *request = nullptr;
  if (error_->failed()) return error_->code();
  if (n < 1 || n > kMaxRecvs) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: irecv: n=%d outside 1..%d", n, kMaxRecvs);
  if (data == nullptr || sizes == nullptr || tags == nullptr) {
    return SOCK_FAIL(weftInvalidArgument, "NET/Socket: irecv: null data, sizes or tags array");
  }
  for (int i = 0; i < n; ++i) {
    void* mh = mhandles != nullptr ? mhandles[i] : nullptr;
    if (weft_result_t rc = checkBuffer("irecv", data[i], sizes[i], mh); rc != weftSuccess) return rc;
  }
  if (live_.size() >= static_cast<size_t>(kMaxInFlight)) return weftSuccess;  // "not now"
  auto* r = new RecvRequest();
  r->kind = Kind::kRecv;
  r->owner = this;
  r->n = n;
  r->unmatched = n;
  for (int i = 0; i < n; ++i) r->slots[i] = RecvSlot{static_cast<char*>(data[i]), sizes[i], tags[i]};
  live_.insert(r);
  posted_.push_back(r);
  *request = r;
  return progress();
}

weft_result_t RecvComm::peerGone() {
  bool waiting = !posted_.empty() || payloadReq_ != nullptr;
  if (!waiting) return weftSuccess;  // a peer that closed after its last message is normal
  return error_->fail(weftRemoteError, "connection closed by peer " + peer_ + " with receives pending");
}

weft_result_t RecvComm::fillStage(bool& blocked) {
  if (stageBegin_ == stageEnd_) stageBegin_ = stageEnd_ = 0;
  if (stageEnd_ == stage_.size()) {  // keep the unread tail, make room after it
    std::memmove(stage_.data(), stage_.data() + stageBegin_, stageEnd_ - stageBegin_);
    stageEnd_ -= stageBegin_;
    stageBegin_ = 0;
  }
  if (peerClosed_) {
    blocked = true;
    return peerGone();
  }
  size_t n = 0;
  size_t want = std::min(stage_.size() - stageEnd_, kStageRead);
  weft_result_t rc = readControl(stage_.data() + stageEnd_, want, n, blocked);
  stageEnd_ += n;
  return rc;
}

weft_result_t RecvComm::readControl(char* at, size_t want, size_t& got, bool& blocked) {
  got = 0;
  ssize_t n = ::recv(ctrl_.get(), at, want, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      blocked = true;
      return weftSuccess;
    }
    return error_->fail(weftRemoteError, "receive from " + peer_ + ": " + std::strerror(errno));
  }
  if (n == 0) {
    peerClosed_ = true;
    blocked = true;
    return peerGone();
  }
  got = static_cast<size_t>(n);
  return weftSuccess;
}

weft_result_t RecvComm::readPayload(bool& blocked) {
  uint64_t fromStage = std::min<uint64_t>(payloadLeft_, stageEnd_ - stageBegin_);
  std::memcpy(payloadAt_, stage_.data() + stageBegin_, fromStage);
  stageBegin_ += fromStage;
  payloadAt_ += fromStage;
  payloadLeft_ -= fromStage;
  if (payloadLeft_ == 0) {
    payloadReq_->inlinePending = 0;
    payloadReq_ = nullptr;
    return weftSuccess;
  }
  if (payloadLeft_ < kDirect) return fillStage(blocked);
  size_t n = 0;
  weft_result_t rc = readControl(payloadAt_, payloadLeft_, n, blocked);
  payloadAt_ += n;
  payloadLeft_ -= n;
  return rc;
}

// Finds the first posted slot waiting for this tag, in posting order; none: the message waits.
weft_result_t RecvComm::match(const MessageHeader& h) {
  for (auto it = posted_.begin(); it != posted_.end(); ++it) {
    RecvRequest* r = *it;
    for (int i = 0; i < r->n; ++i) {
      RecvSlot& s = r->slots[i];
      if (s.received >= 0 || s.tag != h.tag) continue;
      if (h.size > s.capacity) {
        return error_->fail(weftInvalidUsage, "message of " + std::to_string(h.size) + " bytes from " + peer_ +
                                                   " for a receive of " + std::to_string(s.capacity) +
                                                   " bytes (tag " + std::to_string(h.tag) + ")");
      }
      stageBegin_ += sizeof(MessageHeader);
      s.received = static_cast<int64_t>(h.size);
      if (--r->unmatched == 0) posted_.erase(it);
      if (!isInline(h.size)) {
        enqueueStripe(s.data, h.size, &r->pendingChunks);
      } else if (h.size > 0) {
        r->inlinePending = 1;
        payloadReq_ = r;
        payloadAt_ = s.data;
        payloadLeft_ = h.size;
      }
      return weftSuccess;
    }
  }
  return weftInProgress;
}

weft_result_t RecvComm::readHeader(bool& blocked) {
  if (stageEnd_ - stageBegin_ < sizeof(MessageHeader)) return fillStage(blocked);
  MessageHeader h;
  std::memcpy(&h, stage_.data() + stageBegin_, sizeof(h));
  if (h.magic != kHeaderMagic) {
    return error_->fail(weftRemoteError, "corrupt message header from " + peer_ + " (stream out of sync)");
  }
  weft_result_t rc = match(h);
  if (rc == weftInProgress) {
    blocked = true;  // no receive posted for this tag yet
    return weftSuccess;
  }
  return rc;
}

weft_result_t RecvComm::progress() {
  for (;;) {
    if (error_->failed()) return error_->code();
    bool blocked = false;
    weft_result_t rc = payloadReq_ != nullptr ? readPayload(blocked) : readHeader(blocked);
    if (rc != weftSuccess || blocked) return rc;
  }
}

weft_result_t RecvComm::test(RecvRequest* r, int* done, int* sizes) {
  *done = 0;
  if (live_.count(r) == 0) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: test: unknown receive request %p", static_cast<void*>(r));
  // Read on while any receive waits for its header or inline bytes, not only this one's: a
  // later message's header hands its chunks to the helpers while this one finishes.
  if (!posted_.empty() || payloadReq_ != nullptr) {
    if (weft_result_t rc = progress(); rc != weftSuccess) return rc;
  }
  if (error_->failed()) return error_->code();
  if (r->unmatched > 0 || r->inlinePending != 0 || r->pendingChunks.load(std::memory_order_acquire) != 0) {
    return weftSuccess;
  }
  *done = 1;
  if (sizes != nullptr)
    for (int i = 0; i < r->n; ++i) sizes[i] = static_cast<int>(r->slots[i].received);
  live_.erase(r);
  delete r;
  return weftSuccess;
}

}  // namespace weft::socket
