// Request bookkeeping of a comm, without verbs: which of the WEFT_NET_MAX_REQUESTS slots are in
// use, and when a multi-receive is complete. A receive of n buffers completes when all n of its
// sends have landed (each reports its own size); a send completes when its write has been
// acknowledged. Slots are handed out in sequence order, because the two ends agree on the slot
// of the k-th receive (k mod WEFT_NET_MAX_REQUESTS) without talking.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/net.h"

namespace weft::ib {

inline constexpr int kMaxRecvs = 8;  // buffers one irecv may group (NCCL's IB transport: 8)
inline constexpr int kMaxRequests = WEFT_NET_MAX_REQUESTS;

enum class RequestKind : uint8_t { kFree, kSend, kRecv };

struct RequestState {
  RequestKind kind = RequestKind::kFree;
  int n = 0;        // buffers (1 for a send)
  int arrived = 0;  // buffers whose completion was seen
  int outstanding = 0;  // local work requests not yet completed (the FIFO write of a receive)
  std::array<size_t, kMaxRecvs> sizes{};
  std::array<bool, kMaxRecvs> landed{};

  bool done() const { return kind != RequestKind::kFree && arrived == n && outstanding == 0; }
};

class RequestTable {
 public:
  // The slot of the next request in sequence, or -1 when that slot is still in use (the host
  // has more than kMaxRequests requests in flight, or tests them out of order).
  int acquire(RequestKind kind, int n);
  // Any free slot, for requests the peer does not count (sends); -1 when all are in use.
  int acquireFree(RequestKind kind);
  // Marks buffer `index` of the request in `slot` as landed with `size` bytes. false, with
  // `*why`, when the slot is free, the index out of range or already landed: the peer wrote
  // something this side never asked for.
  bool land(int slot, int index, size_t size, std::string* why);
  RequestState& at(int slot) { return slots_[static_cast<size_t>(slot)]; }
  const RequestState& at(int slot) const { return slots_[static_cast<size_t>(slot)]; }
  // Frees a slot (its request was reported done, or the comm is closing).
  void release(int slot) { slots_[static_cast<size_t>(slot)] = RequestState{}; }
  int inUse() const;
  uint64_t sequence() const { return next_; }

 private:
  std::array<RequestState, kMaxRequests> slots_{};
  uint64_t next_ = 0;
};

}  // namespace weft::ib
