#include "core/runtime/p2p.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "core/base/strings.h"
#include "core/runtime/waiter.h"

namespace weft::runtime {

namespace {


Status sizeMismatch(const P2pTask& t, size_t got, size_t expected) {
  return invalidUsage(strprintf("rank %d receiving %zu bytes from rank %d: got a step of %zu bytes where %zu were expected "
                                "(the sender's count differs from the receiver's)",
                                t.comm->rank, t.bytes, t.peer, got, expected));
}

// The zero-copy path where the transport has one: true when it handled this pass.
template <typename Conn, typename Buf>
Result<bool> stepDirect(P2pTask& t, Conn& c, Buf buf, bool& progressed) {
  if (t.direct == 0) {
    WEFT_ASSIGN_OR_RETURN(bool started, c.beginDirect(buf, t.bytes));
    t.direct = started ? 1 : -1;
  }
  if (t.direct < 0) return false;
  WEFT_ASSIGN_OR_RETURN(bool finished, c.progressDirect(&progressed));
  if (finished) {
    t.moved = t.bytes;
    t.done = true;
    progressed = true;
  }
  return true;
}

Result<bool> stepSend(P2pTask& t) {
  SendConnection& c = *t.sendConn;
  bool progressed = false;
  WEFT_ASSIGN_OR_RETURN(bool direct, stepDirect(t, c, static_cast<const void*>(t.buf), progressed));
  if (direct) return progressed;
  size_t step = c.stepSize();
  while (t.moved < t.bytes) {
    WEFT_ASSIGN_OR_RETURN(void* slot, c.acquire());
    if (slot == nullptr) break;
    size_t n = std::min(step, t.bytes - t.moved);
    std::memcpy(slot, t.buf + t.moved, n);
    t.moved += n;
    WEFT_TRY(c.post(n, t.moved == t.bytes));
    progressed = true;
  }
  if (t.moved == t.bytes) {
    WEFT_ASSIGN_OR_RETURN(bool idle, c.drain());
    if (idle) {
      t.done = true;
      progressed = true;
    }
  }
  return progressed;
}

Result<bool> stepRecv(P2pTask& t) {
  RecvConnection& c = *t.recvConn;
  bool progressed = false;
  WEFT_ASSIGN_OR_RETURN(bool direct, stepDirect(t, c, static_cast<void*>(t.buf), progressed));
  if (direct) return progressed;
  size_t step = c.stepSize();
  while (t.moved < t.bytes) {
    size_t left = t.bytes - t.moved;
    int want = static_cast<int>(std::min<size_t>((left + step - 1) / step, kSteps));
    size_t n = 0;
    bool last = false;
    WEFT_ASSIGN_OR_RETURN(const void* slot, c.peek(&n, &last, want));
    if (slot == nullptr) break;
    size_t expected = std::min(step, left);
    if (n != expected || (c.carriesLast() && last != (expected == left))) return sizeMismatch(t, n, expected);
    std::memcpy(t.buf + t.moved, slot, n);
    t.moved += n;
    WEFT_TRY(c.release());
    progressed = true;
  }
  if (t.moved == t.bytes) {
    t.done = true;
    progressed = true;
  }
  return progressed;
}

// Pairs each communicator's sends to itself with its receives from itself, in order.
Status runSelf(std::vector<P2pTask>& tasks) {
  if (std::none_of(tasks.begin(), tasks.end(), [](const P2pTask& t) { return t.peer == t.comm->rank; }))
    return Status::ok();
  std::map<Comm*, std::pair<std::vector<size_t>, std::vector<size_t>>> self;
  for (size_t i = 0; i < tasks.size(); ++i) {
    P2pTask& t = tasks[i];
    if (t.peer != t.comm->rank) continue;
    (t.send ? self[t.comm].first : self[t.comm].second).push_back(i);
  }
  for (auto& [comm, lists] : self) {
    auto& [sends, recvs] = lists;
    if (sends.size() != recvs.size())
      return invalidUsage(strprintf("rank %d: %s (%zu sends to self, %zu receives from self in this group)", comm->rank,
                                    sends.size() > recvs.size() ? "Trying to send to self without a matching recv"
                                                                : "Trying to receive from self without a matching send",
                                    sends.size(), recvs.size()));
    for (size_t k = 0; k < sends.size(); ++k) {
      P2pTask& s = tasks[sends[k]];
      P2pTask& r = tasks[recvs[k]];
      if (s.bytes != r.bytes)
        return invalidUsage(strprintf("rank %d: send to self of %zu bytes matched with a receive of %zu bytes", comm->rank,
                                      s.bytes, r.bytes));
      if (s.buf != r.buf) std::memmove(r.buf, s.buf, s.bytes);
      s.done = r.done = true;
    }
  }
  return Status::ok();
}

// Finds each task's connection (connecting the missing ones, all at once) and the task before it
// on the same connection.
Status connectTasks(std::vector<P2pTask>& tasks) {
  auto bind = [](P2pTask& t) {
    Comm::Key k{1, 0, t.peer};
    if (t.send) {
      auto it = t.comm->sends.find(k);
      t.sendConn = it == t.comm->sends.end() ? nullptr : it->second.get();
      return t.sendConn != nullptr;
    }
    auto it = t.comm->recvs.find(k);
    t.recvConn = it == t.comm->recvs.end() ? nullptr : it->second.get();
    return t.recvConn != nullptr;
  };
  std::vector<ConnectRequest> reqs;
  for (P2pTask& t : tasks) {
    if (t.done || bind(t)) continue;
    bool dup = std::any_of(reqs.begin(), reqs.end(), [&](const ConnectRequest& r) {
      return r.comm == t.comm && r.peer == t.peer && r.send == t.send;
    });
    if (!dup) reqs.push_back({t.comm, 1, 0, t.peer, t.send});
  }
  if (!reqs.empty()) {
    if (Status s = connectAll(reqs); !s.isOk()) {
      // Past WEFT_OP_TIMEOUT the communicator is broken, as after any operation's timeout.
      for (const ConnectRequest& r : reqs)
        if (r.comm->opTimeout.count() > 0 && s.code() == Code::kSystemError && !r.comm->stop.load()) r.comm->fail(s, r.comm->rank);
      return s;
    }
    for (P2pTask& t : tasks)
      if (!t.done && !bind(t)) return internalError(strprintf("rank %d: no connection to rank %d after connecting", t.comm->rank, t.peer));
  }
  // Tasks on one connection run in the order they were posted. Groups are small: a scan back is
  // cheaper than a map.
  for (size_t i = 0; i < tasks.size(); ++i) {
    P2pTask& t = tasks[i];
    t.after = -1;
    if (t.done) continue;
    for (size_t j = i; j-- > 0;) {
      const P2pTask& u = tasks[j];
      if (!u.done && u.send == t.send && u.sendConn == t.sendConn && u.recvConn == t.recvConn) {
        t.after = static_cast<int>(j);
        break;
      }
    }
  }
  return Status::ok();
}

// One pass over the tasks that may move. Errors break the task's communicator.
Result<bool> progressPass(std::vector<P2pTask>& tasks, size_t& left) {
  bool any = false;
  for (P2pTask& t : tasks) {
    if (t.done || (t.after >= 0 && !tasks[static_cast<size_t>(t.after)].done)) continue;
    Result<bool> r = t.send ? stepSend(t) : stepRecv(t);
    if (!r.isOk()) {
      Status s = std::move(r).takeStatus();
      if (t.comm->stop.load()) s = t.comm->stoppedStatus(strprintf("%s rank %d", t.send ? "sending to" : "receiving from", t.peer));
      else s = t.comm->rootCause(std::move(s));
      t.comm->fail(s, s.failedRank() >= 0 ? s.failedRank() : s.code() == Code::kRemoteError ? t.peer : t.comm->rank);
      return s;
    }
    any = any || *r;
    if (t.done) --left;
  }
  return any;
}

Status stoppedAny(std::vector<P2pTask>& tasks) {
  for (P2pTask& t : tasks)
    if (!t.done && t.comm->stop.load())
      return t.comm->stoppedStatus(strprintf("%s rank %d", t.send ? "sending to" : "receiving from", t.peer));
  return Status::ok();
}

// WEFT_OP_TIMEOUT for point-to-point: a task of a communicator with a timeout fails when nothing
// has moved for that long, naming the peer and how far it got; the communicator is then broken.
Status checkProgress(std::vector<P2pTask>& tasks, const Waiter& waiter) {
  auto idle = waiter.idleFor();
  for (P2pTask& t : tasks) {
    if (t.done || t.comm->opTimeout.count() == 0 || idle < t.comm->opTimeout) continue;
    Status s = systemError(strprintf(
        "%s rank %d made no progress for %.1f s (WEFT_OP_TIMEOUT=%lld): %zu of %zu bytes moved, waiting for rank %d; "
        "the communicator must be aborted",
        t.send ? "sending to" : "receiving from", t.peer, std::chrono::duration<double>(idle).count(),
        static_cast<long long>(t.comm->opTimeout.count()), t.moved, t.bytes, t.peer));
    t.comm->fail(s, t.comm->rank);
    return s;
  }
  return Status::ok();
}

// The bell to sleep on: that of the one communicator all waiting tasks belong to, when every one
// of them waits on shared memory (net plugins need polling); else none.
Bell* sleepBell(const std::vector<P2pTask>& tasks) {
  Comm* only = nullptr;
  for (const P2pTask& t : tasks) {
    if (t.done) continue;
    if (only != nullptr && only != t.comm) return nullptr;
    only = t.comm;
    if (!t.comm->useShm(t.peer)) return nullptr;
  }
  return only != nullptr && only->myBell ? only->myBell->bell() : nullptr;
}

}  // namespace

Result<MemoryKind> memoryKind(const void* /*ptr*/, void* stream) {
  if (stream != nullptr) return invalidArgument("stream must be NULL: weft moves host memory only in this version");
  return MemoryKind::kHost;
}

GroupState& threadGroup() {
  thread_local GroupState g;
  return g;
}

Status runTasks(std::vector<P2pTask>& tasks) {
  if (tasks.empty()) return Status::ok();
  for (P2pTask& t : tasks)
    if (t.comm->stop.load()) return t.comm->stoppedStatus("starting a transfer");
  WEFT_TRY(runSelf(tasks));
  WEFT_TRY(connectTasks(tasks));
  size_t left = 0;
  for (const P2pTask& t : tasks) left += t.done ? 0 : 1;
  int localRanks = 1;
  for (const P2pTask& t : tasks) localRanks = std::max(localRanks, t.comm->localRanks);
  Waiter waiter(localRanks);
  while (left > 0) {
    WEFT_ASSIGN_OR_RETURN(bool moved, progressPass(tasks, left));
    if (moved || left == 0) {
      waiter.moved();
      continue;
    }
    Status inner;
    WEFT_TRY(waiter.idle(sleepBell(tasks), [&] {
      Status stopped = stoppedAny(tasks);
      return stopped.isOk() ? checkProgress(tasks, waiter) : stopped;
    }, [&] {
      Result<bool> r = progressPass(tasks, left);
      if (!r.isOk()) {
        inner = std::move(r).takeStatus();
        return false;
      }
      if (*r) waiter.moved();
      return !*r && left > 0;
    }));
    WEFT_TRY(inner);
  }
  return Status::ok();
}

}  // namespace weft::runtime
