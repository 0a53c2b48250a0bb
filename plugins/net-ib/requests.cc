#include "plugins/net-ib/requests.h"

namespace weft::ib {

int RequestTable::acquire(RequestKind kind, int n) {
  if (kind == RequestKind::kFree || n < 1 || n > kMaxRecvs) return -1;
  int slot = static_cast<int>(next_ % kMaxRequests);
  RequestState& s = at(slot);
  if (s.kind != RequestKind::kFree) return -1;
  s = RequestState{};
  s.kind = kind;
  s.n = n;
  ++next_;
  return slot;
}

int RequestTable::acquireFree(RequestKind kind) {
  if (kind == RequestKind::kFree) return -1;
  for (int slot = 0; slot < kMaxRequests; ++slot) {
    if (at(slot).kind != RequestKind::kFree) continue;
    at(slot) = RequestState{};
    at(slot).kind = kind;
    at(slot).n = 1;
    return slot;
  }
  return -1;
}

bool RequestTable::land(int slot, int index, size_t size, std::string* why) {
  if (slot < 0 || slot >= kMaxRequests || at(slot).kind == RequestKind::kFree) {
    *why = "completion for request slot " + std::to_string(slot) + ", which is not in use";
    return false;
  }
  RequestState& s = at(slot);
  if (index < 0 || index >= s.n || s.landed[static_cast<size_t>(index)]) {
    *why = "completion for buffer " + std::to_string(index) + " of request slot " + std::to_string(slot) + " (" +
           std::to_string(s.n) + " buffers, " + std::to_string(s.arrived) + " landed)";
    return false;
  }
  s.landed[static_cast<size_t>(index)] = true;
  s.sizes[static_cast<size_t>(index)] = size;
  ++s.arrived;
  return true;
}

int RequestTable::inUse() const {
  int n = 0;
  for (const RequestState& s : slots_) n += s.kind != RequestKind::kFree;
  return n;
}

}  // namespace weft::ib
