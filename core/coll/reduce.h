// Host-side reduction kernels for weft's collectives on host memory (ring and tree allreduce,
// reduce, reduce_scatter), with the per-datatype results of NCCL 2.28's device functors
// (src/device/reduce_kernel.h) on sm90:
//   - integers: Sum and Prod wrap mod 2^n; Min/Max compare signed or unsigned per type.
//   - float, double: IEEE + and *; Min/Max are fminf/fmaxf: a NaN operand yields the other one
//     (NaN only when both are), and +0 > -0. Sum and Prod propagate NaN (its payload is whatever
//     the host FPU gives).
//   - half, bf16: each operation computed in float and rounded once to the type (= __hadd,
//     __hmul, __hmax and the bf16 forms); NaN results are the canonical 0x7fff.
//   - fp8 e4m3/e5m2: both operands to half, the operation in half, then back to fp8 rounding to
//     nearest even with SATFINITE: every hop rounds to fp8 and nothing ever becomes Inf, even
//     an e5m2 Inf operand (Inf + 1 = 57344).
//   - PreMulSum (float Avg, user scalars): Sum after scaling the *local* input by the scalar in
//     the type (rounded to the type before the add). SumPostDiv (integer Avg): Sum, then a
//     division by nRanks truncating toward zero.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/status.h"
#include "core/coll/numeric.h"  // typeSize and the element formats
#include "weft/weft.h"

namespace weft::coll {

// NCCL's device operators (ncclDevRedOp_t without the NVLS-only ones).
enum class RedKind { kSum, kProd, kMinMax, kPreMulSum, kSumPostDiv };

// A device operator with NCCL's u64 redOpArg:
//   kMinMax:     xor mask = (sign bit for Int8/32/64) ^ (all ones for Max); bit 0 is 1 for Max,
//                0 for Min, for every type (floats read only that bit).
//   kSumPostDiv: nRanks << 1 | isSigned (integers only).
//   kPreMulSum:  the scalar's bits in the element type, zero-extended.
//   kSum, kProd: 0.
struct RedOp {
  RedKind kind;
  weft_datatype_t type;
  uint64_t arg;
};

// NCCL's hostToDevRedOp: the device operator for user op `userOp` (weftSum..weftAvg) on `type`
// over `nRanks` ranks. Avg on integers is SumPostDiv; on floats PreMulSum by 1/nRanks rounded to
// the type (computed in float for half, bf16 and float, in double for double, fp8 by
// float -> fp8 SATFINITE, so 1/nRanks underflows to 0 in e4m3 beyond 1024 ranks).
// Fails with kInvalidArgument for an unknown op or type, or nRanks < 1.
Result<RedOp> deviceOp(int userOp, weft_datatype_t type, int nRanks);

// The PreMulSum operator of a user scalar (weft_redop_create_pre_mul_sum); `scalar` points to
// one element of `type` (typeSize(type) bytes, read here and not kept).
RedOp preMulSum(weft_datatype_t type, const void* scalar);

// dst[i] = post(f(pre(local[i]), remote[i])) for i < n, where f is the operator's binary
// function, pre() is PreMulSum's scaling, applied only when `preLocal` (the local user input is
// scaled once, by the rank that owns it, never data that arrived from a peer), and post() is
// SumPostDiv's division, applied only when `post` (the last reduction of an element). For other
// kinds pre() and post() are the identity. `dst` may be `local` or `remote` (the same pointer);
// it must not partially overlap either. n == 0 touches nothing. Runs on the calling thread.
void reduceInto(const RedOp& op, void* dst, const void* local, const void* remote, size_t n,
                bool preLocal, bool post);

// dst[i] = post(pre(src[i])) with pre() applied when `pre` and post() when `post`, as in
// reduceInto: the first step of a ring (nothing to add yet), the one-rank case, a final copy.
// With nothing to apply it is a memmove. `dst` may be `src`; no partial overlap.
void copyWith(const RedOp& op, void* dst, const void* src, size_t n, bool pre, bool post);

}  // namespace weft::coll
