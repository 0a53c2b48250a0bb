// What one collective's kernel launch reads: plain structs with fixed-width fields, laid out the
// same by nvcc and by the host compiler, made by the host (core/device/plan.h) in memory the
// kernel can read (device memory on a GPU, host memory under the emulation).
//
// One CTA per channel, as in NCCL. A channel runs one lane (a ring) or two at once (a tree's reduce
// up and broadcast down, NCCL's runTreeSplit), each on its own share of the block's threads. A lane
// is a list of steps (core/coll/schedule.h's, written once for host and device) over at most three
// receive and three send connections, each a FIFO of kSteps slots with NCCL's head/tail credits.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define WEFT_WORK_FN __host__ __device__ __forceinline__ constexpr
#else
#define WEFT_WORK_FN inline constexpr
#endif

namespace weft::device {

inline constexpr int kSteps = 8;   // NCCL_STEPS: slots per connection
inline constexpr int kMaxFan = 3;  // NCCL_MAX_TREE_ARITY: peers one primitive receives from or sends to
inline constexpr int kMaxLanes = 2;

// The primitives, numbered as core/coll/schedule.h's Prim.
enum DevPrim : uint8_t {
  kDevSend,
  kDevCopySend,
  kDevRecv,
  kDevRecvReduceSend,
  kDevRecvReduceCopySend,
  kDevRecvCopySend,
  kDevRecvReduceCopy,
};

// Whether a primitive takes a slot from each receive connection, or fills one on each send one.
WEFT_WORK_FN bool primReceives(uint8_t p) { return p != kDevSend && p != kDevCopySend; }
WEFT_WORK_FN bool primSends(uint8_t p) { return p != kDevRecv && p != kDevRecvReduceCopy; }

enum DevStepFlags : uint8_t {
  kStepFromOutput = 1,   // the local operand is the output at `out` (a partial result)
  kStepRemoteFirst = 2,  // received (+) local
  kStepPartial = 4,      // not the element's last reduction: no post-op
};

struct DevStep {
  uint64_t in;     // element offset in the send buffer
  uint64_t out;    // element offset in the receive buffer
  uint64_t count;  // elements, moved one slot (stepBytes) at a time
  uint8_t prim;    // DevPrim
  uint8_t flags;   // DevStepFlags
  uint8_t pad[6];
};

// One end of one connection. The FIFOs and `tail` live with the receiver, `head` with the sender;
// each end polls its own counter and stores into the other's. Slot s of a FIFO is at
// buff + (s % kSteps) * stepBytes. Both protocols count the same steps (NCCL's conn->step), each
// in its own FIFO.
struct DevConn {
  char* buff;      // Simple: kSteps slots of DevWork::stepBytes
  char* buffLL;    // LL: kSteps slots of DevWork::stepBytes of 16-byte lines (half of it data)
  uint64_t* tail;  // the sender stores step + 1 when a slot is full
  uint64_t* head;  // the receiver stores step + 1 when a slot is free again
  uint64_t step;   // steps this end has moved so far: kept between launches (the kernel writes it back)
};

struct DevLane {
  DevConn recv[kMaxFan];
  DevConn send[kMaxFan];
  const DevStep* steps;
  uint32_t nSteps;
  uint8_t nRecv;
  uint8_t nSend;
  uint8_t pad[2];
  uint64_t aborted;  // set by the lane's leader when it saw the abort flag: every thread leaves
};

struct DevChannel {
  DevLane lanes[kMaxLanes];
  uint32_t nLanes;
  uint32_t pad;
};

// NCCL's protocols. Simple: a slot is data, published with a fence and `tail`. LL: a slot is
// 16-byte lines {data1, flag1, data2, flag2} (u32 each), flag = step + 1 in both halves, written in
// one store and polled by the receiving threads themselves: no fence, no tail; 8 data bytes per
// line, so a slot carries stepBytes / 2.
enum DevProto : uint8_t { kDevSimple, kDevLL };

// Elements of `eltSize` bytes one slot of `stepBytes` carries: all of it for Simple, 8 data bytes
// of each 16-byte line for LL. A step of `count` elements moves ceil(count / slotElems) slots on
// each connection it uses (the kernel's loop, and the host's count of every connection's steps).
WEFT_WORK_FN size_t slotElems(uint8_t proto, uint32_t stepBytes, size_t eltSize) {
  return proto == kDevLL ? stepBytes / 16 * (8 / eltSize) : stepBytes / eltSize;
}
WEFT_WORK_FN uint64_t slotsOf(uint64_t count, size_t perSlot) { return (count + perSlot - 1) / perSlot; }

// Reduction kinds: core/coll/reduce.h's RedKind with Min and Max apart.
enum DevRed : uint8_t { kDevSum, kDevProd, kDevMax, kDevMin, kDevPreMulSum, kDevSumPostDiv };

struct DevWork {
  const void* sendbuff;
  void* recvbuff;
  DevChannel* channels;      // gridDim.x of them: block b runs channels[b]
  const uint64_t* abortFlag; // non-zero: every lane stops at its next wait
  uint64_t redArg;           // RedOp::arg (PreMulSum's scalar bits, SumPostDiv's nRanks << 1 | signed)
  uint32_t stepBytes;        // bytes per slot (all connections of the launch; LL: of lines)
  uint8_t type;              // weft_datatype_t
  uint8_t red;               // DevRed
  uint8_t proto;             // DevProto
  uint8_t pad;
};

}  // namespace weft::device
