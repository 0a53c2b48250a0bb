#include <rdma/fi_errno.h>

#include <climits>

#include "plugins/net-ofi/comm.h"
#include "plugins/net-ofi/log.h"

namespace weft::ofi {

weft_result_t SendComm::isend(void* data, size_t size, int tag, void* mhandle, void** request) {
  *request = nullptr;
  if (error_ != weftSuccess) return error_;
  if (size > static_cast<size_t>(INT_MAX)) {
    // test() reports sizes as int: larger messages could not be reported.
    return OFI_FAIL(weftInvalidArgument, "NET/OFI: isend: %zu bytes is above the %d-byte limit", size, INT_MAX);
  }
  if (weft_result_t rc = checkBuffer("isend", data, size, mhandle); rc != weftSuccess) return rc;
  if (tooBusy()) return progress();  // "not now": the host retries
  auto r = std::make_unique<Request>(Kind::kSend, this, 1);
  r->data[0] = static_cast<char*>(data);
  r->capacity[0] = size;
  r->tags[0] = tags_.data(key_, tag);
  if (weft_result_t rc = describeBuffer(*r, 0, mhandle, FI_SEND); rc != weftSuccess) return rc;
  ssize_t rc = ep_->send(data, size, r->desc[0], peer_, r->tags[0], &r->ops[0]);
  if (rc == -FI_EAGAIN) {  // the provider's queue is full, or it is reconnecting: "not now"
    noteRefused();
    return progress();
  }
  if (rc != 0) {
    return fail(weftSystemError, std::string("fi_tsend of ") + std::to_string(size) + " bytes to " + peerName_ + ": " +
                                     fiErrorText(static_cast<int>(rc)));
  }
  r->pending = 1;
  r->posted = 1;
  track(r.get());
  *request = r.release();
  return weftSuccess;
}

}  // namespace weft::ofi
