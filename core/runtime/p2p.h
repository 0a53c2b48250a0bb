// Point-to-point transfers and groups. A send or receive is a task; weft_group_end (or a call
// outside a group) runs all queued tasks together in one progress loop: each task moves its
// bytes through its connection's slots as credits allow, tasks on one connection keep their
// order, and the loop sleeps on the rank's bell when nothing can move. Buffers are host memory;
// where a later issue adds device memory, memoryKind() is the one place that decides.
#pragma once

#include <cstddef>
#include <vector>

#include "core/base/status.h"
#include "core/runtime/comm.h"

namespace weft::runtime {

enum class MemoryKind { kHost };
// Where `ptr` lives, given the stream argument of the call (only host memory and a null stream
// are accepted now).
Result<MemoryKind> memoryKind(const void* ptr, void* stream);

struct P2pTask {
  Comm* comm = nullptr;
  bool send = false;
  char* buf = nullptr;
  size_t bytes = 0;
  int peer = -1;
  // progress
  SendConnection* sendConn = nullptr;
  RecvConnection* recvConn = nullptr;
  size_t moved = 0;
  bool done = false;
  int direct = 0;  // 0: not tried yet, 1: moving zero-copy, -1: through the slots
  int after = -1;  // index of the previous task on the same connection (it must finish first)
};

// Runs `tasks` (any communicators) to completion, or returns the first error (which also breaks
// the communicator it happened on).
Status runTasks(std::vector<P2pTask>& tasks);

// The thread's group: depth and queued tasks.
struct GroupState {
  int depth = 0;
  std::vector<P2pTask> tasks;
  Status error;  // the first error of a call inside the group, returned by the outermost end
};
GroupState& threadGroup();

}  // namespace weft::runtime
