// The collective kernel: one CTA per channel runs its lanes' steps through NCCL's Simple protocol
// (NCCL_STEPS slots per connection, head/tail credits, one slot of stepBytes per step) or LL
// (runLaneLL: flagged 16-byte lines), reducing
// with core/coll/reduce_arith.h, the functions the host path reduces with, so both give the same
// bits. Compiled by nvcc (kernels.cu) and by the host compiler against emu/cuda_emu.h
// (emu/host_kernels.cc): the same source runs on a GPU and on host threads.
//
// Per slot, each lane: its leader (first thread) waits for a full slot on every connection it
// receives from and a free one on every connection it sends to; the lane's barrier; every thread
// of the lane moves its share of the elements (thread t takes t, t + n, ...: coalesced); the
// barrier; the leader publishes the sends (system fence, then tail) and frees the received slots
// (head). NCCL splits these roles over dedicated threads so the fence overlaps the next copy; this
// kernel keeps one leader (simpler; the copy loop does not wait on it within a slot).
#pragma once

#include <cstddef>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "core/coll/reduce_arith.h"
#include "core/device/dev.h"
#include "core/device/work.h"

namespace weft::device {

// Element functions: local pre-op, the binary operator, post-op (the last reduction only).
template <class A, coll::arith::Binary kOp>
struct FnPlain {
  using T = typename A::Elem;
  WEFT_HOST_DEV T pre(T x) const { return x; }
  WEFT_HOST_DEV T op(T a, T b) const { return coll::arith::BinaryFn<A, kOp>{}(a, b); }
  WEFT_HOST_DEV T post(T x) const { return x; }
};
template <class A>
struct FnPreMulSum : FnPlain<A, coll::arith::Binary::kAdd> {
  using T = typename A::Elem;
  T scalar;
  WEFT_HOST_DEV T pre(T x) const { return A::mul(x, scalar); }
};
template <class A, bool kSigned>
struct FnSumPostDiv : FnPlain<A, coll::arith::Binary::kAdd> {
  using T = typename A::Elem;
  coll::arith::Divider div;
  WEFT_HOST_DEV T post(T x) const { return A::template divide<kSigned>(x, div); }
};

// A named barrier for the threads of one lane (bar.sync id, n; n a multiple of 32 on a GPU).
WEFT_DEV void laneSync(unsigned id, unsigned nthreads) {
#if defined(__CUDACC__)
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
#else
  emu::context().block->sync(id, nthreads);
#endif
}

// The slots one step of a lane touches: what it receives (r) and where it sends (w). Loops over
// them run to kMaxFan with a guard, fully unrolled, so that the arrays stay in registers (an
// array indexed by a run-time value lives in local memory on a GPU).
template <class T>
struct Slots {
  const T* r[kMaxFan];
  T* w[kMaxFan];
  int nr;
  int nw;
};

#if defined(__CUDACC__)
#define WEFT_UNROLL _Pragma("unroll")
#else
#define WEFT_UNROLL _Pragma("GCC unroll 3")
#endif

template <class T>
WEFT_DEV void sendAll(const Slots<T>& x, size_t j, T v) {
  WEFT_UNROLL
  for (int i = 0; i < kMaxFan; ++i)
    if (i < x.nw) x.w[i][j] = v;
}

template <class Fn, class T>
WEFT_DEV T reduceRecv(const Fn& fn, const Slots<T>& x, size_t j, T v) {
  WEFT_UNROLL
  for (int i = 0; i < kMaxFan; ++i)
    if (i < x.nr) v = fn.op(v, loadSlot(x.r[i] + j));
  return v;
}

// One slot's worth of a step: m elements at element `done` of step `s`, threads t, t + n, ...
template <class Fn, class T>
WEFT_DEV void moveSlot(const Fn& fn, uint8_t prim, uint8_t flags, const T* in, T* out, const Slots<T>& x, size_t m,
                       unsigned t, unsigned n) {
  const bool fromOutput = (flags & kStepFromOutput) != 0;
  const bool remoteFirst = (flags & kStepRemoteFirst) != 0;
  const bool post = (flags & kStepPartial) == 0;
  switch (prim) {
    case kDevSend:
      for (size_t j = t; j < m; j += n) sendAll(x, j, fromOutput ? out[j] : fn.pre(in[j]));
      return;
    case kDevCopySend:
      for (size_t j = t; j < m; j += n) {
        const T v = in[j];
        out[j] = v;
        sendAll(x, j, v);
      }
      return;
    case kDevRecv:
      for (size_t j = t; j < m; j += n) out[j] = loadSlot(x.r[0] + j);
      return;
    case kDevRecvCopySend:
      for (size_t j = t; j < m; j += n) {
        const T v = loadSlot(x.r[0] + j);
        out[j] = v;
        sendAll(x, j, v);
      }
      return;
    case kDevRecvReduceSend:
      for (size_t j = t; j < m; j += n) sendAll(x, j, reduceRecv(fn, x, j, fn.pre(in[j])));
      return;
    case kDevRecvReduceCopySend:
      for (size_t j = t; j < m; j += n) {
        const T v = fn.post(reduceRecv(fn, x, j, fn.pre(in[j])));
        out[j] = v;
        sendAll(x, j, v);
      }
      return;
    case kDevRecvReduceCopy:
      for (size_t j = t; j < m; j += n) {
        const T local = fromOutput ? out[j] : in[j];
        // A partial result in the output was scaled when it was made.
        const T first = fromOutput ? local : fn.pre(local);
        const T v = remoteFirst && x.nr == 1 ? fn.op(loadSlot(x.r[0] + j), first) : reduceRecv(fn, x, j, first);
        out[j] = post ? fn.post(v) : v;
      }
      return;
    default:
      return;
  }
}


// The lane's leader waits until *p reaches `want` (a counter another rank stores into) or the abort
// flag is set; false on abort.
WEFT_DEV bool waitFor(const uint64_t* p, uint64_t want, const uint64_t* abortFlag) {
  for (uint32_t spins = 0;; ++spins) {
    if (loadVolatile(p) >= want) return true;
    if ((spins & 1023u) == 0 && abortFlag != nullptr && loadVolatile(abortFlag) != 0) return false;
    spinPause();
  }
}

// Each connection's steps so far in a lane (connections may have carried other collectives
// before): read at the start, advanced per slot, written back by the leader at the end.
struct ConnSteps {
  uint64_t r[kMaxFan];
  uint64_t s[kMaxFan];
  WEFT_DEV void load(const DevLane& lane) {
    WEFT_UNROLL
    for (int i = 0; i < kMaxFan; ++i) {
      r[i] = i < lane.nRecv ? lane.recv[i].step : 0;
      s[i] = i < lane.nSend ? lane.send[i].step : 0;
    }
  }
  WEFT_DEV void advance(int nr, int nw) {
    WEFT_UNROLL
    for (int i = 0; i < kMaxFan; ++i) {
      r[i] += i < nr ? 1 : 0;
      s[i] += i < nw ? 1 : 0;
    }
  }
  WEFT_DEV void save(DevLane& lane) const {
    WEFT_UNROLL
    for (int i = 0; i < kMaxFan; ++i) {
      if (i < lane.nRecv) lane.recv[i].step = r[i];
      if (i < lane.nSend) lane.send[i].step = s[i];
    }
  }
};

// The leader before a slot: waits for the filled slot on each of the first `nTail` receive
// connections (Simple; LL threads poll their lines' flags instead) and a free slot on each of the
// first `nw` send connections; marks the lane aborted when the abort flag cuts a wait short.
WEFT_DEV void waitSlots(DevLane& lane, const ConnSteps& st, int nTail, int nw, const uint64_t* abortFlag) {
  bool fine = true;
  WEFT_UNROLL
  for (int i = 0; i < kMaxFan; ++i)
    if (fine && i < nTail) fine = waitFor(lane.recv[i].tail, st.r[i] + 1, abortFlag);
  WEFT_UNROLL
  for (int i = 0; i < kMaxFan; ++i)
    if (fine && i < nw && st.s[i] + 1 > kSteps) fine = waitFor(lane.send[i].head, st.s[i] + 1 - kSteps, abortFlag);
  if (!fine) storeVolatile(&lane.aborted, 1);
}

// The leader after a slot: frees the received slots (head; no fence: the reads are done at the
// barrier) and, for Simple, publishes the sent ones (fence, tail).
WEFT_DEV void postSlots(DevLane& lane, const ConnSteps& st, int nr, int nTail) {
  WEFT_UNROLL
  for (int i = 0; i < kMaxFan; ++i)
    if (i < nTail) storeRelease(lane.send[i].tail, st.s[i] + 1);
  WEFT_UNROLL
  for (int i = 0; i < kMaxFan; ++i)
    if (i < nr) storeVolatile(lane.recv[i].head, st.r[i] + 1);
}

// Runs one lane on threads [first, first + n) of the block, with named barrier `bar`.
template <class Fn>
WEFT_DEV void runLane(const Fn& fn, DevWork w, DevLane& lane, unsigned first, unsigned n, unsigned bar) {
  using T = typename Fn::T;
  const unsigned t = threadIdx.x - first;
  const bool leader = t == 0;
  const size_t slotElems = device::slotElems(kDevSimple, w.stepBytes, sizeof(T));
  const T* sendbuff = static_cast<const T*>(w.sendbuff);
  T* recvbuff = static_cast<T*>(w.recvbuff);
  const int nRecv = lane.nRecv, nSend = lane.nSend;
  ConnSteps st;
  st.load(lane);
  for (uint32_t k = 0; k < lane.nSteps; ++k) {
    const uint8_t prim = lane.steps[k].prim;
    const uint8_t flags = lane.steps[k].flags;
    const size_t count = lane.steps[k].count;
    const T* in = sendbuff + lane.steps[k].in;
    T* out = recvbuff + lane.steps[k].out;
    Slots<T> x;
    x.nr = primReceives(prim) ? nRecv : 0;
    x.nw = primSends(prim) ? nSend : 0;
    for (size_t done = 0; done < count; done += slotElems) {
      const size_t m = count - done < slotElems ? count - done : slotElems;
      if (leader) waitSlots(lane, st, x.nr, x.nw, w.abortFlag);
      laneSync(bar, n);
      if (loadVolatile(&lane.aborted) != 0) return;
      WEFT_UNROLL
      for (int i = 0; i < kMaxFan; ++i) {
        x.r[i] = i < x.nr ? reinterpret_cast<const T*>(lane.recv[i].buff + (st.r[i] % kSteps) * w.stepBytes) : nullptr;
        x.w[i] = i < x.nw ? reinterpret_cast<T*>(lane.send[i].buff + (st.s[i] % kSteps) * w.stepBytes) : nullptr;
      }
      moveSlot(fn, prim, flags, in + done, out + done, x, m, t, n);
      laneSync(bar, n);
      if (leader) postSlots(lane, st, x.nr, x.nw);
      st.advance(x.nr, x.nw);
    }
  }
  if (leader) st.save(lane);
}

// ---- LL ----

// Element e of a line's 8 data bytes, and an element put in place e (sizeof(T) <= 8).
template <class T>
using UintOf = std::conditional_t<sizeof(T) == 1, uint8_t,
                                  std::conditional_t<sizeof(T) == 2, uint16_t,
                                                     std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
template <class T>
WEFT_HOST_DEV T elemOf(uint64_t d, int e) {
  return std::bit_cast<T>(static_cast<UintOf<T>>(d >> (8 * sizeof(T) * static_cast<unsigned>(e))));
}
template <class T>
WEFT_HOST_DEV uint64_t packElem(T v, int e) {
  return static_cast<uint64_t>(std::bit_cast<UintOf<T>>(v)) << (8 * sizeof(T) * static_cast<unsigned>(e));
}

// What a primitive makes of element j (writing the output where it does), given the values
// received for it: moveSlot's semantics one element at a time.
template <class Fn, class T>
WEFT_DEV T elemValue(const Fn& fn, uint8_t prim, uint8_t flags, const T* in, T* out, size_t j, const T* rv, int nr) {
  const bool fromOutput = (flags & kStepFromOutput) != 0;
  T v{};
  switch (prim) {
    case kDevSend: return fromOutput ? out[j] : fn.pre(in[j]);
    case kDevCopySend: v = in[j]; break;
    case kDevRecv:
    case kDevRecvCopySend: v = rv[0]; break;
    case kDevRecvReduceSend:
    case kDevRecvReduceCopySend: {
      v = fn.pre(in[j]);
      WEFT_UNROLL
      for (int i = 0; i < kMaxFan; ++i)
        if (i < nr) v = fn.op(v, rv[i]);
      if (prim == kDevRecvReduceSend) return v;
      v = fn.post(v);
      break;
    }
    case kDevRecvReduceCopy: {
      const T local = fromOutput ? out[j] : in[j];
      const T firstOp = fromOutput ? local : fn.pre(local);
      if ((flags & kStepRemoteFirst) != 0 && nr == 1) {
        v = fn.op(rv[0], firstOp);
      } else {
        v = firstOp;
        WEFT_UNROLL
        for (int i = 0; i < kMaxFan; ++i)
          if (i < nr) v = fn.op(v, rv[i]);
      }
      if ((flags & kStepPartial) == 0) v = fn.post(v);
      break;
    }
    default: break;
  }
  out[j] = v;
  return v;
}

// runLane for LL: slots of 16-byte lines, 8 data bytes each. Each thread takes lines t, t + n,
// ...: waits for its received lines' flags itself (no tail), computes, and stores its sent lines
// with their flags in one store. The leader waits for free slots (head) before and frees the
// received slots after, between the lane's barriers.
template <class Fn>
WEFT_DEV void runLaneLL(const Fn& fn, DevWork w, DevLane& lane, unsigned first, unsigned n, unsigned bar) {
  using T = typename Fn::T;
  constexpr int kPerLine = static_cast<int>(8 / sizeof(T));
  const unsigned t = threadIdx.x - first;
  const bool leader = t == 0;
  const size_t slotElems = device::slotElems(kDevLL, w.stepBytes, sizeof(T));
  const T* sendbuff = static_cast<const T*>(w.sendbuff);
  T* recvbuff = static_cast<T*>(w.recvbuff);
  const int nRecv = lane.nRecv, nSend = lane.nSend;
  ConnSteps st;
  st.load(lane);
  for (uint32_t k = 0; k < lane.nSteps; ++k) {
    const uint8_t prim = lane.steps[k].prim;
    const uint8_t flags = lane.steps[k].flags;
    const size_t count = lane.steps[k].count;
    const T* in = sendbuff + lane.steps[k].in;
    T* out = recvbuff + lane.steps[k].out;
    const int nr = primReceives(prim) ? nRecv : 0;
    const int nw = primSends(prim) ? nSend : 0;
    for (size_t done = 0; done < count; done += slotElems) {
      const size_t m = count - done < slotElems ? count - done : slotElems;
      if (leader) waitSlots(lane, st, 0, nw, w.abortFlag);
      laneSync(bar, n);
      if (loadVolatile(&lane.aborted) != 0) return;
      const size_t lines = (m + kPerLine - 1) / kPerLine;
      bool aborted = false;
      for (size_t l = t; l < lines && !aborted; l += n) {
        uint64_t got[kMaxFan] = {};
        WEFT_UNROLL
        for (int i = 0; i < kMaxFan; ++i) {
          if (i >= nr || aborted) continue;
          const uint32_t* line = reinterpret_cast<const uint32_t*>(lane.recv[i].buffLL +
                                                                   (st.r[i] % kSteps) * w.stepBytes) + 4 * l;
          const uint32_t flag = static_cast<uint32_t>(st.r[i] + 1);
          for (uint32_t spins = 1; !loadLine(line, flag, &got[i]); ++spins) {
            if ((spins & 1023u) == 0 && w.abortFlag != nullptr && loadVolatile(w.abortFlag) != 0) {
              storeVolatile(&lane.aborted, 1);
              aborted = true;
              break;
            }
            spinPause();
          }
        }
        if (aborted) break;
        uint64_t word = 0;
        const size_t j0 = done + l * kPerLine;
        WEFT_UNROLL
        for (int e = 0; e < kPerLine; ++e) {
          if (l * kPerLine + static_cast<size_t>(e) >= m) break;
          T rv[kMaxFan];
          WEFT_UNROLL
          for (int i = 0; i < kMaxFan; ++i) rv[i] = elemOf<T>(got[i], e);
          word |= packElem(elemValue(fn, prim, flags, in, out, j0 + static_cast<size_t>(e), rv, nr), e);
        }
        WEFT_UNROLL
        for (int i = 0; i < kMaxFan; ++i) {
          if (i >= nw) continue;
          uint32_t* line = reinterpret_cast<uint32_t*>(lane.send[i].buffLL + (st.s[i] % kSteps) * w.stepBytes) + 4 * l;
          storeLine(line, word, static_cast<uint32_t>(st.s[i] + 1));
        }
      }
      laneSync(bar, n);
      if (loadVolatile(&lane.aborted) != 0) return;
      if (leader) postSlots(lane, st, nr, 0);
      st.advance(nr, nw);
    }
  }
  if (leader) st.save(lane);
}

// The body of the kernel for element arithmetic A: block b runs channel b, its lanes on equal
// shares of the block's threads (barriers 1 and 2).
template <class Fn>
WEFT_DEV void runChannel(const Fn& fn, DevWork w) {
  DevChannel& ch = w.channels[blockIdx.x];
  const unsigned nLanes = ch.nLanes == 0 ? 1 : ch.nLanes;
  const unsigned per = blockDim.x / nLanes;
  const unsigned lane = threadIdx.x / per;
  if (lane >= ch.nLanes) return;
  if (w.proto == kDevLL) return runLaneLL(fn, w, ch.lanes[lane], lane * per, per, 1 + lane);
  runLane(fn, w, ch.lanes[lane], lane * per, per, 1 + lane);
}

template <class A>
WEFT_DEV void collKernelBody(DevWork w) {
  const uint64_t nRanks = w.redArg >> 1;
  using coll::arith::Binary;
  switch (w.red) {
    case kDevProd: return runChannel(FnPlain<A, Binary::kMul>{}, w);
    case kDevMax: return runChannel(FnPlain<A, Binary::kMax>{}, w);
    case kDevMin: return runChannel(FnPlain<A, Binary::kMin>{}, w);
    case kDevPreMulSum: return runChannel(FnPreMulSum<A>{{}, A::scalar(w.redArg)}, w);
    case kDevSumPostDiv:
      if (nRanks >= 2) {
        const coll::arith::Divider div(nRanks);
        if ((w.redArg & 1) != 0) return runChannel(FnSumPostDiv<A, true>{{}, div}, w);
        return runChannel(FnSumPostDiv<A, false>{{}, div}, w);
      }
      return runChannel(FnPlain<A, Binary::kAdd>{}, w);
    default: return runChannel(FnPlain<A, Binary::kAdd>{}, w);
  }
}

}  // namespace weft::device
