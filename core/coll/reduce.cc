// The reduction kernels: one template loop per (element type, operator), chosen by a switch
// outside the loop, so that g++ -O3 vectorises each loop body (no per-element dispatch, branch-
// free element functions, __restrict pointers so that no runtime overlap check sends an in-place
// reduction to the scalar fallback).
#include "core/coll/reduce.h"

#include <cassert>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/coll/reduce_arith.h"

namespace weft::coll {
namespace {

using namespace arith;

// ---- Loops: one per aliasing pattern, each with pointers the compiler may assume distinct ----

template <class Fn, class T>
void binaryLoop(Fn fn, T* __restrict dst, const T* __restrict a, const T* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fn(a[i], b[i]);
}
template <class Fn, class T>
void binaryIntoFirst(Fn fn, T* __restrict a, const T* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = fn(a[i], b[i]);
}
template <class Fn, class T>
void binaryIntoSecond(Fn fn, const T* __restrict a, T* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) b[i] = fn(a[i], b[i]);
}
template <class Fn, class T>
void binaryIntoBoth(Fn fn, T* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = fn(x[i], x[i]);
}

template <class Fn, class T>
void applyBinary(Fn fn, T* dst, const T* a, const T* b, size_t n) {
  if (dst == a && dst == b) {
    binaryIntoBoth(fn, dst, n);
  } else if (dst == a) {
    binaryIntoFirst(fn, dst, b, n);
  } else if (dst == b) {
    binaryIntoSecond(fn, a, dst, n);
  } else {
    binaryLoop(fn, dst, a, b, n);
  }
}

template <class Fn, class T>
void unaryLoop(Fn fn, T* __restrict dst, const T* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fn(src[i]);
}
template <class Fn, class T>
void unaryInPlace(Fn fn, T* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = fn(x[i]);
}

template <class Fn, class T>
void applyUnary(Fn fn, T* dst, const T* src, size_t n) {
  if (dst == src) {
    unaryInPlace(fn, dst, n);
  } else {
    unaryLoop(fn, dst, src, n);
  }
}

// ---- Dispatch: the only switches, once per call ----

// SumPostDiv's divisor, or 0 when the division is the identity (one rank).
uint64_t postDivisor(const RedOp& op) {
  const uint64_t nRanks = op.arg >> 1;
  return nRanks >= 2 ? nRanks : 0;
}
bool postDivSigned(const RedOp& op) { return (op.arg & 1) != 0; }
bool minMaxIsMax(const RedOp& op) { return (op.arg & 1) != 0; }

template <class A>
void reduceTyped(const RedOp& op, void* dst, const void* local, const void* remote, size_t n,
                 bool preLocal, bool post) {
  using T = typename A::Elem;
  T* d = static_cast<T*>(dst);
  const T* a = static_cast<const T*>(local);
  const T* b = static_cast<const T*>(remote);
  switch (op.kind) {
    case RedKind::kSum:
      return applyBinary(SumFn<A>{}, d, a, b, n);
    case RedKind::kProd:
      return applyBinary(ProdFn<A>{}, d, a, b, n);
    case RedKind::kMinMax:
      if (minMaxIsMax(op)) return applyBinary(MaxFn<A>{}, d, a, b, n);
      return applyBinary(MinFn<A>{}, d, a, b, n);
    case RedKind::kPreMulSum:
      if (!preLocal) return applyBinary(SumFn<A>{}, d, a, b, n);
      return applyBinary(PreMulSumFn<A>{A::scalar(op.arg)}, d, a, b, n);
    case RedKind::kSumPostDiv: {
      const uint64_t divisor = postDivisor(op);
      if (!post || divisor == 0) return applyBinary(SumFn<A>{}, d, a, b, n);
      const Divider div(divisor);
      if (postDivSigned(op)) return applyBinary(SumPostDivFn<A, true>{div}, d, a, b, n);
      return applyBinary(SumPostDivFn<A, false>{div}, d, a, b, n);
    }
  }
}

template <class A>
void copyTyped(const RedOp& op, void* dst, const void* src, size_t n, bool pre, bool post) {
  using T = typename A::Elem;
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  if (pre && op.kind == RedKind::kPreMulSum) {
    return applyUnary(ScaleFn<A>{A::scalar(op.arg)}, d, s, n);
  }
  const uint64_t divisor = postDivisor(op);
  if (post && op.kind == RedKind::kSumPostDiv && divisor != 0) {
    const Divider div(divisor);
    if (postDivSigned(op)) return applyUnary(DivideFn<A, true>{div}, d, s, n);
    return applyUnary(DivideFn<A, false>{div}, d, s, n);
  }
  if (d != s) std::memmove(d, s, n * sizeof(T));
}

// NCCL's MinMax redOpArg: a xor mask that maps the type's order onto unsigned order, inverted for
// Max.
uint64_t minMaxArg(weft_datatype_t type, bool isMax) {
  const uint64_t signBit = isSignedIntegerType(type) ? uint64_t(1) << (8 * typeSize(type) - 1) : 0;
  return isMax ? ~signBit : signBit;
}

}  // namespace

Result<RedOp> deviceOp(int userOp, weft_datatype_t type, int nRanks) {
  if (typeSize(type) == 0) {
    return invalidArgument("reduction datatype " + std::to_string(int(type)) +
                           " is not a weft_datatype_t (0.." + std::to_string(int(weftNumTypes) - 1) + ")");
  }
  if (nRanks < 1) {
    return invalidArgument("reduction over " + std::to_string(nRanks) + " ranks: need at least 1");
  }
  switch (userOp) {
    case weftSum: return RedOp{RedKind::kSum, type, 0};
    case weftProd: return RedOp{RedKind::kProd, type, 0};
    case weftMax: return RedOp{RedKind::kMinMax, type, minMaxArg(type, true)};
    case weftMin: return RedOp{RedKind::kMinMax, type, minMaxArg(type, false)};
    case weftAvg:
      if (isIntegerType(type)) {
        const uint64_t isSigned = isSignedIntegerType(type) ? 1 : 0;
        return RedOp{RedKind::kSumPostDiv, type, uint64_t(nRanks) << 1 | isSigned};
      }
      // 1/nRanks is a quotient, so rounding it to double, then float, then the narrow type
      // gives the same bits as rounding it once (each step has > 2p+2 bits).
      return RedOp{RedKind::kPreMulSum, type, elementFromDouble(type, 1.0 / nRanks)};
    default:
      return invalidArgument("reduction op " + std::to_string(userOp) +
                             " is not a built-in weft_redop_t (weftSum..weftAvg = 0..4)");
  }
}

RedOp preMulSum(weft_datatype_t type, const void* scalar) {
  uint64_t bits = 0;
  // Read as an integer of the element's width, so that the bits land at the low end of the
  // u64 whatever the host's byte order.
  switch (typeSize(type)) {
    case 1: bits = *static_cast<const uint8_t*>(scalar); break;
    case 2: { uint16_t v; std::memcpy(&v, scalar, 2); bits = v; break; }
    case 4: { uint32_t v; std::memcpy(&v, scalar, 4); bits = v; break; }
    case 8: std::memcpy(&bits, scalar, 8); break;
    default: assert(false && "preMulSum: unknown datatype"); break;
  }
  return RedOp{RedKind::kPreMulSum, type, bits};
}

void reduceInto(const RedOp& op, void* dst, const void* local, const void* remote, size_t n,
                bool preLocal, bool post) {
  if (n == 0) return;
  const bool known =
      visitArith(op.type, [&]<class A>() { reduceTyped<A>(op, dst, local, remote, n, preLocal, post); });
  assert(known && "reduceInto: unknown datatype");
  (void)known;
}

void copyWith(const RedOp& op, void* dst, const void* src, size_t n, bool pre, bool post) {
  if (n == 0) return;
  const bool known = visitArith(op.type, [&]<class A>() { copyTyped<A>(op, dst, src, n, pre, post); });
  assert(known && "copyWith: unknown datatype");
  (void)known;
}

}  // namespace weft::coll
