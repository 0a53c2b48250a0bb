// The collective kernel: one CTA per channel runs its lanes' steps through the Simple protocol
// (NCCL_STEPS slots per connection, head/tail credits, one slot of stepBytes per step), reducing
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
#include <cstdint>

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

WEFT_HOST_DEV bool primReceives(uint8_t p) { return p != kDevSend && p != kDevCopySend; }
WEFT_HOST_DEV bool primSends(uint8_t p) { return p != kDevRecv && p != kDevRecvReduceCopy; }

// The lane's leader waits until *p reaches `want` (a counter another rank stores into) or the abort
// flag is set; false on abort.
WEFT_DEV bool waitFor(const uint64_t* p, uint64_t want, const uint64_t* abortFlag) {
  for (uint32_t spins = 0;; ++spins) {
    if (loadVolatile(p) >= want) return true;
    if ((spins & 1023u) == 0 && abortFlag != nullptr && loadVolatile(abortFlag) != 0) return false;
    spinPause();
  }
}

// Runs one lane on threads [first, first + n) of the block, with named barrier `bar`.
template <class Fn>
WEFT_DEV void runLane(const Fn& fn, DevWork w, DevLane& lane, unsigned first, unsigned n, unsigned bar) {
  using T = typename Fn::T;
  const unsigned t = threadIdx.x - first;
  const bool leader = t == 0;
  const size_t slotElems = w.stepBytes / sizeof(T);
  const T* sendbuff = static_cast<const T*>(w.sendbuff);
  T* recvbuff = static_cast<T*>(w.recvbuff);
  const int nRecv = lane.nRecv, nSend = lane.nSend;
  // Each connection's steps so far (connections may have carried different collectives before).
  uint64_t rstep[kMaxFan], sstep[kMaxFan];
  WEFT_UNROLL
  for (int i = 0; i < kMaxFan; ++i) {
    rstep[i] = i < nRecv ? lane.recv[i].step : 0;
    sstep[i] = i < nSend ? lane.send[i].step : 0;
  }
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
      if (leader) {
        bool fine = true;
        WEFT_UNROLL
        for (int i = 0; i < kMaxFan; ++i)
          if (fine && i < x.nr) fine = waitFor(lane.recv[i].tail, rstep[i] + 1, w.abortFlag);
        WEFT_UNROLL
        for (int i = 0; i < kMaxFan; ++i)
          if (fine && i < x.nw && sstep[i] + 1 > kSteps)
            fine = waitFor(lane.send[i].head, sstep[i] + 1 - kSteps, w.abortFlag);
        if (!fine) storeVolatile(&lane.aborted, 1);
      }
      laneSync(bar, n);
      if (loadVolatile(&lane.aborted) != 0) return;
      WEFT_UNROLL
      for (int i = 0; i < kMaxFan; ++i) {
        x.r[i] = i < x.nr ? reinterpret_cast<const T*>(lane.recv[i].buff + (rstep[i] % kSteps) * w.stepBytes) : nullptr;
        x.w[i] = i < x.nw ? reinterpret_cast<T*>(lane.send[i].buff + (sstep[i] % kSteps) * w.stepBytes) : nullptr;
      }
      moveSlot(fn, prim, flags, in + done, out + done, x, m, t, n);
      laneSync(bar, n);
      if (leader) {
        WEFT_UNROLL
        for (int i = 0; i < kMaxFan; ++i)
          if (i < x.nw) storeRelease(lane.send[i].tail, sstep[i] + 1);
        WEFT_UNROLL
        for (int i = 0; i < kMaxFan; ++i)
          if (i < x.nr) storeVolatile(lane.recv[i].head, rstep[i] + 1);
      }
      WEFT_UNROLL
      for (int i = 0; i < kMaxFan; ++i) {
        rstep[i] += i < x.nr ? 1 : 0;
        sstep[i] += i < x.nw ? 1 : 0;
      }
    }
  }
  if (leader) {
    WEFT_UNROLL
    for (int i = 0; i < kMaxFan; ++i) {
      if (i < nRecv) lane.recv[i].step = rstep[i];
      if (i < nSend) lane.send[i].step = sstep[i];
    }
  }
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
