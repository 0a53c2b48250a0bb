// The arithmetic of weft's reductions, one element at a time: NCCL 2.28's device functors
// (src/device/reduce_kernel.h) as reduce.h describes them, for every element type. Shared by the
// host loops (reduce.cc) and the CUDA kernels (core/device), which therefore compute the same
// bits: under nvcc every function here is __host__ __device__ (std::bit_cast and
// std::numeric_limits need --expt-relaxed-constexpr there).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/coll/numeric.h"
#include "weft/weft.h"

namespace weft::coll::arith {

// Exact unsigned division by a divisor fixed for a whole call, without a divide instruction per
// element (NCCL's SumPostDiv does the same with umulhi): q = high64(x * floor(2^64 / d)) is the
// quotient or one less, and the remainder tells which.
class Divider {
 public:
  WEFT_COLL_INLINE explicit Divider(uint64_t divisor)
      : d_(divisor), m_(uint64_t((static_cast<unsigned __int128>(1) << 64) / divisor)) {
    // floor(2^64 / d) fits in 64 bits only for d >= 2: callers divide only then.
  }
  WEFT_COLL_INLINE uint64_t divisor() const { return d_; }
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

enum class Binary { kAdd, kMul, kMax, kMin };

// The operator alone: Sum, Prod, Max or Min.
template <class A, Binary kOp>
struct BinaryFn {
  using E = typename A::Elem;
  WEFT_COLL_INLINE E operator()(E a, E b) const {
    if constexpr (kOp == Binary::kAdd) return A::add(a, b);
    else if constexpr (kOp == Binary::kMul) return A::mul(a, b);
    else if constexpr (kOp == Binary::kMax) return A::max(a, b);
    else return A::min(a, b);
  }
};
template <class A>
using SumFn = BinaryFn<A, Binary::kAdd>;
template <class A>
using ProdFn = BinaryFn<A, Binary::kMul>;
template <class A>
using MaxFn = BinaryFn<A, Binary::kMax>;
template <class A>
using MinFn = BinaryFn<A, Binary::kMin>;
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

}  // namespace weft::coll::arith
