#include "core/coll/run.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/base/strings.h"

namespace weft::coll {

namespace {

using Clock = std::chrono::steady_clock;
using runtime::Comm;

constexpr size_t kChunkBytes = size_t{2} << 20;      // ring Simple: 2 slices of 2 steps of 512 KiB
constexpr size_t kPipelineBytes = size_t{512} << 10;  // broadcast, reduce: one step
constexpr size_t kBytesPerChannel = size_t{512} << 10;

// One channel of one collective: its steps, its two connections, and how far it got.
struct ChannelRun {
  int channel = 0;
  std::vector<Step> steps;
  runtime::SendConnection* send = nullptr;
  runtime::RecvConnection* recv = nullptr;
  size_t step = 0;  // current step
  size_t done = 0;  // elements of it moved
};

bool readsRecv(Prim p) { return p != Prim::kSend && p != Prim::kCopySend; }
bool writesSend(Prim p) { return p != Prim::kRecv && p != Prim::kRecvReduceCopy; }

void copyBytes(void* dst, const void* src, size_t n) {
  if (dst != src) std::memmove(dst, src, n);
}

class Runner {
 public:
  Runner(Comm& comm, const CollArgs& a) : comm_(comm), a_(a), elt_(typeSize(a.type)) {}

  // One slot of `ch`'s current step, if its connections allow. True when something moved.
  Result<bool> advance(ChannelRun& ch) {
    bool moved = false;
    // A net plugin moves posted sends only while it is called: keep them going even when this
    // channel now waits to receive (its peer may be waiting for exactly those sends).
    WEFT_ASSIGN_OR_RETURN(bool idle, ch.send->drain());
    (void)idle;
    while (ch.step < ch.steps.size()) {
      const Step& s = ch.steps[ch.step];
      size_t slotElems = (readsRecv(s.prim) ? ch.recv->stepSize() : ch.send->stepSize()) / elt_;
      size_t m = std::min(slotElems, s.count - ch.done);
      const void* rslot = nullptr;
      if (readsRecv(s.prim)) {
        size_t bytes = 0;
        bool last = false;
        size_t left = (s.count - ch.done + slotElems - 1) / slotElems;
        WEFT_ASSIGN_OR_RETURN(rslot, ch.recv->peek(&bytes, &last, static_cast<int>(std::min<size_t>(left, runtime::kSteps))));
        if (rslot == nullptr) return moved;
        if (bytes != m * elt_)
          return internalError(strprintf("channel %d, %s: a step of %zu bytes arrived where %zu were expected (do all "
                                         "ranks call the same collective with the same count?)",
                                         ch.channel, primName(s.prim), bytes, m * elt_));
      }
      void* sslot = nullptr;
      if (writesSend(s.prim)) {
        WEFT_ASSIGN_OR_RETURN(sslot, ch.send->acquire());
        if (sslot == nullptr) return moved;
      }
      apply(s, ch.done, m, rslot, sslot);
      if (sslot != nullptr) WEFT_TRY(ch.send->post(m * elt_, false));
      if (rslot != nullptr) WEFT_TRY(ch.recv->release());
      moved = true;
      ch.done += m;
      if (ch.done == s.count) {
        ++ch.step;
        ch.done = 0;
      }
    }
    return moved;
  }

 private:
  const char* in(const Step& s, size_t done) const {
    return static_cast<const char*>(a_.send) + (s.in + done) * elt_;
  }
  char* out(const Step& s, size_t done) const { return static_cast<char*>(a_.recv) + (s.out + done) * elt_; }

  // The data movement of one slot: the only place that touches bytes.
  void apply(const Step& s, size_t done, size_t m, const void* rslot, void* sslot) const {
    size_t bytes = m * elt_;
    switch (s.prim) {
      case Prim::kSend:
        copyWith(a_.op, sslot, in(s, done), m, true, false);
        break;
      case Prim::kCopySend:
        copyBytes(out(s, done), in(s, done), bytes);
        std::memcpy(sslot, out(s, done), bytes);
        break;
      case Prim::kRecv:
        std::memcpy(out(s, done), rslot, bytes);
        break;
      case Prim::kRecvReduceSend:
        reduceInto(a_.op, sslot, in(s, done), rslot, m, true, false);
        break;
      case Prim::kRecvReduceCopySend:
        reduceInto(a_.op, out(s, done), in(s, done), rslot, m, true, true);
        std::memcpy(sslot, out(s, done), bytes);
        break;
      case Prim::kRecvCopySend:
        std::memcpy(out(s, done), rslot, bytes);
        std::memcpy(sslot, rslot, bytes);
        break;
      case Prim::kRecvReduceCopy:
        reduceInto(a_.op, out(s, done), in(s, done), rslot, m, true, true);
        break;
    }
  }

  Comm& comm_;
  const CollArgs& a_;
  size_t elt_;
};

// Where this rank sits in channel c's ring.
RingView ringView(const Comm& comm, int c) {
  RingView v;
  v.nranks = comm.nranks;
  v.userRanks = connect::ringFrom(comm.channels, c, comm.rank);
  std::vector<int> fromZero = connect::ringFrom(comm.channels, c, 0);
  v.index = static_cast<int>(std::find(fromZero.begin(), fromZero.end(), comm.rank) - fromZero.begin());
  return v;
}

Status oneRank(const CollArgs& a) {
  size_t elt = typeSize(a.type);
  size_t total = a.count * elt;
  switch (a.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce:
    case Coll::kReduceScatter:
      copyWith(a.op, a.recv, a.send, a.count, true, true);
      break;
    case Coll::kAllGather:
    case Coll::kBroadcast:
      copyBytes(a.recv, a.send, total);
      break;
  }
  return Status::ok();
}

// Waits for a pass to move something: spins, yields, then sleeps on a rank's bell (when all that
// waits is one communicator's shared memory) or naps (net plugins, several communicators).
class Waiter {
 public:
  void moved() { idle_ = false; }
  // `stillIdle` runs one more pass and says whether nothing moved (only before a sleep).
  template <typename F>
  void idle(Comm* sleepOn, F&& stillIdle) {
    if (!idle_) {
      idle_ = true;
      passes_ = 0;
      since_ = Clock::now();
    }
    if ((++passes_ & 31) != 0) return;
    auto waited = Clock::now() - since_;
    if (waited < std::chrono::microseconds(20)) return;
    if (waited < std::chrono::microseconds(500)) {
      sched_yield();
    } else if (sleepOn != nullptr && sleepOn->myBell) {
      runtime::sleepOnBell(sleepOn->myBell->bell(), std::chrono::milliseconds(100), stillIdle);
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

 private:
  bool idle_ = false;
  unsigned passes_ = 0;
  Clock::time_point since_;
};

Result<std::vector<ChannelRun>> plan(Comm& comm, const CollArgs& a, bool* allShm) {
  size_t elt = typeSize(a.type);
  ScheduleArgs sa;
  sa.coll = a.coll;
  sa.countPerRank = a.count;
  sa.chunkElems = (a.coll == Coll::kBroadcast || a.coll == Coll::kReduce ? kPipelineBytes : kChunkBytes) / elt;
  sa.alignElems = std::max<size_t>(1, 16 / elt);
  sa.root = a.root;
  bool perRank = a.coll == Coll::kAllGather || a.coll == Coll::kReduceScatter;
  size_t traffic = a.count * elt * (perRank ? static_cast<size_t>(comm.nranks) : 1);
  int nch = channelsFor(comm, traffic);
  std::vector<ChannelRun> runs;
  *allShm = true;
  for (int c = 0; c < nch; ++c) {
    ChannelRun r;
    r.channel = c;
    r.steps = ringSchedule(sa, ringView(comm, c), channelPart(a.count, nch, c, sa.alignElems));
    int next = comm.channels.ringNextOf(c, comm.rank);
    int prev = comm.channels.ringPrevOf(c, comm.rank);
    auto s = comm.sends.find({0, c, next});
    auto rv = comm.recvs.find({0, c, prev});
    if (s == comm.sends.end() || rv == comm.recvs.end())
      return internalError(strprintf("rank %d: channel %d's ring connections are missing", comm.rank, c));
    r.send = s->second.get();
    r.recv = rv->second.get();
    *allShm = *allShm && comm.useShm(next) && comm.useShm(prev);
    runs.push_back(std::move(r));
  }
  return runs;
}

}  // namespace

int channelsFor(const runtime::Comm& comm, size_t bytes) {
  size_t want = (bytes + kBytesPerChannel - 1) / kBytesPerChannel;
  return static_cast<int>(std::clamp<size_t>(want, 1, static_cast<size_t>(std::max(1, comm.channels.nChannels))));
}

namespace {

// One collective on its way: planned when its turn on its communicator comes.
struct Active {
  const CollTask* task = nullptr;
  std::vector<ChannelRun> runs;
  bool allShm = true;
  bool planned = false;
  bool draining = false;
  bool done = false;
};

Status failOn(Comm& comm, Status s) {
  if (comm.stop.load()) s = comm.stoppedStatus("running a collective");
  comm.fail(s, comm.rank);
  return s;
}

// One pass over a collective: plan it, move what its connections allow, then drain net sends.
Result<bool> pass(Active& act) {
  Comm& comm = *act.task->comm;
  const CollArgs& a = act.task->args;
  if (!act.planned) {
    act.planned = true;
    if (comm.stop.load()) return comm.stoppedStatus("starting a collective");
    if (comm.nranks == 1) {
      WEFT_TRY(oneRank(a));
      act.done = true;
      return true;
    }
    WEFT_ASSIGN_OR_RETURN(act.runs, plan(comm, a, &act.allShm));
  }
  bool moved = false;
  if (!act.draining) {
    Runner runner(comm, a);
    bool left = false;
    for (ChannelRun& ch : act.runs) {
      if (ch.step == ch.steps.size()) continue;
      WEFT_ASSIGN_OR_RETURN(bool m, runner.advance(ch));
      moved = moved || m;
      left = left || ch.step < ch.steps.size();
    }
    if (left) return moved;
    act.draining = true;
  }
  // Net sends are in flight until the plugin says they left.
  for (ChannelRun& ch : act.runs) {
    WEFT_ASSIGN_OR_RETURN(bool idle, ch.send->drain());
    if (!idle) return moved;
  }
  act.done = true;
  return true;
}

}  // namespace

Status runCollectives(const std::vector<CollTask>& tasks) {
  std::vector<Active> acts(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) acts[i].task = &tasks[i];
  // Only the first unfinished collective of each communicator runs.
  auto turn = [&](size_t i) {
    for (size_t j = 0; j < i; ++j)
      if (!acts[j].done && acts[j].task->comm == acts[i].task->comm) return false;
    return true;
  };
  struct Sweep {
    bool any = false;    // something moved
    bool left = false;   // something is not done
    bool allShm = true;  // everything waiting waits on shared memory…
    Comm* only = nullptr;
    bool one = true;     // …of one communicator
    Status error;
  };
  // One pass over every collective whose turn it is.
  auto sweep = [&]() {
    Sweep w;
    for (size_t i = 0; i < acts.size() && w.error.isOk(); ++i) {
      Active& act = acts[i];
      if (act.done) continue;
      w.left = true;
      if (w.only != nullptr && w.only != act.task->comm) w.one = false;
      w.only = act.task->comm;
      if (!turn(i)) continue;
      Result<bool> r = pass(act);
      if (!r.isOk()) {
        w.error = failOn(*act.task->comm, std::move(r).takeStatus());
        break;
      }
      w.any = w.any || *r;
      w.allShm = w.allShm && act.allShm && !act.draining;
    }
    return w;
  };
  Waiter waiter;
  for (;;) {
    Sweep w = sweep();
    WEFT_TRY(w.error);
    if (!w.left) return Status::ok();
    if (w.any) {
      waiter.moved();
      continue;
    }
    for (Active& act : acts)
      if (!act.done && act.task->comm->stop.load()) return failOn(*act.task->comm, act.task->comm->stoppedStatus("running a collective"));
    // Before sleeping, one more sweep after announcing the sleep: a peer that published in
    // between either sees the sleeper and rings, or its data is seen here.
    Status inner;
    waiter.idle(w.allShm && w.one ? w.only : nullptr, [&] {
      Sweep again = sweep();
      inner = again.error;
      if (again.any) waiter.moved();
      return inner.isOk() && !again.any && again.left;
    });
    WEFT_TRY(inner);
  }
}

}  // namespace weft::coll
