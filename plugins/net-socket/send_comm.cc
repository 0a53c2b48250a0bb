#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <climits>
#include <algorithm>
#include <cstring>

#include "plugins/net-socket/comm.h"
#include "plugins/net-socket/log.h"

namespace weft::socket {
namespace {
// Larger writes only hold the socket longer: the receiver starts copying sooner when the
// stream arrives in pieces like this (iperf3 writes 128 KiB at a time).
constexpr uint64_t kMaxWrite = 256 * 1024;
}  // namespace

SendComm::~SendComm() {
  workers_.clear();  // helpers may still point into requests
  for (SendRequest* r : live_) delete r;
}

weft_result_t SendComm::isend(void* data, size_t size, int tag, void* mhandle, void** request) {
  *request = nullptr;
  if (error_->failed()) return error_->code();
  if (size > static_cast<size_t>(INT_MAX)) {
    // test() reports sizes as int: larger messages could not be reported.
    return SOCK_FAIL(weftInvalidArgument, "NET/Socket: isend: %zu bytes is above the %d-byte limit", size, INT_MAX);
  }
  if (weft_result_t rc = checkBuffer("isend", data, size, mhandle); rc != weftSuccess) return rc;
  if (live_.size() >= static_cast<size_t>(kMaxInFlight)) return weftSuccess;  // "not now": the host retries
  auto* r = new SendRequest();
  r->kind = Kind::kSend;
  r->owner = this;
  r->header = MessageHeader{size, tag, kHeaderMagic};
  r->data = static_cast<char*>(data);
  r->size = size;
  r->ctrlTotal = sizeof(MessageHeader) + (isInline(size) ? size : 0);
  live_.insert(r);
  queue_.push_back(r);
  if (!isInline(size)) enqueueStripe(r->data, size, &r->pendingChunks);
  *request = r;
  return progress();  // small messages usually leave right here
}

// After the socket said EAGAIN, wait for poll() to call it writable again: it does so only once
// a good share of the send buffer is free, as a blocking writer would wake. Writing into every
// few free bytes instead makes many tiny sends that cost more than they move.
bool SendComm::writable() {
  if (!ctrlFull_) return true;
  pollfd p{ctrl_.get(), POLLOUT, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  ctrlFull_ = false;
  return true;
}

weft_result_t SendComm::progress() {
  while (!queue_.empty() && writable()) {
    SendRequest* r = queue_.front();
    iovec iov[2];
    int n = 0;
    const size_t hdr = sizeof(MessageHeader);
    if (r->ctrlDone < hdr) {
      iov[n++] = {reinterpret_cast<char*>(&r->header) + r->ctrlDone, hdr - r->ctrlDone};
    }
    if (r->ctrlTotal > hdr) {
      size_t payloadDone = r->ctrlDone > hdr ? r->ctrlDone - hdr : 0;
      iov[n++] = {r->data + payloadDone, std::min<uint64_t>(r->ctrlTotal - hdr - payloadDone, kMaxWrite)};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t sent = ::sendmsg(ctrl_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) ctrlFull_ = true;
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return weftSuccess;
      return error_->fail(weftRemoteError, "send to " + peer_ + ": " + std::strerror(errno));
    }
    r->ctrlDone += static_cast<uint64_t>(sent);
    if (r->ctrlDone == r->ctrlTotal) queue_.pop_front();
  }
  return weftSuccess;
}

weft_result_t SendComm::test(SendRequest* r, int* done, int* sizes) {
  *done = 0;
  if (live_.count(r) == 0) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: test: unknown send request %p", static_cast<void*>(r));
  // Control bytes of any queued request (later ones too: their headers let the receiver
  // start on them) need the socket; otherwise only helpers have work left.
  if (!queue_.empty()) {
    if (weft_result_t rc = progress(); rc != weftSuccess) return rc;
  }
  if (error_->failed()) return error_->code();
  if (r->ctrlDone < r->ctrlTotal || r->pendingChunks.load(std::memory_order_acquire) != 0) return weftSuccess;
  *done = 1;
  if (sizes != nullptr) sizes[0] = static_cast<int>(r->size);
  live_.erase(r);
  delete r;
  return weftSuccess;
}

}  // namespace weft::socket
