// The collective kernel (core/device/kernel.h) on host threads: ranks side by side in this
// process, each launching the kernel on its own thread over FIFOs in host memory, running the
// schedules the host path runs. Every result is compared bit for bit with a reference that runs
// the same schedules one slot at a time with the host path's reduction code (core/coll/reduce.h
// called as core/coll/run.cc calls it), and the integer results also with a plain reduction.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/coll/numeric.h"
#include "core/coll/reduce.h"
#include "core/coll/schedule.h"
#include "core/device/launch.h"
#include "core/device/plan.h"

namespace weft::device {
namespace {

using coll::Coll;
using coll::Prim;
using coll::RedOp;
using coll::Step;

enum class Algo { kRing, kTree };

struct Case {
  Coll coll = Coll::kAllReduce;
  Algo algo = Algo::kRing;
  weft_datatype_t type = weftFloat32;
  int userOp = weftSum;
  int nranks = 2;
  int nchannels = 1;
  size_t count = 1001;  // per rank for AllGather and ReduceScatter
  bool inPlace = false;
  int root = 0;
  uint32_t stepBytes = 64;
  unsigned nthreads = 8;
  int repeats = 2;  // launches back to back on the same connections (steps carry over)
};

std::string describe(const Case& c) {
  static const char* colls[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce"};
  return std::string(colls[static_cast<int>(c.coll)]) + (c.algo == Algo::kTree ? " tree" : " ring") + " type " +
         std::to_string(c.type) + " op " + std::to_string(c.userOp) + " ranks " + std::to_string(c.nranks) +
         " channels " + std::to_string(c.nchannels) + " count " + std::to_string(c.count) +
         (c.inPlace ? " in place" : " out of place") + " root " + std::to_string(c.root);
}

// One lane of one rank: its steps and its peers.
struct LaneSpec {
  std::vector<Step> steps;
  std::vector<int> recvFrom, sendTo;
};

// Channel c's ring: ranks in order on even channels, reversed on odd ones.
int ringNext(int c, int r, int n) { return c % 2 == 0 ? (r + 1) % n : (r + n - 1) % n; }
int ringPrev(int c, int r, int n) { return c % 2 == 0 ? (r + n - 1) % n : (r + 1) % n; }

coll::RingView ringView(int c, int r, int n) {
  coll::RingView v;
  v.nranks = n;
  v.userRanks.resize(static_cast<size_t>(n));
  int at = r;
  for (int i = 0; i < n; ++i) {
    v.userRanks[static_cast<size_t>(i)] = at;
    at = ringNext(c, at, n);
  }
  // The hop distance from rank 0 to me.
  int d = 0;
  for (int x = 0; x != r; x = ringNext(c, x, n)) ++d;
  v.index = d;
  return v;
}

// Channel c's tree: a binary heap over the ranks, rotated by c so the channels' roots differ.
coll::TreeView treeView(int c, int r, int n) {
  auto pos = [&](int rank) { return (rank - c % n + n) % n; };
  auto rankAt = [&](int p) { return (p + c) % n; };
  coll::TreeView v;
  int p = pos(r);
  if (p > 0) v.up = rankAt((p - 1) / 2);
  for (int k = 1; k <= 2; ++k)
    if (2 * p + k < n) v.down.push_back(rankAt(2 * p + k));
  return v;
}

size_t recvCount(const Case& c) {
  return c.coll == Coll::kAllGather ? c.count * static_cast<size_t>(c.nranks) : c.count;
}
size_t sendCount(const Case& c) {
  return c.coll == Coll::kReduceScatter ? c.count * static_cast<size_t>(c.nranks) : c.count;
}

// Every lane of every rank, channel by channel: lanes[rank][channel].
std::vector<std::vector<std::vector<LaneSpec>>> plan(const Case& c) {
  const size_t elt = coll::typeSize(c.type);
  coll::ScheduleArgs sa;
  sa.coll = c.coll;
  sa.countPerRank = c.count;
  const bool stepChunks = c.algo == Algo::kTree || c.coll == Coll::kBroadcast || c.coll == Coll::kReduce;
  sa.chunkElems = std::max<size_t>(1, c.stepBytes * (stepChunks ? 1 : 4) / elt);
  sa.alignElems = std::max<size_t>(1, 16 / elt);
  sa.root = c.root;
  const bool perRank = coll::countIsPerRank(c.coll);
  const int tpb = c.coll == Coll::kAllReduce ? 2 : perRank ? c.nranks : 1;
  std::vector<coll::Part> parts = coll::channelParts(c.count, elt, tpb, c.nchannels, c.nchannels);
  std::vector<std::vector<std::vector<LaneSpec>>> out(static_cast<size_t>(c.nranks));
  for (int r = 0; r < c.nranks; ++r) {
    out[static_cast<size_t>(r)].resize(parts.size());
    for (size_t ch = 0; ch < parts.size(); ++ch) {
      const int ci = static_cast<int>(ch);
      auto& lanes = out[static_cast<size_t>(r)][ch];
      if (c.algo == Algo::kTree) {
        for (coll::Lane& l : coll::treeAllReduce(sa, treeView(ci, r, c.nranks), parts[ch]))
          lanes.push_back(LaneSpec{std::move(l.steps), l.recvFrom, l.sendTo});
      } else {
        LaneSpec l;
        l.steps = coll::ringSchedule(sa, ringView(ci, r, c.nranks), parts[ch]);
        l.recvFrom = {ringPrev(ci, r, c.nranks)};
        l.sendTo = {ringNext(ci, r, c.nranks)};
        lanes.push_back(std::move(l));
      }
    }
  }
  return out;
}

// ---- the reference: the same schedules, one slot at a time, with the host path's reductions ----

struct Buffers {
  std::vector<std::vector<char>> send, recv;  // per rank
  const void* in(const Case& c, int r) const {
    // In place: AllGather's input is its slice of the output, ReduceScatter's output its slice
    // of the input (NCCL's in-place layouts).
    if (!c.inPlace) return send[static_cast<size_t>(r)].data();
    const size_t elt = coll::typeSize(c.type);
    if (c.coll == Coll::kAllGather) return recv[static_cast<size_t>(r)].data() + static_cast<size_t>(r) * c.count * elt;
    return recv[static_cast<size_t>(r)].data();
  }
  void* out(const Case& c, int r) {
    if (c.inPlace && c.coll == Coll::kReduceScatter)
      return recv[static_cast<size_t>(r)].data() + static_cast<size_t>(r) * c.count * coll::typeSize(c.type);
    return recv[static_cast<size_t>(r)].data();
  }
};

Buffers makeBuffers(const Case& c, uint32_t seed) {
  const size_t elt = coll::typeSize(c.type);
  Buffers b;
  std::mt19937_64 rng(seed);
  for (int r = 0; r < c.nranks; ++r) {
    std::vector<char> s(sendCount(c) * elt), o(recvCount(c) * elt);
    for (size_t i = 0; i < s.size() / elt; ++i) {
      // Small values (exact sums for integers, ordinary floats), some negative.
      const double v = static_cast<double>(static_cast<int>(rng() % 17) - 5) * (coll::isIntegerType(c.type) ? 1 : 0.375);
      const uint64_t bits = coll::elementFromDouble(c.type, v);
      std::memcpy(s.data() + i * elt, &bits, elt);
    }
    for (char& x : o) x = static_cast<char>(0x5a);
    b.send.push_back(std::move(s));
    b.recv.push_back(std::move(o));
  }
  if (c.inPlace) {
    // The input lives in the output buffer.
    for (int r = 0; r < c.nranks; ++r) {
      auto& o = b.recv[static_cast<size_t>(r)];
      const auto& s = b.send[static_cast<size_t>(r)];
      if (c.coll == Coll::kAllGather) std::memcpy(o.data() + static_cast<size_t>(r) * s.size(), s.data(), s.size());
      else if (c.coll == Coll::kReduceScatter) o = s;
      else std::memcpy(o.data(), s.data(), s.size());
    }
  }
  return b;
}

void reduceAll(const RedOp& op, void* dst, const void* local, const std::vector<const void*>& r, size_t m, bool post,
               bool pre, bool remoteFirst) {
  if (remoteFirst && r.size() == 1) {
    if (pre && op.kind == coll::RedKind::kPreMulSum) {
      coll::copyWith(op, dst, local, m, true, false);
      local = dst;
    }
    coll::reduceInto(op, dst, r[0], local, m, false, post);
    return;
  }
  for (size_t i = 0; i < r.size(); ++i)
    coll::reduceInto(op, dst, i == 0 ? local : dst, r[i], m, pre && i == 0, post && i + 1 == r.size());
}

void referenceRun(const Case& c, const RedOp& op, const std::vector<std::vector<std::vector<LaneSpec>>>& lanes,
                  Buffers& b) {
  const size_t elt = coll::typeSize(c.type);
  const size_t slotElems = c.stepBytes / elt;
  using Key = std::tuple<size_t, int, int>;  // channel, sender, receiver
  std::map<Key, std::deque<std::vector<char>>> fifo;
  struct Cursor {
    int rank;
    size_t ch;
    const LaneSpec* lane;
    size_t k = 0, done = 0;
  };
  std::vector<Cursor> cur;
  for (int r = 0; r < c.nranks; ++r)
    for (size_t ch = 0; ch < lanes[static_cast<size_t>(r)].size(); ++ch)
      for (const LaneSpec& l : lanes[static_cast<size_t>(r)][ch]) cur.push_back(Cursor{r, ch, &l});
  for (bool progress = true; progress;) {
    progress = false;
    for (Cursor& x : cur) {
      while (x.k < x.lane->steps.size()) {
        const Step& s = x.lane->steps[x.k];
        if (x.done >= s.count) {
          ++x.k;
          x.done = 0;
          continue;
        }
        const size_t m = std::min(slotElems, s.count - x.done);
        const bool R = s.prim != Prim::kSend && s.prim != Prim::kCopySend;
        const bool S = s.prim != Prim::kRecv && s.prim != Prim::kRecvReduceCopy;
        bool ready = true;
        if (R)
          for (int p : x.lane->recvFrom) ready = ready && !fifo[{x.ch, p, x.rank}].empty();
        if (S)
          for (int p : x.lane->sendTo) ready = ready && fifo[{x.ch, x.rank, p}].size() < static_cast<size_t>(kSteps);
        if (!ready) break;
        std::vector<std::vector<char>> got;
        std::vector<const void*> r;
        if (R)
          for (int p : x.lane->recvFrom) {
            auto& q = fifo[{x.ch, p, x.rank}];
            got.push_back(std::move(q.front()));
            q.pop_front();
          }
        for (auto& g : got) r.push_back(g.data());
        const char* in = static_cast<const char*>(b.in(c, x.rank)) + (s.in + x.done) * elt;
        char* out = static_cast<char*>(b.out(c, x.rank)) + (s.out + x.done) * elt;
        std::vector<char> data(m * elt);
        switch (s.prim) {
          case Prim::kSend:
            if (s.fromOutput) std::memcpy(data.data(), out, m * elt);
            else coll::copyWith(op, data.data(), in, m, true, false);
            break;
          case Prim::kCopySend:
            std::memmove(out, in, m * elt);
            std::memcpy(data.data(), out, m * elt);
            break;
          case Prim::kRecv: std::memcpy(out, r[0], m * elt); break;
          case Prim::kRecvReduceSend: reduceAll(op, data.data(), in, r, m, false, true, false); break;
          case Prim::kRecvReduceCopySend:
            reduceAll(op, out, in, r, m, true, true, false);
            std::memcpy(data.data(), out, m * elt);
            break;
          case Prim::kRecvCopySend:
            std::memcpy(out, r[0], m * elt);
            std::memcpy(data.data(), out, m * elt);
            break;
          case Prim::kRecvReduceCopy:
            reduceAll(op, out, s.fromOutput ? out : in, r, m, !s.partial, !s.fromOutput, s.remoteFirst);
            break;
        }
        if (S)
          for (int p : x.lane->sendTo) fifo[{x.ch, x.rank, p}].push_back(data);
        x.done += m;
        progress = true;
      }
    }
  }
  for (const Cursor& x : cur) ASSERT_EQ(x.k, x.lane->steps.size()) << "the reference deadlocked: " << describe(c);
}

// ---- the kernel on host threads ----

struct Conn {
  std::vector<char> buff;
  alignas(64) uint64_t tail = 0;
  alignas(64) uint64_t head = 0;
};

// Runs c.repeats launches per rank on the same connections; returns false when the watchdog had
// to abort them (a hang).
bool kernelRun(const Case& c, const RedOp& op, const std::vector<std::vector<std::vector<LaneSpec>>>& lanes,
               std::vector<Buffers>& runs) {
  using Key = std::tuple<size_t, int, int>;
  std::map<Key, std::unique_ptr<Conn>> conns;
  auto conn = [&](size_t ch, int from, int to) -> Conn& {
    auto& p = conns[{ch, from, to}];
    if (!p) {
      p = std::make_unique<Conn>();
      p->buff.assign(static_cast<size_t>(kSteps) * c.stepBytes, 0);
    }
    return *p;
  };
  const size_t nch = lanes.empty() ? 0 : lanes[0].size();
  std::vector<std::vector<std::vector<DevStep>>> steps(static_cast<size_t>(c.nranks));
  std::vector<std::vector<DevChannel>> channels(static_cast<size_t>(c.nranks));
  for (int r = 0; r < c.nranks; ++r) {
    auto& chans = channels[static_cast<size_t>(r)];
    chans.assign(nch, DevChannel{});
    for (size_t ch = 0; ch < nch; ++ch) {
      const auto& ls = lanes[static_cast<size_t>(r)][ch];
      chans[ch].nLanes = static_cast<uint32_t>(ls.size());
      for (size_t li = 0; li < ls.size(); ++li) {
        steps[static_cast<size_t>(r)].emplace_back();
        auto& ds = steps[static_cast<size_t>(r)].back();
        EXPECT_TRUE(devSteps(ls[li].steps, &ds));
        DevLane& dl = chans[ch].lanes[li];
        dl.steps = ds.data();
        dl.nSteps = static_cast<uint32_t>(ds.size());
        dl.nRecv = static_cast<uint8_t>(ls[li].recvFrom.size());
        dl.nSend = static_cast<uint8_t>(ls[li].sendTo.size());
        for (size_t i = 0; i < ls[li].recvFrom.size(); ++i) {
          Conn& k = conn(ch, ls[li].recvFrom[i], r);
          dl.recv[i] = DevConn{k.buff.data(), &k.tail, &k.head, 0};
        }
        for (size_t i = 0; i < ls[li].sendTo.size(); ++i) {
          Conn& k = conn(ch, r, ls[li].sendTo[i]);
          dl.send[i] = DevConn{k.buff.data(), &k.tail, &k.head, 0};
        }
      }
    }
  }
  uint64_t abortFlag = 0;
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(60), [&] { return finished; }))
      std::atomic_ref<uint64_t>(abortFlag).store(1, std::memory_order_release);
  });
  for (Buffers& b : runs) {
    std::vector<std::thread> ranks;
    for (int r = 0; r < c.nranks; ++r) {
      ranks.emplace_back([&, r] {
        DevWork w{};
        w.sendbuff = b.in(c, r);
        w.recvbuff = b.out(c, r);
        w.channels = channels[static_cast<size_t>(r)].data();
        w.abortFlag = &abortFlag;
        w.redArg = op.arg;
        w.stepBytes = c.stepBytes;
        w.type = static_cast<uint8_t>(c.type);
        w.red = devRed(op);
        if (nch > 0) {
          EXPECT_TRUE(emulateCollective(w, static_cast<unsigned>(nch), c.nthreads));
        }
      });
    }
    for (std::thread& t : ranks) t.join();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    finished = true;
  }
  cv.notify_all();
  watchdog.join();
  return std::atomic_ref<uint64_t>(abortFlag).load() == 0;
}

void runCase(const Case& c) {
  SCOPED_TRACE(describe(c));
  auto opOr = coll::deviceOp(c.userOp, c.type, c.nranks);
  ASSERT_TRUE(opOr.isOk());
  const RedOp op = *opOr;
  const auto lanes = plan(c);
  std::vector<Buffers> expected, got;
  for (int i = 0; i < c.repeats; ++i) {
    expected.push_back(makeBuffers(c, 1234u + static_cast<uint32_t>(i)));
    got.push_back(expected.back());
    referenceRun(c, op, lanes, expected.back());
  }
  ASSERT_TRUE(kernelRun(c, op, lanes, got)) << "the emulated kernels did not finish within 60 s (aborted)";
  const size_t elt = coll::typeSize(c.type);
  for (int i = 0; i < c.repeats; ++i) {
    for (int r = 0; r < c.nranks; ++r) {
      const auto& e = expected[static_cast<size_t>(i)].recv[static_cast<size_t>(r)];
      const auto& g = got[static_cast<size_t>(i)].recv[static_cast<size_t>(r)];
      if (e == g) continue;
      size_t at = 0;
      while (at < e.size() && e[at] == g[at]) ++at;
      FAIL() << "launch " << i << ", rank " << r << ": element " << at / elt << " differs from the host path's";
    }
  }
}

// The reference itself: integer Sum over the ring and the tree equals a plain sum.
TEST(DeviceEmu, ReferenceAllReduceEqualsAPlainSum) {
  for (Algo algo : {Algo::kRing, Algo::kTree}) {
    Case c;
    c.algo = algo;
    c.type = weftInt32;
    c.nranks = 3;
    c.count = 777;
    auto op = *coll::deviceOp(weftSum, c.type, c.nranks);
    Buffers b = makeBuffers(c, 7);
    referenceRun(c, op, plan(c), b);
    for (size_t i = 0; i < c.count; ++i) {
      int32_t want = 0;
      for (int r = 0; r < c.nranks; ++r) {
        int32_t v;
        std::memcpy(&v, b.send[static_cast<size_t>(r)].data() + i * 4, 4);
        want += v;
      }
      for (int r = 0; r < c.nranks; ++r) {
        int32_t v;
        std::memcpy(&v, b.recv[static_cast<size_t>(r)].data() + i * 4, 4);
        ASSERT_EQ(v, want) << "element " << i << " rank " << r;
      }
    }
  }
}

class DeviceEmuColl : public ::testing::TestWithParam<std::tuple<Coll, int, int>> {};

TEST_P(DeviceEmuColl, EqualsTheHostPathBitForBit) {
  auto [coll, nranks, nchannels] = GetParam();
  for (bool inPlace : {false, true}) {
    Case c;
    c.coll = coll;
    c.nranks = nranks;
    c.nchannels = nchannels;
    c.inPlace = inPlace;
    c.root = nranks - 1;
    // Enough traffic for two channels (NCCL's cells are 16 KiB), an odd count.
    c.count = nchannels > 1 ? 5001 : 1001;
    c.stepBytes = nchannels > 1 ? 256 : 64;
    ASSERT_EQ(plan(c)[0].size(), static_cast<size_t>(nchannels)) << "the count should fill every channel";
    runCase(c);
    if (::testing::Test::HasFailure()) return;
  }
}

std::string collName(Coll c) {
  static const char* n[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce"};
  return n[static_cast<int>(c)];
}

INSTANTIATE_TEST_SUITE_P(
    Ring, DeviceEmuColl,
    ::testing::Combine(::testing::Values(Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter, Coll::kBroadcast,
                                         Coll::kReduce),
                       ::testing::Values(1, 2, 3, 4), ::testing::Values(1, 2)),
    [](const auto& p) {
      return collName(std::get<0>(p.param)) + "_" + std::to_string(std::get<1>(p.param)) + "ranks_" +
             std::to_string(std::get<2>(p.param)) + "ch";
    });

// Every datatype and operator, ring and tree AllReduce on 3 ranks (reductions where the order of
// the operands shows: floats, PreMulSum, integer Avg), and Avg through ReduceScatter and Reduce.
class DeviceEmuTypes : public ::testing::TestWithParam<weft_datatype_t> {};

TEST_P(DeviceEmuTypes, EveryOperatorRingAndTree) {
  for (Algo algo : {Algo::kRing, Algo::kTree}) {
    for (int op : {weftSum, weftProd, weftMax, weftMin, weftAvg}) {
      Case c;
      c.algo = algo;
      c.type = GetParam();
      c.userOp = op;
      c.nranks = 3;
      c.count = 333;
      runCase(c);
      if (::testing::Test::HasFailure()) return;
    }
  }
  // Avg's last reduction (the post-op, integer SumPostDiv) and first (PreMulSum) where ReduceScatter
  // and Reduce make them: recvReduceCopy.
  for (Coll coll : {Coll::kReduceScatter, Coll::kReduce}) {
    Case c;
    c.coll = coll;
    c.type = GetParam();
    c.userOp = weftAvg;
    c.nranks = 3;
    c.root = 1;
    c.count = 201;
    runCase(c);
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(All, DeviceEmuTypes,
                         ::testing::Values(weftInt8, weftUint8, weftInt32, weftUint32, weftInt64, weftUint64,
                                           weftFloat16, weftFloat32, weftFloat64, weftBfloat16, weftFloat8e4m3,
                                           weftFloat8e5m2),
                         [](const auto& p) { return "type" + std::to_string(static_cast<int>(p.param)); });

class DeviceEmuTree : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(DeviceEmuTree, AllReduceEqualsTheHostPathBitForBit) {
  auto [nranks, nchannels] = GetParam();
  for (bool inPlace : {false, true}) {
    Case c;
    c.algo = Algo::kTree;
    c.nranks = nranks;
    c.nchannels = nchannels;
    c.inPlace = inPlace;
    c.count = nchannels > 1 ? 5001 : 1001;
    c.stepBytes = nchannels > 1 ? 256 : 64;
    runCase(c);
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Tree, DeviceEmuTree, ::testing::Combine(::testing::Values(2, 3, 4), ::testing::Values(1, 2)),
                         [](const auto& p) {
                           return std::to_string(std::get<0>(p.param)) + "ranks_" +
                                  std::to_string(std::get<1>(p.param)) + "ch";
                         });

// A rank that never launches: its peers' kernels stop at the abort flag instead of hanging.
TEST(DeviceEmu, AbortFlagStopsAKernelWaitingForAMissingPeer) {
  Case c;
  c.nranks = 2;
  const auto lanes = plan(c);
  auto op = *coll::deviceOp(weftSum, c.type, c.nranks);
  Buffers b = makeBuffers(c, 3);
  std::vector<DevStep> ds;
  ASSERT_TRUE(devSteps(lanes[0][0][0].steps, &ds));
  Conn in, out;
  in.buff.assign(kSteps * c.stepBytes, 0);
  out.buff.assign(kSteps * c.stepBytes, 0);
  DevChannel ch{};
  ch.nLanes = 1;
  ch.lanes[0].steps = ds.data();
  ch.lanes[0].nSteps = static_cast<uint32_t>(ds.size());
  ch.lanes[0].nRecv = 1;
  ch.lanes[0].nSend = 1;
  ch.lanes[0].recv[0] = DevConn{in.buff.data(), &in.tail, &in.head, 0};
  ch.lanes[0].send[0] = DevConn{out.buff.data(), &out.tail, &out.head, 0};
  uint64_t abortFlag = 0;
  DevWork w{};
  w.sendbuff = b.in(c, 0);
  w.recvbuff = b.out(c, 0);
  w.channels = &ch;
  w.abortFlag = &abortFlag;
  w.stepBytes = c.stepBytes;
  w.type = static_cast<uint8_t>(c.type);
  w.red = devRed(op);
  auto start = std::chrono::steady_clock::now();
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::atomic_ref<uint64_t>(abortFlag).store(1, std::memory_order_release);
  });
  ASSERT_TRUE(emulateCollective(w, 1, c.nthreads));
  setter.join();
  EXPECT_EQ(std::atomic_ref<uint64_t>(ch.lanes[0].aborted).load(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace weft::device
