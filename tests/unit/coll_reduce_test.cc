// The host reduction kernels (core/coll): the narrow-float conversions against references built
// from first principles (decoding fields with ldexp, rounding by searching the format's sorted
// values), deviceOp against NCCL's hostToDevRedOp table, and reduceInto/copyWith against a naive
// per-element reference for every datatype and operator.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/coll/numeric.h"
#include "core/coll/reduce.h"

namespace weft::coll {
namespace {

static_assert(std::endian::native == std::endian::little, "element bits are read little-endian");

constexpr Fp8Format kE4M3 = Fp8Format::kE4M3;
constexpr Fp8Format kE5M2 = Fp8Format::kE5M2;

// ---- Independent references for the formats ----

// A binary floating-point format's parameters, enough to decode any bit pattern.
struct Format {
  int expBits;
  int manBits;
  bool ieeeSpecials;  // exponent all ones is Inf/NaN (half, bf16, e5m2); e4m3 only has S.1111.111
};
constexpr Format kHalfFormat{5, 10, true};
constexpr Format kBf16Format{8, 7, true};
constexpr Format kE4M3Format{4, 3, false};
constexpr Format kE5M2Format{5, 2, true};

bool isNanCode(const Format& f, uint32_t code) {
  const uint32_t mag = code & ((1u << (f.expBits + f.manBits)) - 1);
  const uint32_t expAllOnes = ((1u << f.expBits) - 1) << f.manBits;
  if (f.ieeeSpecials) return mag > expAllOnes;
  return mag == ((1u << (f.expBits + f.manBits)) - 1);
}

// The value of `code`: (-1)^s * 2^(e-bias) * 1.m, or 2^(1-bias) * 0.m for e == 0.
double decode(const Format& f, uint32_t code) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t man = code & ((1u << f.manBits) - 1);
  const uint32_t exp = (code >> f.manBits) & ((1u << f.expBits) - 1);
  const bool negative = (code >> (f.expBits + f.manBits)) & 1;
  if (isNanCode(f, code)) return std::numeric_limits<double>::quiet_NaN();
  double v;
  if (f.ieeeSpecials && exp == (1u << f.expBits) - 1) {
    v = std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(double(man), 1 - bias - f.manBits);
  } else {
    v = std::ldexp(double(man + (1u << f.manBits)), int(exp) - bias - f.manBits);
  }
  return negative ? -v : v;
}

// Round-to-nearest-even by search: the non-negative finite values of a format, ascending, are
// its codes 0, 1, 2, ... so a tie goes to the even code. `overflow` is what a magnitude that
// rounds past the largest finite value becomes (Inf for IEEE rounding, the largest finite value
// under SATFINITE).
class Rounder {
 public:
  Rounder(const Format& f, uint32_t overflowCode) : f_(f), overflow_(overflowCode) {
    for (uint32_t code = 0;; ++code) {
      const double v = decode(f, code);
      if (std::isnan(v) || std::isinf(v)) break;
      values_.push_back(v);
    }
    // The value one step past the largest finite one: where rounding overflows.
    const double last = values_.back();
    const double step = last - values_[values_.size() - 2];
    values_.push_back(last + step);
  }

  uint32_t round(double x) const {
    const uint32_t signBit = 1u << (f_.expBits + f_.manBits);
    if (std::isnan(x)) return ~0u;  // the caller checks NaN separately
    const uint32_t sign = std::signbit(x) ? signBit : 0;
    const double mag = std::fabs(x);
    uint32_t code;
    if (mag >= values_.back()) {
      code = overflow_;
    } else {
      const auto hi = std::upper_bound(values_.begin(), values_.end(), mag);
      const uint32_t upper = uint32_t(hi - values_.begin());
      const uint32_t lower = upper - 1;
      const double dLow = mag - values_[lower];
      const double dHigh = values_[upper] - mag;
      code = dLow < dHigh ? lower : dHigh < dLow ? upper : (lower % 2 == 0 ? lower : upper);
      if (code == values_.size() - 1) code = overflow_;
    }
    return code | sign;
  }

 private:
  Format f_;
  uint32_t overflow_;
  std::vector<double> values_;
};

const Rounder& halfRounder() {
  static const Rounder r(kHalfFormat, 0x7c00);
  return r;
}
const Rounder& bf16Rounder() {
  static const Rounder r(kBf16Format, 0x7f80);
  return r;
}
const Rounder& fp8Rounder(Fp8Format fmt) {
  static const Rounder e4m3(kE4M3Format, kE4M3MaxFinite);
  static const Rounder e5m2(kE5M2Format, kE5M2MaxFinite);
  return fmt == kE4M3 ? e4m3 : e5m2;
}

float floatOf(uint32_t bits) { return std::bit_cast<float>(bits); }

// Floats to try conversions on: every 97th bit pattern (about 44 million), which reaches every
// exponent and mantissa region, and every midpoint between neighbours of `format` with the
// floats next to it.
template <class Check>
void forSampleFloats(const Format& format, Check check) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 97) check(floatOf(uint32_t(bits)));
  for (uint32_t code = 0; code + 1 < (1u << (format.expBits + format.manBits)); ++code) {
    const double lo = decode(format, code);
    const double hi = decode(format, code + 1);
    if (std::isnan(lo) || std::isnan(hi) || std::isinf(hi)) continue;
    const float mid = float((lo + hi) / 2);
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
      check(f);
      check(-f);
    }
  }
}

// ---- binary16 ----

TEST(CollNumeric, EveryHalfDecodesExactlyAndRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = halfToFloat(uint16_t(h));
    const double want = decode(kHalfFormat, h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_EQ(floatToHalf(f), kHalfNan) << std::hex << h;
      continue;
    }
    ASSERT_EQ(double(f), want) << std::hex << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
    ASSERT_EQ(floatToHalf(f), h) << std::hex << h;
  }
}

TEST(CollNumeric, FloatToHalfRoundsToNearestEvenAtTies) {
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);      // halfway 1 and 1+2^-10: even is 1
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);  // halfway 1+2^-10 and 1+2^-9: even up
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.996f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // the tie above the largest half goes to Inf
  EXPECT_EQ(floatToHalf(-1e9f), 0xfc00);
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);        // halfway 0 and the smallest subnormal
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002);    // halfway 1 and 2 subnormal steps
  EXPECT_EQ(floatToHalf(-0x1p-25f), 0x8000);       // the sign of a zero survives
  EXPECT_EQ(floatToHalf(0x1p-14f - 0x1p-25f), 0x0400);  // rounds up to the smallest normal
  EXPECT_EQ(floatToHalf(1e-30f), 0x0000);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::quiet_NaN()), kHalfNan);
}

TEST(CollNumeric, FloatToHalfMatchesNearestEvenOnSampledFloats) {
  forSampleFloats(kHalfFormat, [](float f) {
    if (std::isnan(f)) return;
    ASSERT_EQ(floatToHalf(f), halfRounder().round(f)) << std::hexfloat << f;
  });
}

// ---- bfloat16 ----

TEST(CollNumeric, EveryBf16DecodesExactlyAndRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = bf16ToFloat(uint16_t(b));
    const double want = decode(kBf16Format, b);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f));
      EXPECT_EQ(floatToBf16(f), kBf16Nan);
      continue;
    }
    ASSERT_EQ(double(f), want) << std::hex << b;
    ASSERT_EQ(floatToBf16(f), b) << std::hex << b;
  }
}

TEST(CollNumeric, FloatToBf16RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.00390625f), 0x3f80);  // 1 + 2^-8: halfway, even is 1.0
  EXPECT_EQ(floatToBf16(1.01171875f), 0x3f82);  // 1 + 3*2^-8: halfway, even is up
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to Inf
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::quiet_NaN()), kBf16Nan);
  EXPECT_EQ(floatToBf16(floatOf(0xff800001u)), kBf16Nan);  // a NaN that would round to -Inf
  forSampleFloats(kBf16Format, [](float f) {
    if (std::isnan(f)) return;
    ASSERT_EQ(floatToBf16(f), bf16Rounder().round(f)) << std::hexfloat << f;
  });
}

// ---- fp8 ----

class CollFp8 : public ::testing::TestWithParam<Fp8Format> {
 protected:
  Format format() const { return GetParam() == kE4M3 ? kE4M3Format : kE5M2Format; }
};

TEST_P(CollFp8, Every8BitPatternDecodesExactlyAndRoundTrips) {
  const Fp8Format fmt = GetParam();
  for (uint32_t v = 0; v <= 0xff; ++v) {
    const float f = fp8ToFloat(uint8_t(v), fmt);
    const uint16_t h = fp8ToHalf(uint8_t(v), fmt);
    const double want = decode(format(), v);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << v;
      EXPECT_EQ(h, kHalfNan) << v;
      EXPECT_EQ(floatToFp8(f, fmt), kFp8Nan) << v;
      EXPECT_EQ(halfToFp8(h, fmt), kFp8Nan) << v;
      continue;
    }
    ASSERT_EQ(double(f), want) << v;
    ASSERT_EQ(double(halfToFloat(h)), want) << v;
    if (std::isinf(want)) {  // e5m2 Inf: SATFINITE turns it into the largest finite value
      EXPECT_EQ(floatToFp8(f, fmt), (v & 0x80) | kE5M2MaxFinite) << v;
      continue;
    }
    ASSERT_EQ(floatToFp8(f, fmt), v) << v;
    ASSERT_EQ(halfToFp8(h, fmt), v) << v;
  }
}

TEST_P(CollFp8, FloatToFp8IsNearestEvenWithSatfinite) {
  const Fp8Format fmt = GetParam();
  forSampleFloats(format(), [&](float f) {
    if (std::isnan(f)) return;
    ASSERT_EQ(floatToFp8(f, fmt), fp8Rounder(fmt).round(f)) << std::hexfloat << f;
  });
  // Every half, as the fp8 operations round their half results.
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = halfToFloat(uint16_t(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(halfToFp8(uint16_t(h), fmt), fp8Rounder(fmt).round(f)) << std::hex << h;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, CollFp8, ::testing::Values(kE4M3, kE5M2),
                         [](const auto& p) { return p.param == kE4M3 ? "E4M3" : "E5M2"; });

TEST(CollNumeric, Fp8SatfiniteClampsInsteadOfOverflowing) {
  EXPECT_EQ(floatToFp8(1000.0f, kE4M3), 0x7e);
  EXPECT_EQ(fp8ToFloat(0x7e, kE4M3), 448.0f);
  EXPECT_EQ(floatToFp8(464.0f, kE4M3), 0x7e);  // the tie above 448 goes to 448 (even)
  EXPECT_EQ(floatToFp8(-1e6f, kE5M2), 0xfb);
  EXPECT_EQ(fp8ToFloat(0xfb, kE5M2), -57344.0f);
  EXPECT_EQ(floatToFp8(std::numeric_limits<float>::infinity(), kE4M3), 0x7e);
  EXPECT_EQ(floatToFp8(-std::numeric_limits<float>::infinity(), kE5M2), 0xfb);
  EXPECT_EQ(floatToFp8(std::numeric_limits<float>::quiet_NaN(), kE4M3), kFp8Nan);
  EXPECT_EQ(floatToFp8(-std::numeric_limits<float>::quiet_NaN(), kE5M2), kFp8Nan);
  EXPECT_EQ(floatToFp8(0x1p-10f, kE4M3), 0x00);  // halfway 0 and 2^-9: even is 0
  EXPECT_EQ(floatToFp8(-0x1p-12f, kE4M3), 0x80);
}

// ---- Element access and the naive reference ----

uint64_t loadBits(const std::vector<uint8_t>& buf, size_t i, size_t size) {
  uint64_t bits = 0;
  std::memcpy(&bits, buf.data() + i * size, size);
  return bits;
}
void storeBits(std::vector<uint8_t>& buf, size_t i, size_t size, uint64_t bits) {
  std::memcpy(buf.data() + i * size, &bits, size);
}

bool isNarrowFloat(weft_datatype_t t) {
  return t == weftFloat16 || t == weftBfloat16 || t == weftFloat8e4m3 || t == weftFloat8e5m2;
}

// The device's rounding of an operation's exact result `x`: half and bf16 once (a double
// rounding through float is harmless for one +, * or max of two narrow values); fp8 to half,
// then to fp8 with SATFINITE.
uint64_t roundLikeDevice(weft_datatype_t type, double x) {
  switch (type) {
    case weftFloat16: return floatToHalf(float(x));
    case weftBfloat16: return floatToBf16(float(x));
    case weftFloat8e4m3: return floatToFp8(halfToFloat(floatToHalf(float(x))), kE4M3);
    case weftFloat8e5m2: return floatToFp8(halfToFloat(floatToHalf(float(x))), kE5M2);
    default: ADD_FAILURE() << "not a narrow float"; return 0;
  }
}

// fmax/fmin with the zero order of __hmax/__hmin: Max(+0, -0) = +0, Min(+0, -0) = -0.
double refMaxMin(double a, double b, bool isMax) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a != b) return isMax ? std::max(a, b) : std::min(a, b);
  if (isMax) return std::signbit(a) && std::signbit(b) ? a : std::fabs(a);
  return !std::signbit(a) && !std::signbit(b) ? a : -std::fabs(a);
}

// Kept out of line so that the compiler cannot contract a multiply and an add into an FMA.
[[gnu::noinline]] float mulF(float a, float b) { return a * b; }
[[gnu::noinline]] double mulD(double a, double b) { return a * b; }

int64_t signExtend(uint64_t bits, size_t size) {
  if (size == 8) return int64_t(bits);
  const int shift = int(64 - 8 * size);
  return int64_t(bits << shift) >> shift;
}

uint64_t maskTo(uint64_t bits, size_t size) {
  return size == 8 ? bits : bits & ((uint64_t(1) << (8 * size)) - 1);
}

// One element of reduceInto, the slow obvious way.
uint64_t refElement(const RedOp& op, uint64_t a, uint64_t b, bool preLocal, bool post) {
  const weft_datatype_t t = op.type;
  const size_t size = typeSize(t);
  if (isIntegerType(t)) {
    const bool isSigned = isSignedIntegerType(t);
    switch (op.kind) {
      case RedKind::kSum: return maskTo(a + b, size);
      case RedKind::kProd: return maskTo(a * b, size);
      case RedKind::kMinMax: {
        const bool aLess = isSigned ? signExtend(a, size) < signExtend(b, size) : a < b;
        return (op.arg & 1) ? (aLess ? b : a) : (aLess ? a : b);
      }
      case RedKind::kPreMulSum: return maskTo((preLocal ? a * op.arg : a) + b, size);
      case RedKind::kSumPostDiv: {
        const uint64_t sum = maskTo(a + b, size);
        const int64_t n = int64_t(op.arg >> 1);
        if (!post) return sum;
        if (op.arg & 1) return maskTo(uint64_t(signExtend(sum, size) / n), size);
        return sum / uint64_t(n);
      }
    }
  }
  if (t == weftFloat32 || t == weftFloat64) {
    const bool f32 = t == weftFloat32;
    auto get = [&](uint64_t bits) { return f32 ? double(std::bit_cast<float>(uint32_t(bits))) : std::bit_cast<double>(bits); };
    auto put = [&](double v) { return f32 ? uint64_t(std::bit_cast<uint32_t>(float(v))) : std::bit_cast<uint64_t>(v); };
    const double x = get(a), y = get(b);
    switch (op.kind) {
      case RedKind::kSum: return put(f32 ? double(float(x) + float(y)) : x + y);
      case RedKind::kProd: return put(f32 ? double(mulF(float(x), float(y))) : mulD(x, y));
      case RedKind::kMinMax: return put(refMaxMin(x, y, op.arg & 1));
      case RedKind::kPreMulSum: {
        const double s = get(op.arg);
        const double scaled = !preLocal ? x : f32 ? double(mulF(float(x), float(s))) : mulD(x, s);
        return put(f32 ? double(float(scaled) + float(y)) : scaled + y);
      }
      case RedKind::kSumPostDiv: break;
    }
  }
  if (isNarrowFloat(t)) {
    const double x = elementToDouble(t, a), y = elementToDouble(t, b);
    switch (op.kind) {
      case RedKind::kSum: return roundLikeDevice(t, x + y);
      case RedKind::kProd: return roundLikeDevice(t, x * y);
      case RedKind::kMinMax: return roundLikeDevice(t, refMaxMin(x, y, op.arg & 1));
      case RedKind::kPreMulSum: {
        const double scaled = preLocal ? elementToDouble(t, roundLikeDevice(t, x * elementToDouble(t, op.arg))) : x;
        return roundLikeDevice(t, scaled + y);
      }
      case RedKind::kSumPostDiv: break;
    }
  }
  ADD_FAILURE() << "no reference for type " << int(t) << " kind " << int(op.kind);
  return 0;
}

// Bit-equal, except that two float/double NaNs are equal whatever their payloads (the host FPU
// picks those; the narrow types' NaNs are canonical and must match exactly).
bool sameElement(weft_datatype_t t, uint64_t got, uint64_t want) {
  if (got == want) return true;
  if (t == weftFloat32) return std::isnan(std::bit_cast<float>(uint32_t(got))) && std::isnan(std::bit_cast<float>(uint32_t(want)));
  if (t == weftFloat64) return std::isnan(std::bit_cast<double>(got)) && std::isnan(std::bit_cast<double>(want));
  return false;
}

// Random elements: for floats mostly ordinary values, with random bit patterns and the special
// values mixed in; for integers random bits.
uint64_t randomElement(weft_datatype_t t, std::mt19937_64& rng) {
  const size_t size = typeSize(t);
  const uint64_t bits = maskTo(rng(), size);
  if (isIntegerType(t)) return bits;
  const int pick = int(rng() % 100);
  if (pick < 20) return bits;
  if (pick < 30) {
    static const double kSpecials[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 1e-30, 448.0, 57344.0, 65504.0};
    return elementFromDouble(t, kSpecials[rng() % std::size(kSpecials)]);
  }
  std::uniform_real_distribution<double> value(-100.0, 100.0);
  return elementFromDouble(t, value(rng));
}

constexpr weft_datatype_t kAllTypes[] = {weftInt8,    weftUint8,   weftInt32,    weftUint32,
                                         weftInt64,   weftUint64,  weftFloat16,  weftFloat32,
                                         weftFloat64, weftBfloat16, weftFloat8e4m3, weftFloat8e5m2};

std::string typeName(weft_datatype_t t) {
  static const char* kNames[] = {"int8",    "uint8",   "int32", "uint32", "int64", "uint64",
                                 "float16", "float32", "float64", "bfloat16", "e4m3", "e5m2"};
  return kNames[int(t)];
}

// Every operator deviceOp makes for `type`, plus PreMulSum with a random scalar.
std::vector<RedOp> opsFor(weft_datatype_t type, int nRanks, std::mt19937_64& rng) {
  std::vector<RedOp> ops;
  for (int userOp = weftSum; userOp <= weftAvg; ++userOp) {
    auto op = deviceOp(userOp, type, nRanks);
    EXPECT_TRUE(op.isOk()) << op.status().toString();
    if (op.isOk()) ops.push_back(*op);
  }
  const uint64_t scalar = randomElement(type, rng);
  ops.push_back(preMulSum(type, &scalar));
  return ops;
}

struct Inputs {
  std::vector<uint8_t> local, remote;
};

Inputs randomInputs(weft_datatype_t t, size_t n, std::mt19937_64& rng) {
  const size_t size = typeSize(t);
  Inputs in{std::vector<uint8_t>(n * size), std::vector<uint8_t>(n * size)};
  for (size_t i = 0; i < n; ++i) {
    storeBits(in.local, i, size, randomElement(t, rng));
    storeBits(in.remote, i, size, randomElement(t, rng));
  }
  return in;
}

void expectMatchesReference(const RedOp& op, const Inputs& in, const std::vector<uint8_t>& out, size_t n,
                            bool preLocal, bool post, const std::string& what) {
  const size_t size = typeSize(op.type);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t a = loadBits(in.local, i, size), b = loadBits(in.remote, i, size);
    const uint64_t want = refElement(op, a, b, preLocal, post);
    const uint64_t got = loadBits(out, i, size);
    ASSERT_TRUE(sameElement(op.type, got, want))
        << what << " " << typeName(op.type) << " kind " << int(op.kind) << " arg 0x" << std::hex << op.arg
        << " pre " << preLocal << " post " << post << " i " << std::dec << i << ": 0x" << std::hex << a
        << " (" << elementToDouble(op.type, a) << ") , 0x" << b << " (" << elementToDouble(op.type, b)
        << ") -> 0x" << got << ", want 0x" << want;
  }
}

// ---- deviceOp ----

TEST(CollDeviceOp, SumAndProdCarryNoArgument) {
  for (weft_datatype_t t : kAllTypes) {
    auto sum = deviceOp(weftSum, t, 4);
    auto prod = deviceOp(weftProd, t, 4);
    ASSERT_TRUE(sum.isOk() && prod.isOk());
    EXPECT_EQ(sum->kind, RedKind::kSum);
    EXPECT_EQ(prod->kind, RedKind::kProd);
    EXPECT_EQ(sum->arg, 0u);
    EXPECT_EQ(sum->type, t);
  }
}

TEST(CollDeviceOp, MinMaxArgumentIsNcclsXorMask) {
  struct Case {
    weft_datatype_t type;
    uint64_t maxArg, minArg;
  };
  const Case cases[] = {
      {weftInt8, ~uint64_t(0x80), 0x80},
      {weftUint8, ~uint64_t(0), 0},
      {weftInt32, ~uint64_t(0x80000000u), 0x80000000u},
      {weftUint32, ~uint64_t(0), 0},
      {weftInt64, ~(uint64_t(1) << 63), uint64_t(1) << 63},
      {weftUint64, ~uint64_t(0), 0},
      {weftFloat16, ~uint64_t(0), 0},
      {weftFloat32, ~uint64_t(0), 0},
      {weftFloat64, ~uint64_t(0), 0},
      {weftBfloat16, ~uint64_t(0), 0},
      {weftFloat8e4m3, ~uint64_t(0), 0},
      {weftFloat8e5m2, ~uint64_t(0), 0},
  };
  for (const Case& c : cases) {
    auto mx = deviceOp(weftMax, c.type, 8);
    auto mn = deviceOp(weftMin, c.type, 8);
    ASSERT_TRUE(mx.isOk() && mn.isOk());
    EXPECT_EQ(mx->kind, RedKind::kMinMax);
    EXPECT_EQ(mx->arg, c.maxArg) << typeName(c.type);
    EXPECT_EQ(mn->arg, c.minArg) << typeName(c.type);
  }
}

TEST(CollDeviceOp, IntegerAvgIsSumPostDivOfRankCountAndSignedness) {
  for (weft_datatype_t t : {weftInt8, weftUint8, weftInt32, weftUint32, weftInt64, weftUint64}) {
    auto op = deviceOp(weftAvg, t, 6);
    ASSERT_TRUE(op.isOk());
    EXPECT_EQ(op->kind, RedKind::kSumPostDiv);
    EXPECT_EQ(op->arg, uint64_t(6 << 1 | (isSignedIntegerType(t) ? 1 : 0))) << typeName(t);
  }
}

TEST(CollDeviceOp, FloatAvgIsPreMulSumByReciprocalRoundedToTheType) {
  struct Case {
    weft_datatype_t type;
    int nRanks;
    uint64_t scalar;
  };
  const Case cases[] = {
      {weftFloat16, 3, 0x3555},     // 0.33325195
      {weftBfloat16, 3, 0x3eab},    // 0.333984375
      {weftFloat32, 3, std::bit_cast<uint32_t>(1.0f / 3)},
      {weftFloat64, 3, std::bit_cast<uint64_t>(1.0 / 3)},
      {weftFloat8e4m3, 3, 0x2b},    // 0.34375: 1/3 is nearer it than 0.3125
      {weftFloat8e5m2, 3, 0x35},    // 0.3125: nearer than 0.375
      {weftFloat8e4m3, 1, 0x38},    // 1.0
      {weftFloat8e4m3, 1024, 0x00}, // 2^-10: halfway 0 and 2^-9, even is 0
      {weftFloat8e4m3, 1000, 0x01}, // just above 2^-10
      {weftFloat16, 1 << 20, 0x0010},  // 2^-20, a subnormal half
  };
  for (const Case& c : cases) {
    auto op = deviceOp(weftAvg, c.type, c.nRanks);
    ASSERT_TRUE(op.isOk());
    EXPECT_EQ(op->kind, RedKind::kPreMulSum);
    EXPECT_EQ(op->arg, c.scalar) << typeName(c.type) << " n=" << c.nRanks;
  }
  EXPECT_EQ(fp8ToFloat(0x2b, kE4M3), 0.34375f);
  EXPECT_EQ(fp8ToFloat(0x35, kE5M2), 0.3125f);
}

TEST(CollDeviceOp, RejectsUnknownOpTypeOrRankCount) {
  auto badOp = deviceOp(5, weftFloat32, 2);
  ASSERT_FALSE(badOp.isOk());
  EXPECT_EQ(badOp.status().code(), Code::kInvalidArgument);
  EXPECT_NE(badOp.status().message().find("op 5"), std::string::npos) << badOp.status().message();
  auto badType = deviceOp(weftSum, weft_datatype_t(12), 2);
  ASSERT_FALSE(badType.isOk());
  EXPECT_NE(badType.status().message().find("datatype 12"), std::string::npos);
  EXPECT_FALSE(deviceOp(weftSum, weftFloat32, 0).isOk());
  EXPECT_FALSE(deviceOp(-1, weftFloat32, 2).isOk());
}

TEST(CollDeviceOp, PreMulSumKeepsTheScalarBits) {
  const uint16_t half = 0x4200;  // 3.0
  const double dbl = -0.25;
  const int8_t i8 = -3;
  EXPECT_EQ(preMulSum(weftFloat16, &half).arg, 0x4200u);
  EXPECT_EQ(preMulSum(weftFloat64, &dbl).arg, std::bit_cast<uint64_t>(dbl));
  EXPECT_EQ(preMulSum(weftInt8, &i8).arg, 0xfdu);
  EXPECT_EQ(preMulSum(weftInt8, &i8).kind, RedKind::kPreMulSum);
}

// ---- Known values ----

template <typename T>
T reduceOne(const RedOp& op, T a, T b, bool preLocal = true, bool post = true) {
  T out{};
  reduceInto(op, &out, &a, &b, 1, preLocal, post);
  return out;
}

RedOp opOf(int userOp, weft_datatype_t type, int nRanks = 2) {
  auto op = deviceOp(userOp, type, nRanks);
  EXPECT_TRUE(op.isOk());
  return *op;
}

TEST(CollReduce, Fp8AddsThroughHalfAndRoundsToEven) {
  const uint8_t a = floatToFp8(1.75f, kE4M3), b = floatToFp8(3.5f, kE4M3);
  // 5.25 is exact in half and halfway between e4m3's 5.0 and 5.5.
  EXPECT_EQ(fp8ToFloat(reduceOne(opOf(weftSum, weftFloat8e4m3), a, b), kE4M3), 5.0f);
  // 448 + 448 saturates to 448; e5m2 Inf + 1 is the largest finite value, not Inf.
  EXPECT_EQ(reduceOne<uint8_t>(opOf(weftSum, weftFloat8e4m3), 0x7e, 0x7e), 0x7e);
  EXPECT_EQ(reduceOne<uint8_t>(opOf(weftSum, weftFloat8e5m2), 0x7c, 0x3c), 0x7b);
  EXPECT_EQ(reduceOne<uint8_t>(opOf(weftProd, weftFloat8e5m2), 0xfb, 0x40), 0xfb);  // -57344*2
  EXPECT_EQ(reduceOne<uint8_t>(opOf(weftSum, weftFloat8e5m2), 0x7c, 0xfc), kFp8Nan);  // Inf-Inf
}

TEST(CollReduce, Fp8SumAndProductOfEveryPairAreCorrectlyRounded) {
  // NCCL rounds an fp8 sum or product to half, then to fp8 (SATFINITE). Half has more than
  // 2p+2 bits of precision for both fp8 formats and at least their exponent range, so the two
  // roundings always equal one: every pair must give the correctly rounded result.
  for (Fp8Format fmt : {kE4M3, kE5M2}) {
    const weft_datatype_t t = fmt == kE4M3 ? weftFloat8e4m3 : weftFloat8e5m2;
    const RedOp sum = opOf(weftSum, t), prod = opOf(weftProd, t);
    for (uint32_t a = 0; a < 256; ++a) {
      for (uint32_t b = 0; b < 256; ++b) {
        const double x = fp8ToFloat(uint8_t(a), fmt), y = fp8ToFloat(uint8_t(b), fmt);
        const uint8_t gotSum = reduceOne(sum, uint8_t(a), uint8_t(b));
        const uint8_t gotProd = reduceOne(prod, uint8_t(a), uint8_t(b));
        if (std::isnan(x + y)) {
          ASSERT_EQ(gotSum, kFp8Nan) << a << " + " << b;
        } else {
          ASSERT_EQ(gotSum, fp8Rounder(fmt).round(x + y)) << a << " + " << b;
        }
        if (std::isnan(x * y)) {
          ASSERT_EQ(gotProd, kFp8Nan) << a << " * " << b;
        } else {
          ASSERT_EQ(gotProd, fp8Rounder(fmt).round(x * y)) << a << " * " << b;
        }
      }
    }
  }
}

TEST(CollReduce, MinMaxDropNaNsAndOrderZeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(reduceOne(opOf(weftMax, weftFloat32), nan, 1.5f), 1.5f);
  EXPECT_EQ(reduceOne(opOf(weftMax, weftFloat32), 1.5f, nan), 1.5f);
  EXPECT_EQ(reduceOne(opOf(weftMin, weftFloat64), double(nan), -2.0), -2.0);
  EXPECT_TRUE(std::isnan(reduceOne(opOf(weftMax, weftFloat32), nan, nan)));
  EXPECT_FALSE(std::signbit(reduceOne(opOf(weftMax, weftFloat32), -0.0f, 0.0f)));
  EXPECT_FALSE(std::signbit(reduceOne(opOf(weftMax, weftFloat32), 0.0f, -0.0f)));
  EXPECT_TRUE(std::signbit(reduceOne(opOf(weftMin, weftFloat64), 0.0, -0.0)));
  EXPECT_TRUE(std::signbit(reduceOne(opOf(weftMin, weftFloat64), -0.0, 0.0)));
  EXPECT_EQ(reduceOne<uint16_t>(opOf(weftMax, weftFloat16), kHalfNan, 0x3e00), 0x3e00);  // 1.5
  EXPECT_EQ(reduceOne<uint16_t>(opOf(weftMax, weftFloat16), 0xfe00, 0xfc01), kHalfNan);
  EXPECT_EQ(reduceOne<uint16_t>(opOf(weftMax, weftBfloat16), 0x7fc1, 0x3fc0), 0x3fc0);
  EXPECT_EQ(reduceOne<uint8_t>(opOf(weftMax, weftFloat8e4m3), 0xff, 0x3c), 0x3c);  // 1.5
  EXPECT_EQ(reduceOne<uint8_t>(opOf(weftMin, weftFloat8e5m2), 0x7d, 0x3e), 0x3e);  // 1.5
  EXPECT_EQ(reduceOne<uint8_t>(opOf(weftMin, weftFloat8e4m3), 0x00, 0x80), 0x80);
  // Sum and Prod propagate NaN.
  EXPECT_TRUE(std::isnan(reduceOne(opOf(weftSum, weftFloat32), nan, 1.5f)));
  EXPECT_EQ(reduceOne<uint16_t>(opOf(weftProd, weftFloat16), 0x3c00, 0x7e00), kHalfNan);
}

TEST(CollReduce, IntegersWrapAndCompareBySignedness) {
  EXPECT_EQ(reduceOne<int8_t>(opOf(weftSum, weftInt8), 127, 1), -128);
  EXPECT_EQ(reduceOne<uint8_t>(opOf(weftProd, weftUint8), 16, 17), uint8_t(272));
  EXPECT_EQ(reduceOne<int32_t>(opOf(weftProd, weftInt32), INT32_MIN, -1), INT32_MIN);
  EXPECT_EQ(reduceOne<int64_t>(opOf(weftSum, weftInt64), INT64_MAX, 1), INT64_MIN);
  EXPECT_EQ(reduceOne<int8_t>(opOf(weftMax, weftInt8), -1, 1), 1);
  EXPECT_EQ(reduceOne<uint8_t>(opOf(weftMax, weftUint8), 0xff, 1), 0xff);
  EXPECT_EQ(reduceOne<int64_t>(opOf(weftMin, weftInt64), INT64_MIN, 0), INT64_MIN);
  EXPECT_EQ(reduceOne<uint64_t>(opOf(weftMin, weftUint64), ~uint64_t(0), 1), 1u);
}

TEST(CollReduce, IntegerAvgTruncatesTowardZero) {
  EXPECT_EQ(reduceOne<int32_t>(opOf(weftAvg, weftInt32, 2), -7, -8), -7);
  EXPECT_EQ(reduceOne<int32_t>(opOf(weftAvg, weftInt32, 2), 7, 8), 7);
  EXPECT_EQ(reduceOne<int8_t>(opOf(weftAvg, weftInt8, 3), -128, 0), -42);
  EXPECT_EQ(reduceOne<int8_t>(opOf(weftAvg, weftInt8, 300), -128, 0), 0);
  EXPECT_EQ(reduceOne<int64_t>(opOf(weftAvg, weftInt64, 3), INT64_MIN, 0), INT64_MIN / 3);
  EXPECT_EQ(reduceOne<uint64_t>(opOf(weftAvg, weftUint64, 7), ~uint64_t(0), 0), ~uint64_t(0) / 7);
  EXPECT_EQ(reduceOne<uint32_t>(opOf(weftAvg, weftUint32, 1 << 30), 0xffffffffu, 0), 3u);
  EXPECT_EQ(reduceOne<int32_t>(opOf(weftAvg, weftInt32, 1), -7, -8), -15);
  // Without `post` it is a plain sum: the division waits for the last step.
  EXPECT_EQ(reduceOne<int32_t>(opOf(weftAvg, weftInt32, 2), -7, -8, true, false), -15);
}

TEST(CollReduce, PostDivisionIsExactForManyDivisors) {
  std::mt19937_64 rng(7);
  for (int n : {2, 3, 5, 7, 10, 64, 255, 256, 1000, 65535, 1 << 20, 1000003, INT32_MAX}) {
    const RedOp u = opOf(weftAvg, weftUint64, n), s = opOf(weftAvg, weftInt64, n);
    for (int i = 0; i < 20000; ++i) {
      uint64_t x = rng();
      if (i < 8) x = std::vector<uint64_t>{0, 1, ~uint64_t(0), uint64_t(1) << 63, uint64_t(n), uint64_t(n) - 1,
                                           uint64_t(n) * 12345 - 1, INT64_MAX}[i];
      ASSERT_EQ(reduceOne<uint64_t>(u, x, 0), x / uint64_t(n)) << x << " / " << n;
      ASSERT_EQ(reduceOne<int64_t>(s, int64_t(x), 0), int64_t(x) / n) << int64_t(x) << " / " << n;
    }
  }
}

TEST(CollReduce, FloatAvgScalesOnlyTheLocalInput) {
  const RedOp avg = opOf(weftAvg, weftFloat32, 4);
  EXPECT_EQ(reduceOne(avg, 8.0f, 1.0f, /*preLocal=*/true), 3.0f);   // 8/4 + 1
  EXPECT_EQ(reduceOne(avg, 8.0f, 1.0f, /*preLocal=*/false), 9.0f);
  // Half: the scaled value is rounded to half before the add.
  const RedOp third = opOf(weftAvg, weftFloat16, 3);
  const uint16_t one = 0x3c00;
  EXPECT_EQ(reduceOne<uint16_t>(third, one, 0), 0x3555);
  // e4m3 Avg over 3 ranks of 1.0 each: 0.34375 per rank, summed in fp8 at each hop.
  const RedOp e4 = opOf(weftAvg, weftFloat8e4m3, 3);
  const uint8_t oneE4 = 0x38;
  const uint8_t partial = reduceOne<uint8_t>(e4, oneE4, 0x00);
  EXPECT_EQ(fp8ToFloat(partial, kE4M3), 0.34375f);
  const uint8_t two = reduceOne<uint8_t>(e4, oneE4, partial);
  EXPECT_EQ(fp8ToFloat(two, kE4M3), 0.6875f);
  EXPECT_EQ(fp8ToFloat(reduceOne<uint8_t>(e4, oneE4, two), kE4M3), 1.0f);  // 1.03125 -> 1.0
}

// ---- Every type and operator against the reference ----

class CollReduceTyped : public ::testing::TestWithParam<weft_datatype_t> {};

TEST_P(CollReduceTyped, MatchesNaiveReferenceOutOfPlace) {
  const weft_datatype_t t = GetParam();
  std::mt19937_64 rng(1234 + int(t));
  for (int nRanks : {1, 3, 8}) {
    for (const RedOp& op : opsFor(t, nRanks, rng)) {
      for (size_t n : {size_t(1), size_t(3), size_t(17), size_t(1001), size_t(4099)}) {
        const Inputs in = randomInputs(t, n, rng);
        for (bool preLocal : {false, true}) {
          for (bool post : {false, true}) {
            std::vector<uint8_t> out(n * typeSize(t), 0xa5);
            reduceInto(op, out.data(), in.local.data(), in.remote.data(), n, preLocal, post);
            expectMatchesReference(op, in, out, n, preLocal, post, "out-of-place");
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST_P(CollReduceTyped, InPlaceEqualsOutOfPlace) {
  const weft_datatype_t t = GetParam();
  const size_t size = typeSize(t);
  std::mt19937_64 rng(99 + int(t));
  for (const RedOp& op : opsFor(t, 5, rng)) {
    for (size_t n : {size_t(1), size_t(2), size_t(31), size_t(1027)}) {
      const Inputs in = randomInputs(t, n, rng);
      std::vector<uint8_t> want(n * size);
      reduceInto(op, want.data(), in.local.data(), in.remote.data(), n, true, true);

      std::vector<uint8_t> intoLocal = in.local;
      reduceInto(op, intoLocal.data(), intoLocal.data(), in.remote.data(), n, true, true);
      EXPECT_EQ(intoLocal, want) << typeName(t) << " kind " << int(op.kind) << " dst == local, n " << n;

      std::vector<uint8_t> intoRemote = in.remote;
      reduceInto(op, intoRemote.data(), in.local.data(), intoRemote.data(), n, true, true);
      EXPECT_EQ(intoRemote, want) << typeName(t) << " kind " << int(op.kind) << " dst == remote, n " << n;

      // All three the same buffer: x op x.
      Inputs same{in.local, in.local};
      std::vector<uint8_t> self = in.local;
      reduceInto(op, self.data(), self.data(), self.data(), n, true, true);
      expectMatchesReference(op, same, self, n, true, true, "dst == local == remote");
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(CollReduceTyped, UnalignedStartsAndEmptyRanges) {
  const weft_datatype_t t = GetParam();
  const size_t size = typeSize(t);
  std::mt19937_64 rng(5 + int(t));
  const RedOp op = opOf(weftSum, t);
  // Offsets by whole elements move the start off the vector width, so the loops' peeled heads
  // and tails are exercised.
  const Inputs in = randomInputs(t, 300, rng);
  for (size_t offset : {size_t(1), size_t(3), size_t(5)}) {
    const size_t n = 300 - offset - 2;
    std::vector<uint8_t> out(300 * size, 0);
    reduceInto(op, out.data() + offset * size, in.local.data() + offset * size,
               in.remote.data() + 2 * size, n, true, true);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t want = refElement(op, loadBits(in.local, i + offset, size), loadBits(in.remote, i + 2, size), true, true);
      ASSERT_TRUE(sameElement(t, loadBits(out, i + offset, size), want)) << typeName(t) << " offset " << offset << " i " << i;
    }
    for (size_t i = 0; i < offset; ++i) ASSERT_EQ(loadBits(out, i, size), 0u);  // nothing before dst
    ASSERT_EQ(loadBits(out, offset + n, size), 0u);                            // nor after
  }
  // n == 0 touches nothing, even through null pointers.
  reduceInto(op, nullptr, nullptr, nullptr, 0, true, true);
  copyWith(op, nullptr, nullptr, 0, true, true);
}

TEST_P(CollReduceTyped, CopyWithAppliesOnlyTheRequestedSteps) {
  const weft_datatype_t t = GetParam();
  const size_t size = typeSize(t);
  std::mt19937_64 rng(77 + int(t));
  const size_t n = 257;
  const Inputs in = randomInputs(t, n, rng);
  const std::vector<uint8_t> zeros(n * size, 0);
  for (const RedOp& op : opsFor(t, 3, rng)) {
    for (bool pre : {false, true}) {
      for (bool post : {false, true}) {
        // copyWith(x) = reduceInto(x, 0) for every kind whose f(x, 0) is x (Sum-based ones).
        std::vector<uint8_t> got(n * size);
        copyWith(op, got.data(), in.local.data(), n, pre, post);
        std::vector<uint8_t> inPlace = in.local;
        copyWith(op, inPlace.data(), inPlace.data(), n, pre, post);
        EXPECT_EQ(inPlace, got);
        const bool scales = pre && op.kind == RedKind::kPreMulSum;
        const bool divides = post && op.kind == RedKind::kSumPostDiv && (op.arg >> 1) > 1;
        if (!scales && !divides) {
          EXPECT_EQ(got, in.local) << typeName(t) << " kind " << int(op.kind) << ": a plain copy";
          continue;
        }
        for (size_t i = 0; i < n; ++i) {
          const uint64_t x = loadBits(in.local, i, size);
          uint64_t want;
          if (divides) {
            want = refElement(op, x, 0, false, true);
          } else if (isNarrowFloat(t)) {
            want = roundLikeDevice(t, elementToDouble(t, x) * elementToDouble(t, op.arg));
          } else {
            // x * s + 0 in the reference, except that -0 + 0 is +0: compare against the product.
            const RedOp prod{RedKind::kProd, t, 0};
            want = refElement(prod, x, op.arg, false, false);
          }
          ASSERT_TRUE(sameElement(t, loadBits(got, i, size), want))
              << typeName(t) << " kind " << int(op.kind) << " i " << i << std::hex << " x 0x" << x;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CollReduceTyped, ::testing::ValuesIn(kAllTypes),
                         [](const auto& p) { return typeName(p.param); });

}  // namespace
}  // namespace weft::coll
