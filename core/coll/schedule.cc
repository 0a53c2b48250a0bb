#include "core/coll/schedule.h"

#include <algorithm>

namespace weft::coll {

namespace {

size_t alignUp(size_t x, size_t a) { return a <= 1 ? x : (x + a - 1) / a * a; }

int mod(int a, int n) { return ((a % n) + n) % n; }

class Builder {
 public:
  explicit Builder(std::vector<Step>& out) : out_(out) {}
  void add(Prim p, size_t in, size_t out, size_t count) {
    if (count > 0) out_.push_back({p, in, out, count});
  }
  void add(const Step& s) {
    if (s.count > 0) out_.push_back(s);
  }

 private:
  std::vector<Step>& out_;
};

// NCCL's runRing for AllReduce: per loop of n chunks, chunk c belongs to ring position c; n-1
// reduce steps end with my chunk final, n-1 copy steps spread the final chunks.
void allReduce(const ScheduleArgs& a, const RingView& ring, Part part, Builder& b) {
  const int n = ring.nranks;
  const int r = ring.index;
  const size_t loop = static_cast<size_t>(n) * a.chunkElems;
  for (size_t done = 0; done < part.count; done += loop) {
    size_t rem = part.count - done;
    size_t chunk = rem < loop ? alignUp((rem + static_cast<size_t>(n) - 1) / static_cast<size_t>(n), a.alignElems) : a.chunkElems;
    auto at = [&](int c, Prim p) {
      size_t start = static_cast<size_t>(c) * chunk;
      if (start >= rem) return;  // an empty chunk: neither side moves it
      size_t off = part.offset + done + start;
      b.add(p, off, off, std::min(chunk, rem - start));
    };
    at(mod(r - 1, n), Prim::kSend);
    for (int j = 2; j <= n - 1; ++j) at(mod(r - j, n), Prim::kRecvReduceSend);
    at(r, Prim::kRecvReduceCopySend);
    for (int j = 1; j <= n - 2; ++j) at(mod(r - j, n), Prim::kRecvCopySend);
    at(mod(r + 1, n), Prim::kRecv);
  }
}

// AllGather and ReduceScatter walk the blocks by user rank (all_gather.h, reduce_scatter.h), one
// primitive per block and chunk. AllGather starts with my block and then forwards the blocks of
// the ranks upstream (hops n-1, n-2, ..., 1); ReduceScatter starts with the block of the rank
// just upstream and ends with mine, reduced by everyone.
void blockWalk(const ScheduleArgs& a, const RingView& ring, Part part, Builder& b) {
  const int n = ring.nranks;
  const bool gather = a.coll == Coll::kAllGather;
  const Prim first = gather ? Prim::kCopySend : Prim::kSend;
  const Prim middle = gather ? Prim::kRecvCopySend : Prim::kRecvReduceSend;
  const Prim last = gather ? Prim::kRecv : Prim::kRecvReduceCopy;
  for (size_t off = 0; off < part.count; off += a.chunkElems) {
    size_t base = part.offset + off;
    size_t m = std::min(a.chunkElems, part.count - off);
    for (int k = 0; k < n; ++k) {
      int hop = gather ? (n - k) % n : n - 1 - k;
      size_t block = static_cast<size_t>(ring.userRanks[static_cast<size_t>(hop)]) * a.countPerRank + base;
      Prim p = k == 0 ? first : k == n - 1 ? last : middle;
      if (gather) b.add(p, base, block, m);  // only copySend reads the input
      else b.add(p, block, k == n - 1 ? base : 0, m);
    }
  }
}

// One primitive per chunk of `part`, in place (pipelines and trees).
void chunked(Builder& b, Prim p, Part part, size_t chunkElems) {
  for (size_t off = 0; off < part.count; off += chunkElems) {
    size_t base = part.offset + off;
    b.add(p, base, base, std::min(chunkElems, part.count - off));
  }
}

// Pipelines along the ring: broadcast flows from the root, reduce flows into it.
void pipeline(const ScheduleArgs& a, const RingView& ring, Part part, Builder& b) {
  const int n = ring.nranks;
  const int me = ring.userRanks[0];
  const int next = ring.userRanks[1 % static_cast<size_t>(n)];
  const int prev = ring.userRanks[static_cast<size_t>(n - 1)];
  Prim p;
  if (a.coll == Coll::kBroadcast) {
    p = me == a.root ? Prim::kCopySend : next == a.root ? Prim::kRecv : Prim::kRecvCopySend;
  } else {
    p = prev == a.root ? Prim::kSend : me == a.root ? Prim::kRecvReduceCopy : Prim::kRecvReduceSend;
  }
  chunked(b, p, part, a.chunkElems);
}

}  // namespace

const char* primName(Prim p) {
  switch (p) {
    case Prim::kSend: return "send";
    case Prim::kCopySend: return "copySend";
    case Prim::kRecv: return "recv";
    case Prim::kRecvReduceSend: return "recvReduceSend";
    case Prim::kRecvReduceCopySend: return "recvReduceCopySend";
    case Prim::kRecvCopySend: return "recvCopySend";
    case Prim::kRecvReduceCopy: return "recvReduceCopy";
  }
  return "?";
}

std::vector<Step> ringSchedule(const ScheduleArgs& args, const RingView& ring, Part part) {
  std::vector<Step> out;
  if (ring.nranks < 2 || part.count == 0) return out;
  Builder b(out);
  switch (args.coll) {
    case Coll::kAllReduce: allReduce(args, ring, part, b); break;
    case Coll::kAllGather:
    case Coll::kReduceScatter: blockWalk(args, ring, part, b); break;
    case Coll::kBroadcast:
    case Coll::kReduce: pipeline(args, ring, part, b); break;
  }
  return out;
}

std::vector<Lane> treeAllReduce(const ScheduleArgs& args, const TreeView& tree, Part part) {
  std::vector<Lane> lanes;
  bool root = tree.up < 0;
  bool leaf = tree.down.empty();
  if ((root && leaf) || part.count == 0) return lanes;
  std::vector<int> up;
  if (!root) up.push_back(tree.up);
  auto chunks = [&](Lane& lane, Prim p) {
    Builder b(lane.steps);
    chunked(b, p, part, args.chunkElems);
  };
  if (root) {
    lanes.push_back({tree.down, tree.down, {}});
    chunks(lanes.back(), Prim::kRecvReduceCopySend);
    return lanes;
  }
  lanes.push_back({leaf ? std::vector<int>{} : tree.down, up, {}});
  chunks(lanes.back(), leaf ? Prim::kSend : Prim::kRecvReduceSend);
  lanes.push_back({up, leaf ? std::vector<int>{} : tree.down, {}});
  chunks(lanes.back(), leaf ? Prim::kRecv : Prim::kRecvCopySend);
  return lanes;
}

namespace {

// Recursive doubling's ranks: p = 2^k <= n take part in the rounds; the first 2(n−p) ranks fold
// in pairs (the odd one takes part as virtual rank rank/2), the others are virtual rank rank−(n−p).
struct Doubling {
  int p = 1;
  int extra = 0;  // n − p
  int fold(int rank) const { return rank < 2 * extra ? (rank % 2 == 0 ? rank + 1 : rank - 1) : -1; }
  bool folded(int rank) const { return rank < 2 * extra && rank % 2 == 0; }
  int virt(int rank) const { return rank < 2 * extra ? rank / 2 : rank - extra; }
  int real(int v) const { return v < extra ? 2 * v + 1 : v + extra; }
};

Doubling doublingOf(int nranks) {
  Doubling d;
  while (d.p * 2 <= nranks) d.p *= 2;
  d.extra = nranks - d.p;
  return d;
}

}  // namespace

std::vector<int> doublingPeers(int rank, int nranks) {
  std::vector<int> peers;
  if (nranks < 2) return peers;
  Doubling d = doublingOf(nranks);
  if (d.fold(rank) >= 0) peers.push_back(d.fold(rank));
  if (d.folded(rank)) return peers;
  for (int mask = 1; mask < d.p; mask <<= 1) peers.push_back(d.real(d.virt(rank) ^ mask));
  return peers;
}

Lane doublingAllReduce(const ScheduleArgs& args, int rank, int nranks, Part part) {
  Lane lane;
  if (nranks < 2 || part.count == 0) return lane;
  const Doubling d = doublingOf(nranks);
  lane.recvFrom = lane.sendTo = doublingPeers(rank, nranks);
  const int fold = d.fold(rank);
  const int v = d.virt(rank);
  Builder b(lane.steps);
  for (size_t off = 0; off < part.count; off += args.chunkElems) {
    const size_t base = part.offset + off;
    const size_t m = std::min(args.chunkElems, part.count - off);
    auto step = [&](Prim p, int peer) {
      Step s{p, base, base, m};
      s.peer = peer;
      return s;
    };
    if (d.folded(rank)) {  // my input to the odd rank above, the result back from it
      b.add(step(Prim::kSend, 0));
      b.add(step(Prim::kRecv, 0));
      continue;
    }
    int at = 0;  // the peer's index
    bool have = false;  // the output holds my partial result
    if (fold >= 0) {
      Step s = step(Prim::kRecvReduceCopy, at++);
      s.remoteFirst = s.partial = true;  // the even rank is below me; the rounds follow
      b.add(s);
      have = true;
    }
    for (int mask = 1; mask < d.p; mask <<= 1, ++at) {
      Step send = step(Prim::kSend, at);
      send.fromOutput = have;
      b.add(send);
      Step reduce = step(Prim::kRecvReduceCopy, at);
      reduce.fromOutput = have;
      reduce.remoteFirst = (v ^ mask) < v;  // the lower virtual rank's ranks come first
      reduce.partial = mask * 2 < d.p;
      b.add(reduce);
      have = true;
    }
    if (fold >= 0) {
      Step back = step(Prim::kSend, 0);
      back.fromOutput = true;
      b.add(back);
    }
  }
  return lane;
}

std::vector<Part> channelParts(size_t count, size_t eltSize, int trafficPerByte, int taskChannels, int commChannels) {
  constexpr size_t kMinTrafficPerChannel = size_t{16} << 10;
  std::vector<Part> parts;
  if (count == 0) return parts;
  auto divUp = [](size_t a, size_t b) { return (a + b - 1) / b; };
  const size_t tpb = static_cast<size_t>(std::max(1, trafficPerByte));
  const size_t maxChannels = static_cast<size_t>(std::max(1, commChannels));
  const size_t cellSize = divUp(divUp(kMinTrafficPerChannel, tpb), 16) * 16;
  const size_t eltsPerCell = cellSize / eltSize;
  const size_t cells = divUp(count * eltSize, cellSize);
  const size_t trafficPerCell = cellSize * tpb;
  const size_t traffic = std::max(kMinTrafficPerChannel, count * eltSize * tpb);
  const size_t budget = std::min(static_cast<size_t>(std::max(1, taskChannels)), maxChannels);
  const size_t perChannel = std::max(kMinTrafficPerChannel, traffic / budget);
  size_t cellsPerChannel = std::min(cells, divUp(perChannel, trafficPerCell));
  // The first channel takes what fits in its budget; on a one-channel communicator, everything.
  size_t cellsLo = maxChannels == 1 ? cells : std::min(cells, divUp(perChannel, trafficPerCell));
  size_t nMid = (cells - cellsLo) / cellsPerChannel;
  size_t cellsHi = (cells - cellsLo) % cellsPerChannel;
  size_t used = 1 + nMid + (cellsHi != 0 ? 1 : 0);
  if (used > maxChannels) {  // more than the communicator has: spread the rest over what is left
    nMid = maxChannels - 2;
    cellsPerChannel = (cells - cellsLo) / (nMid + 1);
    cellsHi = cellsPerChannel + (cells - cellsLo) % (nMid + 1);
  }
  if (cellsHi == 0 && nMid != 0) {
    cellsHi = cellsPerChannel;
    nMid -= 1;
  }
  size_t countLo = cellsLo * eltsPerCell;
  size_t countMid = cellsPerChannel * eltsPerCell;
  size_t countHi = cellsHi * eltsPerCell;
  (countHi != 0 ? countHi : countLo) -= cells * eltsPerCell - count;  // the last part ends at count
  size_t offset = 0;
  auto add = [&](size_t n) {
    parts.push_back({offset, n});
    offset += n;
  };
  add(countLo);
  for (size_t i = 0; i < nMid; ++i) add(countMid);
  if (countHi != 0) add(countHi);
  return parts;
}

}  // namespace weft::coll
