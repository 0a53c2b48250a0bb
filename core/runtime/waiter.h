// How a rank waits for its peers without a thread per connection, for point-to-point rounds and
// collectives alike. After a pass that moved nothing: spin (2 µs: a small step's peer answers
// within it; a longer spin only delays a peer that shares this CPU, as the scheduler arranges when
// other jobs load the machine: 2 hops x 20 µs of spin made an 8-byte allreduce take 44 µs), yield
// (to 500 µs: ranks that outnumber cores get the CPU), then sleep on the rank's bell when
// everything waited for is shared memory of one communicator (a peer that publishes rings it), or
// nap 50 µs (a net plugin moves data only while it is called). The clock is read once
// every 32 idle passes, so a pass stays short and the spin sees a peer's step as soon as it lands.
// When this host runs more ranks than the process may use CPUs (oversubscribed: 4 ranks on 2
// cores), spinning only burns the time slice the peer needs to send: the waiter then yields after
// every idle pass from the start (Open MPI's yield_when_idle does the same when oversubscribed).
#pragma once

#include <sched.h>

#include <algorithm>

#include <chrono>
#include <thread>

#include "core/base/status.h"
#include "core/runtime/shm.h"

namespace weft::runtime {

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The CPUs this process may run on (its affinity mask), read once.
inline int usableCpus() {
  static const int n = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
    return std::max(1, CPU_COUNT(&set));
  }();
  return n;
}

class Waiter {
 public:
  Waiter() = default;
  // `localRanks`: the ranks on this host (the most of any communicator waited on).
  explicit Waiter(int localRanks) : oversubscribed_(localRanks > usableCpus()) {}

  static constexpr auto kSpinFor = std::chrono::microseconds(2);
  static constexpr auto kYieldFor = std::chrono::microseconds(500);
  static constexpr auto kNap = std::chrono::microseconds(50);
  static constexpr auto kBellTimeout = std::chrono::milliseconds(100);  // stop flags are seen within this

  // A pass moved something: the next idle pass starts a new wait.
  void moved() { idle_ = false; }
  // How long nothing has moved (0 while things move).
  std::chrono::steady_clock::duration idleFor() const {
    return idle_ ? std::chrono::steady_clock::now() - since_ : std::chrono::steady_clock::duration::zero();
  }

  // After a pass that moved nothing. Every 32 such passes (oversubscribed: every one): `check()`
  // (the stop flags; its error is returned), then spin, yield or sleep as above. Before sleeping on `sleepOn` (null: nap),
  // `stillIdle()` runs one more pass after the sleep is announced and says whether nothing moved,
  // so no wake-up is lost; it records its own errors for the caller.
  template <typename Check, typename StillIdle>
  Status idle(Bell* sleepOn, Check&& check, StillIdle&& stillIdle) {
    if (!idle_) {
      idle_ = true;
      passes_ = 0;
      since_ = std::chrono::steady_clock::now();
    }
    const unsigned mask = oversubscribed_ ? 0u : 31u;
    if ((++passes_ & mask) != 0) {
      cpuRelax();
      return Status::ok();
    }
    WEFT_TRY(check());
    auto waited = std::chrono::steady_clock::now() - since_;
    if (waited < kSpinFor && !oversubscribed_) {
      for (int i = 0; i < 16; ++i) cpuRelax();
    } else if (waited < kYieldFor) {
      sched_yield();
    } else if (sleepOn != nullptr) {
      sleepOnBell(sleepOn, kBellTimeout, stillIdle);
    } else {
      std::this_thread::sleep_for(kNap);
    }
    return Status::ok();
  }

 private:
  bool oversubscribed_ = false;
  bool idle_ = false;
  unsigned passes_ = 0;
  std::chrono::steady_clock::time_point since_;
};

}  // namespace weft::runtime
