// The C API's communicator handles: weft_comm_t holds a runtime::Comm; the registry of live
// handles lets every call check its handle before touching it (a destroyed or foreign pointer is
// an error message, not a crash) and lets abort wait for the calls in flight on another thread.
#pragma once

#include <atomic>
#include <mutex>
#include <set>

#include "core/base/status.h"
#include "core/runtime/comm.h"
#include "weft/weft.h"

struct weft_comm {
  weft::runtime::Comm impl;
};

namespace weft::api {

class Registry {
 public:
  void add(weft_comm* c);
  // Marks one more call in flight on `c`, unless it is unknown or being torn down.
  Status enter(const weft_comm* c, const char* what);
  static void leave(const weft_comm* c) { const_cast<weft_comm*>(c)->impl.activeCalls.fetch_sub(1); }
  // Takes `c` out for teardown: later calls fail; the caller then waits for calls in flight.
  Status take(weft_comm* c, const char* what);
  void remove(weft_comm* c);

 private:
  std::mutex mutex_;
  std::set<weft_comm*> live_;
};

Registry& registry();

// A call in flight on a communicator, for the call's duration.
class CallScope {
 public:
  explicit CallScope(const weft_comm* c) : c_(c) {}
  ~CallScope() {
    if (c_ != nullptr) Registry::leave(c_);
  }
  CallScope(CallScope&& o) noexcept : c_(o.c_) { o.c_ = nullptr; }
  CallScope& operator=(CallScope&&) = delete;
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  const weft_comm* c_;
};

// registry().enter + the scope that leaves.
Result<CallScope> enterComm(const weft_comm* c, const char* what);
inline runtime::Comm& commOf(weft_comm* c) { return c->impl; }
// The communicator may move data: init finished, no failure recorded.
Status readyForWork(runtime::Comm& c, const char* what);

}  // namespace weft::api
