// A helper thread that moves striped chunks of large messages over the data sockets it owns
// (NCCL_SOCKET_NTHREADS threads × NCCL_NSOCKS_PERTHREAD sockets per connection). The caller's
// thread queues tasks; the worker sleeps in poll() when its sockets cannot move, so helpers
// never spin against the caller on a small machine.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plugins/net-socket/comm_error.h"
#include "plugins/common/fd.h"

namespace weft::socket {

using netplugin::Fd;

struct Task {
  char* data;
  uint64_t length;
  uint64_t done;
  std::atomic<int>* pending;  // decremented (release) when the task completes
};

class Worker {
 public:
  Worker(bool sending, std::shared_ptr<CommError> error, std::string peer);
  ~Worker();  // stops and joins the thread; queued tasks are dropped
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Gives the worker a data socket; returns its slot for enqueue(). Before start() only.
  int addSocket(Fd fd);
  void start();
  // Queues `task` behind earlier ones on socket `slot` (order on a socket is the wire order).
  void enqueue(int slot, Task task);

 private:
  struct Slot {
    Fd fd;
    std::deque<Task> tasks;  // the front one is in progress; only the worker pops
    bool blocked = false;    // EAGAIN seen; cleared when poll() reports the socket ready
  };
  void run(std::stop_token stop);
  // Moves bytes of slot's front task; false when the socket would block or failed.
  bool progress(Slot& slot);
  void waitForWork();

  const bool sending_;
  std::shared_ptr<CommError> error_;
  std::string peer_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Slot>> slots_;
  Fd wake_;  // eventfd: a new task or stop
  std::jthread thread_;
};

}  // namespace weft::socket
