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

namespace weft::coll {
namespace {

// Exact unsigned division by a divisor fixed for a whole call, without a divide instruction per
// element (NCCL's SumPostDiv does the same with umulhi): q = high64(x * floor(2^64 / d)) is the
// quotient or one less, and the remainder tells which.
class Divider {
 public:
  explicit Divider(uint64_t divisor)
      : d_(divisor), m_(uint64_t((static_cast<unsigned __int128>(1) << 64) / divisor)) {
    assert(divisor >= 2 && "floor(2^64 / d) fits in 64 bits only for d >= 2");
  }
  uint64_t divisor() const { return d_; }
  WEFT_COLL_INLINE uint64_t operator()(uint64_t x) const {
    const uint64_t q = uint64_t((static_cast<unsigned __int128>(x) * m_) >> 64);
    return q + (x - q * d_ >= d_ ? 1 : 0);
  }

 private:
  uint64_t d_;
  uint64_t m_;
};

// fmaxf/fminf as CUDA's __hmax/__hmin define them: a NaN operand yields the other operand, and
// between +0 and -0 Max gives +0 and Min -0 (the AND / OR of equal values' bits), so that the
// result does not depend on the operands' order.
template <typename F>
using FloatBits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;

template <bool kMax, typename F>
WEFT_COLL_INLINE F floatMaxMin(F a, F b) {
  const FloatBits<F> x = std::bit_cast<FloatBits<F>>(a), y = std::bit_cast<FloatBits<F>>(b);
  const F tie = std::bit_cast<F>(FloatBits<F>(kMax ? x & y : x | y));
  const F chosen = ((kMax ? a > b : a < b) | (b != b)) ? a : b;
  return a == b ? tie : chosen;
}

// ---- Arithmetic of each element type: add, mul, max, min, the PreMulSum scalar, divide ----

template <typename T>
struct IntArith {
  using Elem = T;
  using U = std::make_unsigned_t<T>;
  // Wrapping arithmetic in an unsigned type at least as wide as int, so that neither signed
  // overflow nor promotion of uint8 to (signed) int can make it undefined.
  using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;

  WEFT_COLL_INLINE static T add(T a, T b) { return T(Wide(a) + Wide(b)); }
  WEFT_COLL_INLINE static T mul(T a, T b) { return T(Wide(a) * Wide(b)); }
  WEFT_COLL_INLINE static T max(T a, T b) { return a > b ? a : b; }
  WEFT_COLL_INLINE static T min(T a, T b) { return a < b ? a : b; }
  WEFT_COLL_INLINE static T scalar(uint64_t arg) { return T(arg); }
  // Truncation toward zero: signed values are divided as magnitudes and get their sign back.
  template <bool kSigned>
  WEFT_COLL_INLINE static T divide(T x, const Divider& div) {
    if constexpr (kSigned && std::is_signed_v<T>) {
      // |x| and the sign put back with an all-ones-if-negative mask: random signs would make a
      // branch here mispredict half the time.
      const uint64_t negative = uint64_t(0) - uint64_t(x < 0);
      const uint64_t magnitude = (uint64_t(int64_t(x)) ^ negative) - negative;
      return T(U((div(magnitude) ^ negative) - negative));
    } else {
      return T(div(uint64_t(U(x))));
    }
  }
};

template <typename F>
struct FloatArith {
  using Elem = F;
  WEFT_COLL_INLINE static F add(F a, F b) { return a + b; }
  WEFT_COLL_INLINE static F mul(F a, F b) { return a * b; }
  WEFT_COLL_INLINE static F max(F a, F b) { return floatMaxMin<true>(a, b); }
  WEFT_COLL_INLINE static F min(F a, F b) { return floatMaxMin<false>(a, b); }
  WEFT_COLL_INLINE static F scalar(uint64_t arg) { return std::bit_cast<F>(FloatBits<F>(arg)); }
  // NCCL builds SumPostDiv for integers only; for a hand-made float one, divide in the type.
  template <bool>
  WEFT_COLL_INLINE static F divide(F x, const Divider& div) { return x / F(div.divisor()); }
};

// Narrow floats are computed in float and rounded once per operation: for half and bf16 that is
// exactly the hardware's correctly rounded result (float has more than 2p+2 bits of precision
// for both, so the float rounding before the narrow one never changes it).
struct HalfCodec {
  using Elem = uint16_t;
  WEFT_COLL_INLINE static float widen(Elem h) { return halfToFloat(h); }
  WEFT_COLL_INLINE static Elem narrow(float f) { return floatToHalf(f); }
  WEFT_COLL_INLINE static bool isNan(Elem h) { return (h & 0x7fffu) > 0x7c00u; }
  // What narrow(widen(v)) makes of an operand that Max/Min returns unchanged.
  WEFT_COLL_INLINE static Elem renarrow(Elem h) { return isNan(h) ? kHalfNan : h; }
};

struct Bf16Codec {
  using Elem = uint16_t;
  WEFT_COLL_INLINE static float widen(Elem b) { return bf16ToFloat(b); }
  WEFT_COLL_INLINE static Elem narrow(float f) { return floatToBf16(f); }
  WEFT_COLL_INLINE static bool isNan(Elem b) { return (b & 0x7fffu) > 0x7f80u; }
  WEFT_COLL_INLINE static Elem renarrow(Elem b) { return isNan(b) ? kBf16Nan : b; }
};

// fp8 as NCCL computes it: the operation's result is rounded to half first (the half op), then
// to fp8 with SATFINITE. For one +, * or max of fp8 values that equals a single rounding (half
// has more than 2p+2 bits for both formats), but the result is fp8 at every step: a PreMulSum's
// scaled value is rounded to fp8 before its add, and a ring's partial sums travel as fp8.
template <Fp8Format kFormat>
struct Fp8Codec {
  using Elem = uint8_t;
  WEFT_COLL_INLINE static float widen(Elem v) { return fp8ToFloat(v, kFormat); }
  WEFT_COLL_INLINE static Elem narrow(float f) { return halfToFp8(floatToHalf(f), kFormat); }
  WEFT_COLL_INLINE static bool isNan(Elem v) {
    return kFormat == Fp8Format::kE4M3 ? (v & 0x7fu) == 0x7fu : (v & 0x7fu) > 0x7cu;
  }
  // SATFINITE turns an e5m2 Inf into the largest finite value.
  WEFT_COLL_INLINE static Elem renarrow(Elem v) {
    if (isNan(v)) return kFp8Nan;
    const bool inf = kFormat == Fp8Format::kE5M2 && (v & 0x7fu) == 0x7cu;
    if (inf) return Elem((v & 0x80u) | kE5M2MaxFinite);
    return v;
  }
};

template <typename Codec>
struct NarrowArith {
  using Elem = typename Codec::Elem;
  WEFT_COLL_INLINE static Elem add(Elem a, Elem b) {
    return Codec::narrow(Codec::widen(a) + Codec::widen(b));
  }
  WEFT_COLL_INLINE static Elem mul(Elem a, Elem b) {
    return Codec::narrow(Codec::widen(a) * Codec::widen(b));
  }
  WEFT_COLL_INLINE static Elem max(Elem a, Elem b) { return maxMin<true>(a, b); }
  WEFT_COLL_INLINE static Elem min(Elem a, Elem b) { return maxMin<false>(a, b); }
  WEFT_COLL_INLINE static Elem scalar(uint64_t arg) { return Elem(arg); }
  template <bool>
  WEFT_COLL_INLINE static Elem divide(Elem x, const Divider& div) {
    return Codec::narrow(Codec::widen(x) / float(div.divisor()));
  }

 private:
  using Signed = std::make_signed_t<Elem>;
  // Sign-magnitude bits as a signed integer of the same order (negative magnitudes reversed,
  // -0 just below +0), so that Max/Min, which return an operand unchanged, need no conversion.
  WEFT_COLL_INLINE static Signed orderKey(Elem v) {
    const Signed s = Signed(v);
    return Signed(s < 0 ? s ^ std::numeric_limits<Signed>::max() : s);
  }
  // __hmax/__hmin on the operands as half (or bf16), then the conversion back.
  template <bool kMax>
  WEFT_COLL_INLINE static Elem maxMin(Elem a, Elem b) {
    const Signed ka = orderKey(a), kb = orderKey(b);
    Elem r = (kMax ? ka > kb : ka < kb) ? a : b;
    r = Codec::isNan(b) ? a : r;
    r = Codec::isNan(a) ? b : r;
    return Codec::renarrow(r);
  }
};

// ---- Element functions: one per operator, the pre- and post-operations fused in ----

template <class A>
struct SumFn {
  using E = typename A::Elem;
  WEFT_COLL_INLINE E operator()(E a, E b) const { return A::add(a, b); }
};
template <class A>
struct ProdFn {
  using E = typename A::Elem;
  WEFT_COLL_INLINE E operator()(E a, E b) const { return A::mul(a, b); }
};
template <class A>
struct MaxFn {
  using E = typename A::Elem;
  WEFT_COLL_INLINE E operator()(E a, E b) const { return A::max(a, b); }
};
template <class A>
struct MinFn {
  using E = typename A::Elem;
  WEFT_COLL_INLINE E operator()(E a, E b) const { return A::min(a, b); }
};
// The scaled local value is rounded to the type before the add, as NCCL's preOp returns a T.
template <class A>
struct PreMulSumFn {
  using E = typename A::Elem;
  E scalar;
  WEFT_COLL_INLINE E operator()(E a, E b) const {
    return A::add(A::mul(a, scalar), b);
  }
};
template <class A, bool kSigned>
struct SumPostDivFn {
  using E = typename A::Elem;
  Divider div;
  WEFT_COLL_INLINE E operator()(E a, E b) const {
    return A::template divide<kSigned>(A::add(a, b), div);
  }
};
template <class A>
struct ScaleFn {
  using E = typename A::Elem;
  E scalar;
  WEFT_COLL_INLINE E operator()(E x) const { return A::mul(x, scalar); }
};
template <class A, bool kSigned>
struct DivideFn {
  using E = typename A::Elem;
  Divider div;
  WEFT_COLL_INLINE E operator()(E x) const { return A::template divide<kSigned>(x, div); }
};

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

using E4M3Arith = NarrowArith<Fp8Codec<Fp8Format::kE4M3>>;
using E5M2Arith = NarrowArith<Fp8Codec<Fp8Format::kE5M2>>;

// Calls visit.template operator()<Arith>() with the arithmetic of `type`; false for an unknown
// type.
template <class Visit>
bool visitArith(weft_datatype_t type, Visit&& visit) {
  switch (type) {
    case weftInt8: visit.template operator()<IntArith<int8_t>>(); return true;
    case weftUint8: visit.template operator()<IntArith<uint8_t>>(); return true;
    case weftInt32: visit.template operator()<IntArith<int32_t>>(); return true;
    case weftUint32: visit.template operator()<IntArith<uint32_t>>(); return true;
    case weftInt64: visit.template operator()<IntArith<int64_t>>(); return true;
    case weftUint64: visit.template operator()<IntArith<uint64_t>>(); return true;
    case weftFloat16: visit.template operator()<NarrowArith<HalfCodec>>(); return true;
    case weftFloat32: visit.template operator()<FloatArith<float>>(); return true;
    case weftFloat64: visit.template operator()<FloatArith<double>>(); return true;
    case weftBfloat16: visit.template operator()<NarrowArith<Bf16Codec>>(); return true;
    case weftFloat8e4m3: visit.template operator()<E4M3Arith>(); return true;
    case weftFloat8e5m2: visit.template operator()<E5M2Arith>(); return true;
    default: return false;
  }
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
