// The cases the collective kernel is tested on, on host threads (emu_coll_test.cc) and on a GPU
// (tests/gpu): ranks side by side in one process, rings and trees of their own over 1-2
// channels, the schedules and channel parts the host path computes, and the reference result:
// the same schedules run one slot at a time with the host path's reduction code
// (core/coll/reduce.h called as core/coll/run.cc calls it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/coll/reduce.h"
#include "core/coll/schedule.h"
#include "core/device/work.h"

namespace weft::device::devtest {

enum class Algo { kRing, kTree };

struct Case {
  coll::Coll coll = coll::Coll::kAllReduce;
  Algo algo = Algo::kRing;
  weft_datatype_t type = weftFloat32;
  int userOp = weftSum;
  int nranks = 2;
  int nchannels = 1;
  size_t count = 1001;  // per rank for AllGather and ReduceScatter
  bool inPlace = false;
  int root = 0;
  uint32_t stepBytes = 64;  // a slot: data for Simple, 16-byte lines (half data) for LL
  DevProto proto = kDevSimple;
  unsigned nthreads = 8;
  int repeats = 2;  // launches back to back on the same connections (steps carry over)
};

std::string describe(const Case& c);
// The data one slot carries: stepBytes, or half of it in LL lines.
size_t slotDataBytes(const Case& c);
std::string collName(coll::Coll c);

// One lane of one rank: its steps and its peers.
struct LaneSpec {
  std::vector<coll::Step> steps;
  std::vector<int> recvFrom, sendTo;
};
// lanes[rank][channel]: the lanes of each rank's channels.
using Lanes = std::vector<std::vector<std::vector<LaneSpec>>>;

Lanes plan(const Case& c);

// Where rank r's input or output starts: in its receive buffer or its send buffer, at a byte
// offset (NCCL's in-place layouts).
struct Place {
  bool inRecv;
  size_t offset;
};
Place inputPlace(const Case& c, int r);
Place outputPlace(const Case& c, int r);

// Each rank's buffers (host memory): send and receive, inputs and outputs where Place says.
struct Buffers {
  std::vector<std::vector<char>> send, recv;  // per rank
  const void* in(const Case& c, int r) const;
  void* out(const Case& c, int r);
};
Buffers makeBuffers(const Case& c, uint32_t seed);

// The reference: fills b's outputs as the host path would (fails the test if it deadlocks).
void referenceRun(const Case& c, const coll::RedOp& op, const Lanes& lanes, Buffers& b);

// Where a connection's FIFOs (kSteps slots of c.stepBytes each) and counters are (zeroed).
struct ConnMemory {
  char* buff;
  char* buffLL;
  uint64_t* tail;
  uint64_t* head;
};

// Each rank's channels for the kernel: connections from `conn(channel, from, to)` (called once
// per connection), steps where `place(steps)` puts them (kept by the caller until the launches are
// done). False when a lane has no kernel form.
bool wireChannels(const Case& c, const Lanes& lanes, const std::function<ConnMemory(size_t, int, int)>& conn,
                  const std::function<const DevStep*(const std::vector<DevStep>&)>& place,
                  std::vector<std::vector<DevChannel>>* channels);

// The first difference between two runs' outputs, or "" when they are equal bit for bit.
std::string firstDifference(const Case& c, const std::vector<Buffers>& expected, const std::vector<Buffers>& got);

}  // namespace weft::device::devtest
