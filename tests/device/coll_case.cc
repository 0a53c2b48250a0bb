#include "tests/device/coll_case.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <tuple>

#include "core/coll/numeric.h"
#include "core/device/plan.h"

namespace weft::device::devtest {

using coll::Coll;
using coll::Prim;
using coll::RedOp;
using coll::Step;

std::string collName(Coll c) {
  static const char* n[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce"};
  return n[static_cast<int>(c)];
}

size_t slotDataBytes(const Case& c) { return c.proto == kDevLL ? c.stepBytes / 2 : c.stepBytes; }

std::string describe(const Case& c) {
  return collName(c.coll) + (c.algo == Algo::kTree ? " tree" : " ring") + " type " +
         std::to_string(c.type) + " op " + std::to_string(c.userOp) + " ranks " + std::to_string(c.nranks) +
         " channels " + std::to_string(c.nchannels) + " count " + std::to_string(c.count) +
         (c.inPlace ? " in place" : " out of place") + " root " + std::to_string(c.root) +
         (c.proto == kDevLL ? " LL" : " Simple");
}

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
Lanes plan(const Case& c) {
  const size_t elt = coll::typeSize(c.type);
  coll::ScheduleArgs sa;
  sa.coll = c.coll;
  sa.countPerRank = c.count;
  const bool stepChunks = c.algo == Algo::kTree || c.coll == Coll::kBroadcast || c.coll == Coll::kReduce;
  // LL moves a chunk in one step (NCCL's LL chunking), Simple's rings in four.
  const bool oneStep = stepChunks || c.proto == kDevLL;
  sa.chunkElems = std::max<size_t>(1, slotDataBytes(c) * (oneStep ? 1 : 4) / elt);
  sa.alignElems = std::max<size_t>(1, 16 / elt);
  sa.root = c.root;
  const bool perRank = coll::countIsPerRank(c.coll);
  const int tpb = c.coll == Coll::kAllReduce ? 2 : perRank ? c.nranks : 1;
  std::vector<coll::Part> parts = coll::channelParts(c.count, elt, tpb, c.nchannels, c.nchannels);
  Lanes out(static_cast<size_t>(c.nranks));
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

Place inputPlace(const Case& c, int r) {
  // In place: AllGather's input is its slice of the output, ReduceScatter's output its slice of
  // the input (NCCL's in-place layouts), the others' input is the output.
  if (!c.inPlace) return Place{false, 0};
  const size_t elt = coll::typeSize(c.type);
  return Place{true, c.coll == Coll::kAllGather ? static_cast<size_t>(r) * c.count * elt : 0};
}

Place outputPlace(const Case& c, int r) {
  if (c.inPlace && c.coll == Coll::kReduceScatter) return Place{true, static_cast<size_t>(r) * c.count * coll::typeSize(c.type)};
  return Place{true, 0};
}

const void* Buffers::in(const Case& c, int r) const {
  const Place p = inputPlace(c, r);
  return (p.inRecv ? recv : send)[static_cast<size_t>(r)].data() + p.offset;
}

void* Buffers::out(const Case& c, int r) {
  return recv[static_cast<size_t>(r)].data() + outputPlace(c, r).offset;
}

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

void referenceRun(const Case& c, const RedOp& op, const Lanes& lanes, Buffers& b) {
  const size_t elt = coll::typeSize(c.type);
  const size_t slotElems = slotDataBytes(c) / elt;
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

bool wireChannels(const Case& c, const Lanes& lanes, const std::function<ConnMemory(size_t, int, int)>& conn,
                  const std::function<const DevStep*(const std::vector<DevStep>&)>& place,
                  std::vector<std::vector<DevChannel>>* channels) {
  std::map<std::tuple<size_t, int, int>, ConnMemory> made;
  auto connOf = [&](size_t ch, int from, int to) {
    auto it = made.find({ch, from, to});
    if (it == made.end()) it = made.emplace(std::make_tuple(ch, from, to), conn(ch, from, to)).first;
    return it->second;
  };
  const size_t nch = lanes.empty() ? 0 : lanes[0].size();
  channels->assign(static_cast<size_t>(c.nranks), std::vector<DevChannel>(nch, DevChannel{}));
  for (int r = 0; r < c.nranks; ++r) {
    for (size_t ch = 0; ch < nch; ++ch) {
      const auto& ls = lanes[static_cast<size_t>(r)][ch];
      DevChannel& dc = (*channels)[static_cast<size_t>(r)][ch];
      dc.nLanes = static_cast<uint32_t>(ls.size());
      for (size_t li = 0; li < ls.size(); ++li) {
        std::vector<DevStep> ds;
        if (!devSteps(ls[li].steps, &ds)) return false;
        DevLane& dl = dc.lanes[li];
        dl.steps = place(ds);
        dl.nSteps = static_cast<uint32_t>(ds.size());
        dl.nRecv = static_cast<uint8_t>(ls[li].recvFrom.size());
        dl.nSend = static_cast<uint8_t>(ls[li].sendTo.size());
        for (size_t i = 0; i < ls[li].recvFrom.size(); ++i) {
          ConnMemory k = connOf(ch, ls[li].recvFrom[i], r);
          dl.recv[i] = DevConn{k.buff, k.buffLL, k.tail, k.head, 0};
        }
        for (size_t i = 0; i < ls[li].sendTo.size(); ++i) {
          ConnMemory k = connOf(ch, r, ls[li].sendTo[i]);
          dl.send[i] = DevConn{k.buff, k.buffLL, k.tail, k.head, 0};
        }
      }
    }
  }
  return true;
}

std::string firstDifference(const Case& c, const std::vector<Buffers>& expected, const std::vector<Buffers>& got) {
  const size_t elt = coll::typeSize(c.type);
  for (size_t i = 0; i < expected.size() && i < got.size(); ++i) {
    for (int r = 0; r < c.nranks; ++r) {
      const auto& e = expected[i].recv[static_cast<size_t>(r)];
      const auto& g = got[i].recv[static_cast<size_t>(r)];
      if (e == g) continue;
      size_t at = 0;
      while (at < e.size() && at < g.size() && e[at] == g[at]) ++at;
      return "launch " + std::to_string(i) + ", rank " + std::to_string(r) + ": element " + std::to_string(at / elt) +
             " differs from the host path's";
    }
  }
  return "";
}

}  // namespace weft::device::devtest
