#include <rdma/fi_errno.h>

#include "plugins/net-ofi/comm.h"
#include "plugins/net-ofi/log.h"

namespace weft::ofi {

weft_result_t RecvComm::start(const Hello& answer) {
  answer_ = answer;
  answerOp_ = Op{{}, this, 0};
  return postWaiting();
}

weft_result_t RecvComm::answerSent(bool* sent) {
  *sent = false;
  if (weft_result_t rc = progress(); rc != weftSuccess) return rc;
  *sent = controlDone_;
  return weftSuccess;
}

weft_result_t RecvComm::irecv(int n, void** data, const size_t* sizes, const int* tags, void** mhandles,
                              void** request) {
  *request = nullptr;
  if (error_ != weftSuccess) return error_;
  if (n < 1 || n > kMaxRecvs) return OFI_FAIL(weftInvalidArgument, "NET/OFI: irecv: n=%d outside 1..%d", n, kMaxRecvs);
  if (data == nullptr || sizes == nullptr || tags == nullptr) {
    return OFI_FAIL(weftInvalidArgument, "NET/OFI: irecv: null data, sizes or tags array");
  }
  for (int i = 0; i < n; ++i) {
    void* mh = mhandles != nullptr ? mhandles[i] : nullptr;
    if (weft_result_t rc = checkBuffer("irecv", data[i], sizes[i], mh); rc != weftSuccess) return rc;
  }
  if (tooBusy()) return progress();  // "not now"
  auto r = std::make_unique<Request>(Kind::kRecv, this, n);
  for (int i = 0; i < n; ++i) {
    r->data[i] = static_cast<char*>(data[i]);
    r->capacity[i] = sizes[i];
    r->tags[i] = tags_.data(key_, tags[i]);
    if (weft_result_t rc = describeBuffer(*r, i, mhandles != nullptr ? mhandles[i] : nullptr, FI_RECV); rc != weftSuccess) {
      return rc;
    }
  }
  track(r.get());
  waiting_.push_back(r.get());
  *request = r.release();
  return postWaiting();
}

// Posts what waits, oldest first: the answer hello, then receive slots. A slot the provider has
// no room for (-FI_EAGAIN) stops the walk; later slots must not overtake it, or messages with a
// reused tag would land in the wrong receive.
weft_result_t RecvComm::postWaiting() {
  if (!answerPosted_ && answer_.magic == kHelloMagic) {
    size_t len = offsetof(Hello, addr) + answer_.addrLen;
    ssize_t rc = ep_->send(&answer_, len, nullptr, peer_, tags_.control(kAcceptTag), &answerOp_);
    if (rc == -FI_EAGAIN) return weftSuccess;
    if (rc != 0) return fail(weftSystemError, "fi_tsend of the answer to " + peerName_ + ": " + fiErrorText(static_cast<int>(rc)));
    answerPosted_ = true;
  }
  while (!waiting_.empty()) {
    Request& r = *waiting_.front();
    while (r.posted < r.n) {
      int i = r.posted;
      // FI_ADDR_UNSPEC: the key in the tag already names the connection (no FI_DIRECTED_RECV needed).
      ssize_t rc = ep_->recv(r.data[i], r.capacity[i], r.desc[i], FI_ADDR_UNSPEC, r.tags[i], &r.ops[i]);
      if (rc == -FI_EAGAIN) return weftSuccess;
      if (rc != 0) {
        return fail(weftSystemError, "fi_trecv of " + std::to_string(r.capacity[i]) + " bytes from " + peerName_ + ": " +
                                         fiErrorText(static_cast<int>(rc)));
      }
      ++r.pending;
      ++r.posted;
    }
    waiting_.pop_front();
  }
  return weftSuccess;
}

}  // namespace weft::ofi
