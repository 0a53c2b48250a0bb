// The narrow floating-point formats of weft's datatypes (IEEE binary16, bfloat16, fp8 e4m3 and
// e5m2), held as their raw bits, and their conversions to and from float with the same results,
// bit for bit, as CUDA's (__float2half, __float2bfloat16, __nv_cvt_*_to_fp8 with SATFINITE), so
// that a host reduction gives the bits a GPU running NCCL gives.
//
// The conversions are inline and branch-free on purpose: the reduction loops of reduce.cc call
// them once or twice per element, and only inline, select-based code lets the compiler vectorise
// those loops. They assume the FPU rounds to nearest even (the default; nothing in weft changes
// it).
#pragma once

#include <bit>
#include <cstdint>

#include "weft/weft.h"

// Forced inline when optimising: the compiler's size heuristics otherwise keep the longer ones
// out of line in the many reduction loops that call them, and a call blocks vectorisation.
// Under nvcc the same functions are __host__ __device__: the CUDA kernels (core/device) reduce
// with them.
#if defined(__CUDACC__)
#define WEFT_COLL_INLINE __host__ __device__ __forceinline__
#elif defined(__OPTIMIZE__)
#define WEFT_COLL_INLINE inline __attribute__((always_inline))
#else
#define WEFT_COLL_INLINE inline
#endif

namespace weft::coll {

enum class Fp8Format { kE4M3, kE5M2 };

// CUDA's canonical NaNs: every conversion that produces a NaN produces these bits.
inline constexpr uint16_t kHalfNan = 0x7fff;
inline constexpr uint16_t kBf16Nan = 0x7fff;
inline constexpr uint8_t kFp8Nan = 0x7f;  // S.1111.111 in e4m3, S.11111.11 in e5m2
// Largest finite magnitudes, where SATFINITE clamps: 448 and 57344.
inline constexpr uint8_t kE4M3MaxFinite = 0x7e;
inline constexpr uint8_t kE5M2MaxFinite = 0x7b;

// ---- binary16 ----

// Exact (every half is a float). Subnormals become normal floats; Inf stays Inf; every NaN
// becomes the canonical float NaN 0x7fffffff, as in CUDA.
WEFT_COLL_INLINE float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t mag = h & 0x7fffu;
  // Normal: move exponent and mantissa into place, rebias 15 -> 127. Exponent 31 (Inf/NaN) must
  // land on 255, which takes the same rebias once more.
  uint32_t bits = (mag << 13) + 0x38000000u;
  bits = mag >= 0x7c00u ? bits + 0x38000000u : bits;
  // Zero and subnormals: mantissa * 2^-24, exact in float.
  // (Converting as int32: SSE2 has no unsigned int -> float conversion to vectorise.)
  const uint32_t small = std::bit_cast<uint32_t>(float(int32_t(mag)) * 0x1p-24f);
  bits = mag < 0x0400u ? small : bits;
  bits |= sign;
  return std::bit_cast<float>(mag > 0x7c00u ? 0x7fffffffu : bits);
}

// Round to nearest even; beyond 65504 (from 65520 up) the result is Inf; NaN -> kHalfNan.
WEFT_COLL_INLINE uint16_t floatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t mag = x & 0x7fffffffu;
  // Normal range: rebias 127 -> 15 and drop 13 mantissa bits, rounding half to even. A carry out
  // of the mantissa bumps the exponent, which is right, and everything from exponent 31 up is
  // clamped to Inf's bits.
  uint32_t normal = ((mag - 0x38000000u) + 0x0fffu + ((mag >> 13) & 1u)) >> 13;
  normal = normal < 0x7c00u ? normal : 0x7c00u;
  // Below 2^-14: in [0.5, 1) a float's step is 2^-24, the half subnormal step, so adding 0.5f
  // makes the FPU round |f| to a multiple of it (to even on ties) and the bits above 0.5f's count
  // the steps. A value rounding up to 2^-14 yields 0x400, the smallest normal, as it should.
  const uint32_t sub = std::bit_cast<uint32_t>(std::bit_cast<float>(mag) + 0.5f) - 0x3f000000u;
  const uint32_t r = mag < 0x38800000u ? sub : normal;
  return mag > 0x7f800000u ? kHalfNan : uint16_t(r | sign);
}

// ---- bfloat16 ----

WEFT_COLL_INLINE float bf16ToFloat(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

// Round to nearest even (overflow rounds to Inf); NaN -> kBf16Nan.
WEFT_COLL_INLINE uint16_t floatToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  return (x & 0x7fffffffu) > 0x7f800000u ? kBf16Nan : uint16_t(rounded);
}

// ---- fp8 ----

// Exact. e4m3 has no Inf; its NaN (S.1111.111) and e5m2's NaNs become 0x7fffffff, as through
// CUDA's fp8 -> half -> float.
WEFT_COLL_INLINE float fp8ToFloat(uint8_t v, Fp8Format format) {
  if (format == Fp8Format::kE5M2) {
    // e5m2 is the top byte of a binary16.
    return halfToFloat(uint16_t(uint16_t(v) << 8));
  }
  const uint32_t sign = uint32_t(v & 0x80u) << 24;
  const uint32_t mag = v & 0x7fu;
  uint32_t bits = (mag << 20) + 0x3c000000u;  // rebias 7 -> 127
  const uint32_t small = std::bit_cast<uint32_t>(float(int32_t(mag)) * 0x1p-9f);  // subnormal step 2^-9
  bits = mag < 0x08u ? small : bits;
  bits |= sign;
  return std::bit_cast<float>(mag == 0x7fu ? 0x7fffffffu : bits);  // NaN as CUDA gives it
}

// Round to nearest even, SATFINITE: every magnitude above the largest finite one, Inf included,
// becomes ±kE4M3MaxFinite / ±kE5M2MaxFinite; NaN -> kFp8Nan; the sign of a zero is kept.
WEFT_COLL_INLINE uint8_t floatToFp8(float f, Fp8Format format) {
  const bool e4m3 = format == Fp8Format::kE4M3;
  const uint32_t manBits = e4m3 ? 3 : 2;
  const uint32_t bias = e4m3 ? 7 : 15;
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 24) & 0x80u;
  const uint32_t mag = x & 0x7fffffffu;
  const uint32_t drop = 23 - manBits;
  const uint32_t minNormal = (128 - bias) << 23;  // 2^(1-bias)
  const uint32_t rebased = mag - ((127 - bias) << 23);
  const uint32_t normal = (rebased + ((1u << (drop - 1)) - 1) + ((mag >> drop) & 1u)) >> drop;
  // Subnormals as in floatToHalf: a magic number whose float step is the fp8 subnormal step
  // (2^-9 for e4m3, 2^-16 for e5m2), i.e. 2^14 or 2^7.
  const float magic = std::bit_cast<float>((128 - bias - manBits + 23) << 23);
  const uint32_t sub =
      std::bit_cast<uint32_t>(std::bit_cast<float>(mag) + magic) - std::bit_cast<uint32_t>(magic);
  uint32_t r = mag < minNormal ? sub : normal;
  const uint32_t maxFinite = e4m3 ? kE4M3MaxFinite : kE5M2MaxFinite;
  r = r < maxFinite ? r : maxFinite;
  return mag > 0x7f800000u ? kFp8Nan : uint8_t(r | sign);
}

// Exact. NaN -> kHalfNan (CUDA drops an fp8 NaN's sign and payload).
WEFT_COLL_INLINE uint16_t fp8ToHalf(uint8_t v, Fp8Format format) {
  if (format == Fp8Format::kE5M2) {
    const uint16_t h = uint16_t(uint16_t(v) << 8);
    return (h & 0x7fffu) > 0x7c00u ? kHalfNan : h;
  }
  return floatToHalf(fp8ToFloat(v, format));
}

// One rounding from the half's exact value, as cvt.rn.satfinite.{e4m3,e5m2}x2.f16x2 does.
WEFT_COLL_INLINE uint8_t halfToFp8(uint16_t h, Fp8Format format) {
  return floatToFp8(halfToFloat(h), format);
}

// ---- any datatype ----

// Bytes per element of `type`; 0 when `type` is not a weft_datatype_t.
size_t typeSize(weft_datatype_t type);
bool isIntegerType(weft_datatype_t type);
bool isSignedIntegerType(weft_datatype_t type);

// The value of one element (its bits zero-extended in `bits`) as a double: exact for every type
// but 64-bit integers beyond 2^53. For messages, tests and references.
double elementToDouble(weft_datatype_t type, uint64_t bits);

// `value` as an element of `type`, zero-extended: the narrow float types round it the way CUDA
// code computing in float would (through float, then __float2half / __float2bfloat16 /
// __nv_cvt_float_to_fp8 SATFINITE), float rounds it once, double keeps it; integer types
// truncate toward zero and wrap (the value should fit).
uint64_t elementFromDouble(weft_datatype_t type, double value);

}  // namespace weft::coll
