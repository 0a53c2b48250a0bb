// Ring schedules simulated on n ranks without a transport: every rank runs its own step list
// over integer buffers, sends go into a FIFO per ring edge, receives take from it (a step that
// finds its FIFO empty waits its turn). Every send must meet a receive of the same size, nothing
// may deadlock or stay in a FIFO, and the outputs must be the collective's result.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "core/coll/host_cost.h"
#include "core/coll/schedule.h"

namespace weft::coll {
namespace {

struct Rank {
  std::vector<long> in, out;
  std::vector<Step> steps;
  size_t next = 0;
};

// The ring 0 -> 1 -> ... -> n-1 -> 0, seen from `me`.
// An even split for the simulations (they use tiny chunks, far below NCCL's 16 KiB cells).
Part evenPart(size_t count, int nChannels, int channel) {
  size_t per = (count + static_cast<size_t>(nChannels) - 1) / static_cast<size_t>(nChannels);
  per = (per + 3) / 4 * 4;
  size_t start = std::min(count, per * static_cast<size_t>(channel));
  return {start, std::min(per, count - start)};
}

RingView ringOf(int n, int me) {
  RingView v;
  v.nranks = n;
  v.index = me;
  for (int i = 0; i < n; ++i) v.userRanks.push_back((me + i) % n);
  return v;
}

// Runs every rank's steps to the end; false on a deadlock or a size mismatch.
bool simulate(std::vector<Rank>& ranks, std::string* why) {
  int n = static_cast<int>(ranks.size());
  std::vector<std::deque<std::vector<long>>> edge(static_cast<size_t>(n));  // edge[r]: r -> r+1
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < n; ++r) {
      Rank& k = ranks[static_cast<size_t>(r)];
      if (k.next == k.steps.size()) continue;
      const Step& s = k.steps[k.next];
      auto& inbox = edge[static_cast<size_t>((r - 1 + n) % n)];
      bool recv = s.prim != Prim::kSend && s.prim != Prim::kCopySend;
      bool send = s.prim != Prim::kRecv && s.prim != Prim::kRecvReduceCopy;
      std::vector<long> data(s.count);
      if (recv) {
        if (inbox.empty()) continue;
        if (inbox.front().size() != s.count) {
          *why = "rank " + std::to_string(r) + " " + primName(s.prim) + " of " + std::to_string(s.count) +
                 " met a send of " + std::to_string(inbox.front().size());
          return false;
        }
        data = inbox.front();
        inbox.pop_front();
      }
      bool reduce = s.prim == Prim::kRecvReduceSend || s.prim == Prim::kRecvReduceCopySend || s.prim == Prim::kRecvReduceCopy;
      for (size_t i = 0; i < s.count; ++i) {
        if (!recv || reduce) data[i] = (recv ? data[i] : 0) + k.in[s.in + i];
      }
      if (s.prim == Prim::kCopySend) data.assign(k.in.begin() + static_cast<long>(s.in), k.in.begin() + static_cast<long>(s.in + s.count));
      bool writes = s.prim != Prim::kSend && s.prim != Prim::kRecvReduceSend;
      if (writes) std::copy(data.begin(), data.end(), k.out.begin() + static_cast<long>(s.out));
      if (send) edge[static_cast<size_t>(r)].push_back(data);
      ++k.next;
      moved = true;
    }
  }
  for (int r = 0; r < n; ++r) {
    if (ranks[static_cast<size_t>(r)].next != ranks[static_cast<size_t>(r)].steps.size()) {
      *why = "rank " + std::to_string(r) + " is stuck at step " + std::to_string(ranks[static_cast<size_t>(r)].next);
      return false;
    }
    if (!edge[static_cast<size_t>(r)].empty()) {
      *why = "data left on edge " + std::to_string(r);
      return false;
    }
  }
  return true;
}

long inputOf(int r, size_t i) { return static_cast<long>(i * 10 + static_cast<size_t>(r) * 1000003); }

struct Shape {
  int n;
  size_t count;
  size_t chunk;
};

class RingSchedules : public ::testing::TestWithParam<Shape> {};

TEST_P(RingSchedules, EveryCollectiveDeliversItsResultOnEveryChannelPart) {
  const Shape sh = GetParam();
  const int n = sh.n;
  for (Coll coll : {Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter, Coll::kBroadcast, Coll::kReduce}) {
    for (int nch : {1, 3}) {
      bool perRank = coll == Coll::kAllGather || coll == Coll::kReduceScatter;
      size_t total = perRank ? sh.count * static_cast<size_t>(n) : sh.count;
      std::vector<Rank> ranks(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        Rank& k = ranks[static_cast<size_t>(r)];
        size_t inCount = coll == Coll::kReduceScatter ? total : coll == Coll::kAllGather ? sh.count : sh.count;
        k.in.resize(inCount);
        for (size_t i = 0; i < inCount; ++i) k.in[i] = inputOf(r, i);
        k.out.assign(coll == Coll::kAllGather ? total : sh.count, -1);
        ScheduleArgs a;
        a.coll = coll;
        a.countPerRank = sh.count;
        a.chunkElems = sh.chunk;
        a.alignElems = 4;
        a.root = n / 2;
        for (int c = 0; c < nch; ++c) {
          std::vector<Step> s = ringSchedule(a, ringOf(n, r), evenPart(sh.count, nch, c));
          k.steps.insert(k.steps.end(), s.begin(), s.end());
        }
      }
      std::string why;
      ASSERT_TRUE(simulate(ranks, &why)) << "coll " << static_cast<int>(coll) << " n " << n << " channels " << nch << ": " << why;
      for (int r = 0; r < n; ++r) {
        const Rank& k = ranks[static_cast<size_t>(r)];
        for (size_t i = 0; i < k.out.size(); ++i) {
          long want = 0;
          switch (coll) {
            case Coll::kAllReduce:
              for (int q = 0; q < n; ++q) want += inputOf(q, i);
              break;
            case Coll::kReduce:
              if (r != n / 2) continue;
              for (int q = 0; q < n; ++q) want += inputOf(q, i);
              break;
            case Coll::kBroadcast:
              want = inputOf(n / 2, i);
              break;
            case Coll::kAllGather:
              want = inputOf(static_cast<int>(i / sh.count), i % sh.count);
              break;
            case Coll::kReduceScatter:
              for (int q = 0; q < n; ++q) want += inputOf(q, static_cast<size_t>(r) * sh.count + i);
              break;
          }
          ASSERT_EQ(k.out[i], want) << "coll " << static_cast<int>(coll) << " n " << n << " rank " << r << " element " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, RingSchedules,
                         ::testing::Values(Shape{2, 1, 8}, Shape{2, 100, 8}, Shape{3, 7, 4}, Shape{3, 1009, 16},
                                           Shape{4, 64, 4}, Shape{5, 333, 8}, Shape{8, 1000, 12}, Shape{8, 3, 4}));

// NCCL 2.28.9's scheduleCollTasksToPlan by hand: 4 MiB of floats allreduced (traffic 8 MiB) on 16
// channels: 8 KiB cells (16 KiB of traffic), 32 cells per channel, 16 equal parts.
TEST(ChannelParts, AllReduceFillsChannelsInCellsOfSixteenKiBOfTraffic) {
  std::vector<Part> parts = channelParts(size_t{1} << 20, 4, 2, 16, 16);
  ASSERT_EQ(parts.size(), 16u);
  for (size_t c = 0; c < parts.size(); ++c) {
    EXPECT_EQ(parts[c].offset, c * 65536);
    EXPECT_EQ(parts[c].count, 65536u);
  }
}

// A prime count on a 4-channel communicator: 1025 cells, 257 per channel, the last part 254 cells
// less the padding of the last cell.
TEST(ChannelParts, ThePrimeCountsLastPartTakesTheRounding) {
  std::vector<Part> parts = channelParts(2097169, 4, 2, 33, 4);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].count, 526336u);
  EXPECT_EQ(parts[1].count, 526336u);
  EXPECT_EQ(parts[2].count, 526336u);
  EXPECT_EQ(parts[3].count, 518161u);
}

TEST(ChannelParts, CoverTheCountInOrderOnAtMostTheBudget) {
  for (size_t count : {size_t{1}, size_t{7}, size_t{1009}, size_t{4096}, size_t{3} << 20, size_t{10000019}}) {
    for (size_t elt : {size_t{1}, size_t{2}, size_t{8}}) {
      for (int tpb : {1, 2, 3, 8}) {
        for (int budget : {1, 2, 3, 16}) {
          for (int comm : {1, 2, 4, 32}) {
            std::vector<Part> parts = channelParts(count, elt, tpb, budget, comm);
            ASSERT_FALSE(parts.empty());
            EXPECT_LE(parts.size(), static_cast<size_t>(comm));
            size_t next = 0;
            for (size_t c = 0; c < parts.size(); ++c) {
              EXPECT_EQ(parts[c].offset, next);
              EXPECT_GT(parts[c].count, 0u);
              if (c + 1 < parts.size()) {
                EXPECT_EQ(parts[c].count * elt % 16, 0u) << "parts end on cells";
              }
              next += parts[c].count;
            }
            EXPECT_EQ(next, count) << count << " x " << elt << " B, traffic x" << tpb << ", " << budget << "/" << comm;
          }
        }
      }
    }
  }
  EXPECT_TRUE(channelParts(0, 4, 2, 4, 4).empty());
}

// ---- Tree allreduce -------------------------------------------------------------------------
// Lanes simulated like the ring: one FIFO per (sender, receiver) edge, each lane of each rank
// advancing on its own (NCCL's reduce-up and broadcast-down halves run concurrently).

struct TreeRank {
  std::vector<long> in, out;
  std::vector<Lane> lanes;
  std::vector<size_t> next;
};

bool simulateTree(std::vector<TreeRank>& ranks, std::string* why) {
  int n = static_cast<int>(ranks.size());
  std::map<std::pair<int, int>, std::deque<std::vector<long>>> edge;
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < n; ++r) {
      TreeRank& k = ranks[static_cast<size_t>(r)];
      for (size_t l = 0; l < k.lanes.size(); ++l) {
        const Lane& lane = k.lanes[l];
        if (k.next[l] == lane.steps.size()) continue;
        const Step& s = lane.steps[k.next[l]];
        bool recv = s.prim != Prim::kSend && s.prim != Prim::kCopySend;
        bool send = s.prim != Prim::kRecv && s.prim != Prim::kRecvReduceCopy;
        bool reduce = s.prim == Prim::kRecvReduceSend || s.prim == Prim::kRecvReduceCopySend;
        if (recv && std::any_of(lane.recvFrom.begin(), lane.recvFrom.end(), [&](int p) { return edge[{p, r}].empty(); }))
          continue;
        std::vector<long> data(k.in.begin() + static_cast<long>(s.in), k.in.begin() + static_cast<long>(s.in + s.count));
        if (recv && !reduce) data.assign(s.count, 0);
        for (int p : recv ? lane.recvFrom : std::vector<int>{}) {
          std::vector<long> got = edge[{p, r}].front();
          edge[{p, r}].pop_front();
          if (got.size() != s.count) {
            *why = "rank " + std::to_string(r) + " " + primName(s.prim) + " of " + std::to_string(s.count) +
                   " met a send of " + std::to_string(got.size()) + " from rank " + std::to_string(p);
            return false;
          }
          for (size_t i = 0; i < s.count; ++i) data[i] += got[i];
        }
        if (s.prim != Prim::kSend && s.prim != Prim::kRecvReduceSend)
          std::copy(data.begin(), data.end(), k.out.begin() + static_cast<long>(s.out));
        for (int p : send ? lane.sendTo : std::vector<int>{}) edge[{r, p}].push_back(data);
        ++k.next[l];
        moved = true;
      }
    }
  }
  for (int r = 0; r < n; ++r)
    for (size_t l = 0; l < ranks[static_cast<size_t>(r)].lanes.size(); ++l)
      if (ranks[static_cast<size_t>(r)].next[l] != ranks[static_cast<size_t>(r)].lanes[l].steps.size()) {
        *why = "rank " + std::to_string(r) + " lane " + std::to_string(l) + " is stuck";
        return false;
      }
  for (auto& [e, q] : edge)
    if (!q.empty()) {
      *why = "data left on edge " + std::to_string(e.first) + " -> " + std::to_string(e.second);
      return false;
    }
  return true;
}

struct TreeShape {
  const char* name;
  std::vector<int> parent;  // parent of each rank, -1 for the root
};
void PrintTo(const TreeShape& t, std::ostream* os) { *os << t.name; }

class TreeSchedules : public ::testing::TestWithParam<TreeShape> {};

TEST_P(TreeSchedules, AllReduceReachesEveryRankOnEveryChannelPart) {
  const std::vector<int>& parent = GetParam().parent;
  const int n = static_cast<int>(parent.size());
  for (size_t count : {size_t{1}, size_t{7}, size_t{100}, size_t{1009}}) {
    for (int nch : {1, 3}) {
      std::vector<TreeRank> ranks(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        TreeRank& k = ranks[static_cast<size_t>(r)];
        k.in.resize(count);
        for (size_t i = 0; i < count; ++i) k.in[i] = inputOf(r, i);
        k.out.assign(count, -1);
        TreeView v;
        v.up = parent[static_cast<size_t>(r)];
        for (int q = 0; q < n; ++q)
          if (parent[static_cast<size_t>(q)] == r) v.down.push_back(q);
        ScheduleArgs a;
        a.chunkElems = 16;
        size_t parts = 0;
        for (int c = 0; c < nch; ++c) {
          Part part = evenPart(count, nch, c);
          parts += part.count > 0 ? 1 : 0;
          for (Lane& lane : treeAllReduce(a, v, part)) k.lanes.push_back(std::move(lane));
        }
        k.next.assign(k.lanes.size(), 0);
        size_t lanesPerPart = n == 1 ? 0 : v.up < 0 ? 1 : 2;  // the root's one lane does both halves
        ASSERT_EQ(k.lanes.size(), parts * lanesPerPart) << "rank " << r;
      }
      std::string why;
      ASSERT_TRUE(simulateTree(ranks, &why)) << GetParam().name << " count " << count << " channels " << nch << ": " << why;
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i) {
          long want = 0;
          for (int q = 0; q < n; ++q) want += inputOf(q, i);
          if (n == 1) break;  // a tree of one rank has nothing to schedule (the caller copies)
          ASSERT_EQ(ranks[static_cast<size_t>(r)].out[i], want) << GetParam().name << " rank " << r << " element " << i;
        }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TreeSchedules,
    ::testing::Values(TreeShape{"one", {-1}}, TreeShape{"pair", {-1, 0}}, TreeShape{"chain5", {-1, 0, 1, 2, 3}},
                      // NCCL's cross-node shape: a node's first rank has a chain child and up to two
                      // child nodes (arity 3), tree roots with 2 children.
                      TreeShape{"arity3", {-1, 0, 0, 0, 1, 2, 3, 6}}, TreeShape{"binary7", {-1, 0, 0, 1, 1, 2, 2}}),
    [](const auto& p) { return std::string(p.param.name); });

// ---- Recursive doubling allreduce --------------------------------------------------------
// Simulated over expressions instead of numbers: an element is the text of the reduction that
// made it ("((0+1)+2)"), so the simulation sees operand order and bracketing, which decide the
// bits of a floating-point result. Every rank must end with the same text, every rank's input
// in it once in rank order, and the post-op ('!') applied once, last.

struct ExprRank {
  std::vector<std::string> in, out;
  Lane lane;
  size_t next = 0;
};

bool simulateDoubling(std::vector<ExprRank>& ranks, std::string* why) {
  const int n = static_cast<int>(ranks.size());
  std::map<std::pair<int, int>, std::deque<std::vector<std::string>>> edge;
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < n; ++r) {
      ExprRank& k = ranks[static_cast<size_t>(r)];
      while (k.next < k.lane.steps.size()) {
        const Step& s = k.lane.steps[k.next];
        if (s.peer < 0 || static_cast<size_t>(s.peer) >= k.lane.recvFrom.size()) {
          *why = "rank " + std::to_string(r) + " step without a peer";
          return false;
        }
        const int peer = k.lane.recvFrom[static_cast<size_t>(s.peer)];
        const bool recv = s.prim == Prim::kRecv || s.prim == Prim::kRecvReduceCopy;
        auto& q = edge[{peer, r}];
        if (recv && q.empty()) break;
        const std::vector<std::string>& src = s.fromOutput ? k.out : k.in;
        std::vector<std::string> local(src.begin() + static_cast<long>(s.fromOutput ? s.out : s.in),
                                       src.begin() + static_cast<long>((s.fromOutput ? s.out : s.in) + s.count));
        if (s.prim == Prim::kSend) {
          edge[{r, k.lane.sendTo[static_cast<size_t>(s.peer)]}].push_back(local);
        } else if (recv) {
          std::vector<std::string> got = q.front();
          q.pop_front();
          if (got.size() != s.count) {
            *why = "rank " + std::to_string(r) + " met a send of another size from rank " + std::to_string(peer);
            return false;
          }
          for (size_t i = 0; i < s.count; ++i) {
            std::string v = got[i];
            if (s.prim == Prim::kRecvReduceCopy) {
              v = "(" + (s.remoteFirst ? got[i] + "+" + local[i] : local[i] + "+" + got[i]) + ")";
              if (!s.partial) v += "!";
            }
            k.out[s.out + i] = v;
          }
        } else {
          *why = std::string("unexpected primitive ") + primName(s.prim);
          return false;
        }
        ++k.next;
        moved = true;
      }
    }
  }
  for (int r = 0; r < n; ++r)
    if (ranks[static_cast<size_t>(r)].next != ranks[static_cast<size_t>(r)].lane.steps.size()) {
      *why = "rank " + std::to_string(r) + " is stuck";
      return false;
    }
  for (auto& [e, q] : edge)
    if (!q.empty()) {
      *why = "data left on edge " + std::to_string(e.first) + " -> " + std::to_string(e.second);
      return false;
    }
  return true;
}

class DoublingSchedules : public ::testing::TestWithParam<int> {};

TEST_P(DoublingSchedules, EveryRankEndsWithTheSameExpressionInRankOrder) {
  const int n = GetParam();
  std::string order;  // "0+1+…+n-1"
  for (int r = 0; r < n; ++r) order += (r ? "+" : "") + std::to_string(r);
  for (size_t count : {size_t{1}, size_t{7}, size_t{100}}) {
    std::vector<ExprRank> ranks(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      ExprRank& k = ranks[static_cast<size_t>(r)];
      k.in.assign(count, std::to_string(r));
      k.out.assign(count, "?");
      ScheduleArgs a;
      a.chunkElems = 16;
      k.lane = doublingAllReduce(a, r, n, Part{0, count});
      EXPECT_EQ(k.lane.recvFrom, doublingPeers(r, n));
    }
    std::string why;
    ASSERT_TRUE(simulateDoubling(ranks, &why)) << n << " ranks, count " << count << ": " << why;
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < count; ++i) {
        const std::string& got = ranks[static_cast<size_t>(r)].out[i];
        ASSERT_EQ(got, ranks[0].out[i]) << n << " ranks: rank " << r << " element " << i;
        std::string flat;
        for (char c : got)
          if (c != '(' && c != ')' && c != '!') flat += c;
        EXPECT_EQ(flat, order) << got;
        EXPECT_EQ(std::count(got.begin(), got.end(), '!'), 1) << got;
        EXPECT_EQ(got.back(), '!') << got;
      }
    }
  }
}

TEST(DoublingSchedules, TwoRanksExchangeOnceAndOneRankHasNothingToDo) {
  ScheduleArgs a;
  a.chunkElems = 1024;
  Lane lane = doublingAllReduce(a, 1, 2, Part{0, 10});
  EXPECT_EQ(lane.recvFrom, std::vector<int>{0});
  ASSERT_EQ(lane.steps.size(), 2u);
  EXPECT_EQ(lane.steps[0].prim, Prim::kSend);
  EXPECT_EQ(lane.steps[1].prim, Prim::kRecvReduceCopy);
  EXPECT_TRUE(lane.steps[1].remoteFirst);  // rank 0's operand first
  EXPECT_FALSE(lane.steps[1].partial);
  EXPECT_TRUE(doublingAllReduce(a, 0, 1, Part{0, 10}).steps.empty());
  // The fold: on 3 ranks rank 0 hands its input to rank 1 and gets the result back.
  EXPECT_EQ(doublingPeers(0, 3), std::vector<int>{1});
  EXPECT_EQ(doublingPeers(1, 3), (std::vector<int>{0, 2}));
  EXPECT_EQ(doublingPeers(2, 3), std::vector<int>{1});
}

// The cost model's picks on one host, as measured there (bench/README.md, "Host algorithms"):
// doubling for 8 B at every rank count, Ring for 1 MiB; on 2 ranks the crossover lies between
// 16 KiB (doubling measured 15% faster) and 64 KiB (Ring 6% faster).
TEST(HostCostModel, DoublingForSmallAllReducesRingForLargeOnes) {
  for (int n : {2, 3, 4, 5, 8, 16}) {
    HostAllReduceTimes small = hostAllReduceTimes(8, n, 1);
    EXPECT_LT(small.doubling, small.ring) << n << " ranks";
    EXPECT_EQ(small.tree, -1) << n << " ranks";
    HostAllReduceTimes large = hostAllReduceTimes(size_t{1} << 20, n, 1);
    EXPECT_GT(large.doubling, large.ring) << n << " ranks";
  }
  HostAllReduceTimes at16k = hostAllReduceTimes(16 << 10, 2, 1), at64k = hostAllReduceTimes(64 << 10, 2, 1);
  EXPECT_LT(at16k.doubling, at16k.ring);
  EXPECT_GT(at64k.doubling, at64k.ring);
  EXPECT_GT(hostAllReduceTimes(8, 4, 2).tree, 0);  // several hosts: Tree has a time
  EXPECT_EQ(hostAllReduceTimes(8, 1, 1).doubling, 0);
}

// More ranks than CPUs (4 ranks on 2 CPUs, measured): a step costs a context switch, so doubling's
// fewer steps win far further up — 16 KiB and 64 KiB (measured 2.0x and 1.4-1.8x faster than
// Ring), while Ring still wins at 1 MiB (measured 1.5x faster).
TEST(HostCostModel, OversubscribedHostsMoveTheCrossoverUp) {
  for (size_t bytes : {size_t{8}, size_t{16} << 10, size_t{64} << 10}) {
    HostAllReduceTimes t = hostAllReduceTimes(bytes, 4, 1, true);
    EXPECT_LT(t.doubling, t.ring) << bytes;
  }
  HostAllReduceTimes large = hostAllReduceTimes(size_t{1} << 20, 4, 1, true);
  EXPECT_GT(large.doubling, large.ring);
  EXPECT_GT(hostCost(1, true).alphaUs, 10 * hostCost(1, false).alphaUs);
  // The pick follows: the same rule the communicator applies.
  EXPECT_TRUE(hostPick(Coll::kAllReduce, 64 << 10, 4, 1, true, false, HostDoubling::kAuto, true).doubling);
  EXPECT_FALSE(hostPick(Coll::kAllReduce, 64 << 10, 4, 1, true, false, HostDoubling::kAuto, false).doubling);
}

INSTANTIATE_TEST_SUITE_P(Ranks, DoublingSchedules, ::testing::Values(2, 3, 4, 5, 6, 7, 8, 12, 16),
                         [](const auto& p) { return std::to_string(p.param) + "ranks"; });

}  // namespace
}  // namespace weft::coll
