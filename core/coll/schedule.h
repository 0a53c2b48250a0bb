// Collective schedules: what NCCL 2.28's ring kernels do on one channel, as a list of primitive
// steps (send, recv, recvReduceSend, …) with element offsets, apart from the code that moves and
// reduces bytes (run.cc on host memory now, CUDA kernels later). Pure functions of the ring, the
// counts and the channel's part: every rank computes its side of the same plan.
#pragma once

#include <cstddef>
#include <vector>

namespace weft::coll {

enum class Coll { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce };

// AllGather's send count and ReduceScatter's receive count are per rank: the other buffer holds
// nRanks of them (the whole buffer NCCL's model and channel split are given).
inline bool countIsPerRank(Coll c) { return c == Coll::kAllGather || c == Coll::kReduceScatter; }

// NCCL's primitives (prims_simple.h names, without the direct variants).
enum class Prim {
  kSend,                // local input (pre-op) -> next
  kCopySend,            // local input -> my output and -> next
  kRecv,                // prev -> my output (post-op)
  kRecvReduceSend,      // prev (+) local input -> next
  kRecvReduceCopySend,  // prev (+) local input -> my output and -> next (post-op)
  kRecvCopySend,        // prev -> my output and -> next
  kRecvReduceCopy,      // prev (+) local input -> my output (post-op)
};
const char* primName(Prim p);

struct Step {
  Prim prim;
  size_t in = 0;     // element offset in the input buffer (primitives that read local input)
  size_t out = 0;    // element offset in the output buffer (primitives that write output)
  size_t count = 0;  // elements
  // What doublingAllReduce adds: its one lane talks to its peers in turn and builds the result in
  // the output over several steps. Ring and tree steps keep the defaults.
  int peer = -1;             // the one peer of the lane (index in recvFrom and sendTo) this step uses; -1: all
  bool fromOutput = false;   // the local operand (sent or reduced) is the output at `out`: a partial
                             // result, already pre-scaled (PreMulSum) and never sent from there
  bool remoteFirst = false;  // reduce received (+) local, not local (+) received: operands in rank order
  bool partial = false;      // not the element's last reduction: the post-op (SumPostDiv) waits
};

// My place in one channel's ring: userRanks[i] is the rank i hops downstream (userRanks[0] is me),
// index my hop distance from rank 0 (NCCL's ring->index), which decides the chunks I own.
struct RingView {
  int nranks = 1;
  int index = 0;
  std::vector<int> userRanks;
};

// The elements of the per-rank count this channel moves: [offset, offset + count).
struct Part {
  size_t offset = 0;
  size_t count = 0;
};

struct ScheduleArgs {
  Coll coll = Coll::kAllReduce;
  size_t countPerRank = 0;  // allgather sendcount, reduce_scatter recvcount, otherwise count
  size_t chunkElems = 1;    // elements of one chunk (NCCL: 2 MiB ring Simple, 512 KiB pipelines)
  size_t alignElems = 1;    // the last loop's chunks are rounded up to this (16 bytes of elements)
  int root = 0;             // broadcast, reduce
};

// The steps of `args.coll` on one channel for the rank at `ring`, moving `part`.
std::vector<Step> ringSchedule(const ScheduleArgs& args, const RingView& ring, Part part);

// My place in one channel's tree: my parent (-1 at the root) and my children (at most 3).
struct TreeView {
  int up = -1;
  std::vector<int> down;
};

// Steps over fixed peers. A primitive that receives takes one slot from every rank of
// `recvFrom` (reducing them into the local input in that order, NCCL's source order); one that
// sends puts the same data into a slot for every rank of `sendTo`.
struct Lane {
  std::vector<int> recvFrom;
  std::vector<int> sendTo;
  std::vector<Step> steps;
};

// NCCL's runTreeSplit for AllReduce on one channel, chunk by chunk (args.chunkElems: one step):
// two lanes running at once, reduce up (a leaf sends its input, an inner rank receives from its
// children, reduces with its input and sends to its parent) and broadcast down (receive from the
// parent, write the output, forward to the children); the root does both in one
// recvReduceCopySend from and to its children. Empty for a tree of one rank.
std::vector<Lane> treeAllReduce(const ScheduleArgs& args, const TreeView& tree, Part part);

// Recursive doubling AllReduce on one channel, weft's own (CPU endpoints, small buffers): log2(p)
// rounds in which rank pairs at distance 1, 2, 4, … in the p = 2^k ranks that take part swap their
// partial results and each reduces both, with the non-power-of-two fold (MPICH's): the first
// 2(n−p) ranks pair up, each even one hands its input to the odd one above it before the rounds
// and gets the result back after them. On 2 ranks: one exchange. Every reduction puts the lower
// ranks' operand first, so every rank computes the same expression and ends with the same bits
// (floating point too). Chunk by chunk (args.chunkElems: one step), one lane whose steps name
// their peer; empty for one rank.
Lane doublingAllReduce(const ScheduleArgs& args, int rank, int nranks, Part part);

// The ranks `rank` exchanges with in doublingAllReduce, in the order of the schedule.
std::vector<int> doublingPeers(int rank, int nranks);

// NCCL's "continuous byte distribution" of one collective over channels (scheduleCollTasksToPlan
// with the collective alone in its plan): `count` elements of `eltSize` bytes cut into cells of
// 16 KiB of traffic (rounded to 16 bytes), channels filled in order up to the plan's traffic per
// channel (the traffic over `taskChannels`, at least 16 KiB): a first (lo) part, middle parts of
// one size and a last (hi) part that takes the rounding, on at most `commChannels` channels.
// Traffic is bytes × `trafficPerByte` (AllReduce 2, AllGather and ReduceScatter nRanks, else 1).
// Returns the parts of channels 0, 1, … (none for count 0).
std::vector<Part> channelParts(size_t count, size_t eltSize, int trafficPerByte, int taskChannels, int commChannels);

}  // namespace weft::coll
