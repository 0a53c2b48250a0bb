#include "plugins/net-socket/comm.h"

#include "plugins/net-socket/log.h"

namespace weft::socket {

Comm::Comm(Kind kind, Fd ctrl, std::vector<Fd> data, int nThreads, std::string peer)
    : kind_(kind), ctrl_(std::move(ctrl)), peer_(std::move(peer)) {
  if (data.empty()) return;
  int threads = nThreads < 1 ? 1 : nThreads > static_cast<int>(data.size()) ? static_cast<int>(data.size()) : nThreads;
  for (int t = 0; t < threads; ++t)
    workers_.push_back(std::make_unique<Worker>(kind == Kind::kSend, error_, peer_));
  for (size_t s = 0; s < data.size(); ++s) {
    int w = static_cast<int>(s % workers_.size());
    slotOfSocket_.emplace_back(w, workers_[static_cast<size_t>(w)]->addSocket(std::move(data[s])));
  }
  for (auto& w : workers_) w->start();
}

Comm::~Comm() {
  workers_.clear();  // join helpers first: they use the sockets and the requests' counters
  for (MemRegion* r : regions_) delete r;
  kind_ = Kind::kFreed;
}

weft_result_t Comm::regMr(void* data, size_t size, int type, void** mhandle) {
  if (mhandle == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: regMr: null mhandle pointer");
  if (type != WEFT_PTR_HOST) {
    return SOCK_FAIL(weftInternalError, "NET/Socket: regMr: memory type 0x%x is not supported (host memory only)",
                     type);
  }
  auto* r = new MemRegion{static_cast<char*>(data), size};
  regions_.insert(r);
  *mhandle = r;
  return weftSuccess;
}

weft_result_t Comm::deregMr(void* mhandle) {
  auto it = regions_.find(static_cast<MemRegion*>(mhandle));
  if (it == regions_.end()) {
    return SOCK_FAIL(weftInvalidArgument, "NET/Socket: deregMr: %p is not a registration of this comm", mhandle);
  }
  delete *it;
  regions_.erase(it);
  return weftSuccess;
}

weft_result_t Comm::checkBuffer(const char* call, const void* data, size_t size, void* mhandle) const {
  if (data == nullptr && size > 0) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: %s: null buffer of %zu bytes", call, size);
  if (mhandle == nullptr) return weftSuccess;
  auto* r = static_cast<MemRegion*>(mhandle);
  if (regions_.count(r) == 0) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: %s: unknown mhandle %p", call, mhandle);
  const char* p = static_cast<const char*>(data);
  if (size > 0 && (p < r->base || p + size > r->base + r->size)) {
    return SOCK_FAIL(weftInvalidArgument, "NET/Socket: %s: buffer %p+%zu outside its registration %p+%zu", call, data,
                     size, static_cast<void*>(r->base), r->size);
  }
  return weftSuccess;
}

void Comm::enqueueStripe(char* data, uint64_t size, std::atomic<int>* pending) {
  const int n = dataSockets();
  for (int s = 0; s < n; ++s) {
    Range range = stripeRange(size, s, n);
    if (range.length == 0) continue;
    pending->fetch_add(1, std::memory_order_relaxed);  // before the helper can finish it
    auto [w, slot] = slotOfSocket_[static_cast<size_t>(s)];
    workers_[static_cast<size_t>(w)]->enqueue(slot, Task{data + range.offset, range.length, 0, pending});
  }
}

}  // namespace weft::socket
