#include "core/device/proxy.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include "core/base/strings.h"
#include "core/device/work.h"

namespace weft::device {
namespace {

uint64_t loadAcquire(const uint64_t* p) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(p)).load(std::memory_order_acquire);
}
void storeRelease(uint64_t* p, uint64_t v) { std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_release); }
uint32_t loadFlag(const uint32_t* p) {
  return std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(p)).load(std::memory_order_acquire);
}

char* slotOf(const ProxyFifo& f, const ProxySlot& s, uint64_t step) {
  return s.proto == kDevLL ? f.ll + (step % kSteps) * f.llBytes : f.simple + (step % kSteps) * f.simpleBytes;
}

// LL lines {data1, flag1, data2, flag2} into a FIFO the kernel polls: data first, then the flags
// released (the kernel's reader takes a line whose two flags are the step's).
void copyLines(char* dst, const char* src, size_t bytes) {
  auto* d = reinterpret_cast<uint32_t*>(dst);
  const auto* s = reinterpret_cast<const uint32_t*>(src);
  for (size_t i = 0; i < bytes / 16; ++i, d += 4, s += 4) {
    d[0] = s[0];
    d[2] = s[2];
    std::atomic_ref<uint32_t>(d[1]).store(s[1], std::memory_order_release);
    std::atomic_ref<uint32_t>(d[3]).store(s[3], std::memory_order_release);
  }
}

}  // namespace

NetProxy::NetProxy(runtime::Comm& comm) : comm_(comm) {}

NetProxy::~NetProxy() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int NetProxy::add(std::unique_ptr<Conn> c) {
  std::lock_guard<std::mutex> lock(mu_);
  conns_.push_back(std::move(c));
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  return static_cast<int>(conns_.size()) - 1;
}

int NetProxy::addSend(std::unique_ptr<runtime::SendConnection> s, const ProxyFifo& fifo, int channel, int peer) {
  auto c = std::make_unique<Conn>();
  c->send = std::move(s);
  c->fifo = fifo;
  c->channel = channel;
  c->peer = peer;
  return add(std::move(c));
}

int NetProxy::addRecv(std::unique_ptr<runtime::RecvConnection> r, const ProxyFifo& fifo, int channel, int peer) {
  auto c = std::make_unique<Conn>();
  c->recv = std::move(r);
  c->fifo = fifo;
  c->channel = channel;
  c->peer = peer;
  return add(std::move(c));
}

void NetProxy::post(int id, const std::vector<ProxySlot>& slots) {
  if (slots.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const ProxySlot& s : slots) incoming_.emplace_back(id, s);
  }
  cv_.notify_all();
}

Status NetProxy::progressSend(Conn& c, bool* progressed) {
  while (!c.queue.empty()) {
    const ProxySlot s = c.queue.front();
    const uint64_t k = c.done;
    const char* src = slotOf(c.fifo, s, k);
    if (s.proto == kDevLL) {
      // The kernel's threads store their lines one by one: the slot is full when every line of it
      // carries this step's flag (NCCL's proxy checks LL flags the same way).
      const auto flag = static_cast<uint32_t>(k + 1);
      const size_t lines = s.bytes / 16;
      const auto* l = reinterpret_cast<const uint32_t*>(src);
      while (c.linesSeen < lines && loadFlag(l + 4 * c.linesSeen + 1) == flag && loadFlag(l + 4 * c.linesSeen + 3) == flag)
        ++c.linesSeen;
      if (c.linesSeen < lines) break;
    } else if (loadAcquire(c.fifo.tail) < k + 1) {
      break;
    }
    WEFT_ASSIGN_OR_RETURN(void* dst, c.send->acquire());
    if (dst == nullptr) break;  // every plugin slot in flight
    std::memcpy(dst, src, s.bytes);
    WEFT_TRY(c.send->post(s.bytes, false));
    storeRelease(c.fifo.head, k + 1);  // the kernel may fill the slot again
    ++c.done;
    c.linesSeen = 0;
    c.queue.pop_front();
    c.draining = true;
    *progressed = true;
  }
  if (c.draining) {
    WEFT_ASSIGN_OR_RETURN(bool idle, c.send->drain());
    if (idle) c.draining = false;
  }
  return Status::ok();
}

Status NetProxy::progressRecv(Conn& c, bool* progressed) {
  while (!c.queue.empty()) {
    const ProxySlot s = c.queue.front();
    const uint64_t k = c.done;
    if (k >= kSteps && loadAcquire(c.fifo.head) < k + 1 - kSteps) break;  // the kernel still reads slot k - kSteps
    size_t bytes = 0;
    bool last = false;
    const int want = static_cast<int>(std::min<size_t>(c.queue.size(), kSteps));
    WEFT_ASSIGN_OR_RETURN(const void* data, c.recv->peek(&bytes, &last, want));
    if (data == nullptr) break;
    if (bytes != s.bytes)
      return invalidUsage(strprintf("GPU connection from rank %d on channel %d: its step %llu has %zu bytes, this "
                                    "rank's collective expects %u (%s): the ranks called different collectives or counts",
                                    c.peer, c.channel, static_cast<unsigned long long>(k), bytes, s.bytes,
                                    s.proto == kDevLL ? "LL" : "Simple"));
    char* dst = slotOf(c.fifo, s, k);
    if (s.proto == kDevLL) {
      copyLines(dst, static_cast<const char*>(data), bytes);
    } else {
      WEFT_ASSIGN_OR_RETURN(bool copied, c.recv->copyOut(dst, data, bytes));
      if (!copied) break;
      storeRelease(c.fifo.tail, k + 1);
    }
    WEFT_TRY(c.recv->release());
    ++c.done;
    c.queue.pop_front();
    *progressed = true;
  }
  return Status::ok();
}

void NetProxy::run() {
  std::vector<Conn*> active;
  size_t known = 0;
  unsigned idle = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto busy = [&] {
        return std::any_of(active.begin(), active.end(), [](const Conn* c) { return !c->queue.empty() || c->draining; });
      };
      if (!quit_ && incoming_.empty() && !busy()) {
        cv_.wait(lock, [&] { return quit_ || !incoming_.empty(); });
        idle = 0;
      }
      if (quit_) return;
      for (; known < conns_.size(); ++known) active.push_back(conns_[known].get());
      for (const auto& [id, slot] : incoming_) conns_[static_cast<size_t>(id)]->queue.push_back(slot);
      incoming_.clear();
    }
    if (comm_.stop.load()) {
      // The kernels leave at the abort flag; what they would have moved is dropped.
      for (Conn* c : active) {
        c->queue.clear();
        c->draining = false;
      }
      continue;
    }
    bool progressed = false;
    Status s;
    for (Conn* c : active) {
      s = c->send ? progressSend(*c, &progressed) : progressRecv(*c, &progressed);
      if (!s.isOk()) break;
    }
    if (!s.isOk()) {
      s = comm_.rootCause(std::move(s));
      comm_.fail(s, s.failedRank() >= 0 ? s.failedRank() : comm_.rank);
      continue;
    }
    if (progressed) {
      idle = 0;
    } else if (++idle < 64) {
      std::this_thread::yield();
    } else {
      // Waiting for a kernel that has not started (its stream is behind) or a slow peer.
      std::this_thread::sleep_for(std::chrono::microseconds(idle < 1024 ? 5 : 50));
    }
  }
}

}  // namespace weft::device
