// core/coll's conversions and narrow-float operations against CUDA's own host implementations
// (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h compiled by the host compiler), bit for bit. Built only
// where CMake finds those headers; nothing here needs a GPU or links CUDA.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/coll/numeric.h"
#include "core/coll/reduce.h"

namespace weft::coll {
namespace {

uint16_t bitsOf(__half h) {
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
uint16_t bitsOf(__nv_bfloat16 h) {
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
__half halfOf(uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half(raw);
}
__nv_bfloat16 bf16Of(uint16_t bits) {
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return __nv_bfloat16(raw);
}
uint32_t floatBits(float f) { return std::bit_cast<uint32_t>(f); }

__nv_fp8_interpretation_t cudaFormat(Fp8Format f) { return f == Fp8Format::kE4M3 ? __NV_E4M3 : __NV_E5M2; }

// Every 61st float bit pattern (about 70 million: all exponents, many mantissas).
template <class Check>
void forSampleFloats(Check check) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 61) check(std::bit_cast<float>(uint32_t(bits)));
}

TEST(CollNumericCuda, HalfAndBf16ToFloatMatchEveryPattern) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    // NaNs included: CUDA makes every one 0x7fffffff.
    ASSERT_EQ(floatBits(halfToFloat(uint16_t(b))), floatBits(__half2float(halfOf(uint16_t(b))))) << std::hex << b;
    ASSERT_EQ(floatBits(bf16ToFloat(uint16_t(b))), floatBits(__bfloat162float(bf16Of(uint16_t(b))))) << std::hex << b;
  }
}

TEST(CollNumericCuda, FloatToHalfAndBf16MatchOnSampledFloats) {
  forSampleFloats([](float f) {
    ASSERT_EQ(floatToHalf(f), bitsOf(__float2half_rn(f))) << std::hexfloat << f;
    ASSERT_EQ(floatToBf16(f), bitsOf(__float2bfloat16(f))) << std::hexfloat << f;
  });
}

class CollNumericCudaFp8 : public ::testing::TestWithParam<Fp8Format> {};

TEST_P(CollNumericCudaFp8, ConversionsMatchEveryPatternAndSampledFloats) {
  const Fp8Format fmt = GetParam();
  const auto cf = cudaFormat(fmt);
  for (uint32_t v = 0; v <= 0xff; ++v) {
    ASSERT_EQ(fp8ToHalf(uint8_t(v), fmt), __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(v), cf).x) << v;
  }
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    __half_raw raw;
    raw.x = uint16_t(h);
    ASSERT_EQ(halfToFp8(uint16_t(h), fmt), __nv_cvt_halfraw_to_fp8(raw, __NV_SATFINITE, cf)) << std::hex << h;
  }
  forSampleFloats([&](float f) {
    ASSERT_EQ(floatToFp8(f, fmt), __nv_cvt_float_to_fp8(f, __NV_SATFINITE, cf)) << std::hexfloat << f;
  });
}

// NCCL's fp8 functors: both operands to half, the half operation, back with SATFINITE.
TEST_P(CollNumericCudaFp8, OperationsMatchHalfArithmeticOnEveryPair) {
  const Fp8Format fmt = GetParam();
  const auto cf = cudaFormat(fmt);
  const weft_datatype_t type = fmt == Fp8Format::kE4M3 ? weftFloat8e4m3 : weftFloat8e5m2;
  std::vector<uint8_t> a, b;
  for (uint32_t x = 0; x < 256; ++x) {
    for (uint32_t y = 0; y < 256; ++y) {
      a.push_back(uint8_t(x));
      b.push_back(uint8_t(y));
    }
  }
  auto toHalf = [&](uint8_t v) { return __half(__nv_cvt_fp8_to_halfraw(v, cf)); };
  auto toFp8 = [&](__half h) { return __nv_cvt_halfraw_to_fp8(__half_raw(h), __NV_SATFINITE, cf); };
  struct Case {
    int userOp;
    __half (*fn)(__half, __half);
  };
  const Case cases[] = {
      {weftSum, [](__half x, __half y) { return __hadd(x, y); }},
      {weftProd, [](__half x, __half y) { return __hmul(x, y); }},
      {weftMax, [](__half x, __half y) { return __hmax(x, y); }},
      {weftMin, [](__half x, __half y) { return __hmin(x, y); }},
  };
  for (const Case& c : cases) {
    auto op = deviceOp(c.userOp, type, 2);
    ASSERT_TRUE(op.isOk());
    std::vector<uint8_t> out(a.size());
    reduceInto(*op, out.data(), a.data(), b.data(), a.size(), true, true);
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(out[i], toFp8(c.fn(toHalf(a[i]), toHalf(b[i])))) << "op " << c.userOp << ": " << int(a[i]) << ", " << int(b[i]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, CollNumericCudaFp8, ::testing::Values(Fp8Format::kE4M3, Fp8Format::kE5M2),
                         [](const auto& p) { return p.param == Fp8Format::kE4M3 ? "E4M3" : "E5M2"; });

// Random pairs of half and bf16 patterns (NaNs, Infs and subnormals included) through the
// vectorised kernels, against __hadd / __hmul / __hmax / __hmin.
TEST(CollNumericCuda, HalfAndBf16OperationsMatchOnRandomPairs) {
  constexpr size_t kN = 1 << 22;
  std::mt19937_64 rng(11);
  std::vector<uint16_t> a(kN), b(kN), out(kN);
  for (size_t i = 0; i < kN; ++i) {
    a[i] = uint16_t(rng());
    b[i] = uint16_t(rng());
  }
  for (int userOp : {weftSum, weftProd, weftMax, weftMin}) {
    auto half = deviceOp(userOp, weftFloat16, 2);
    ASSERT_TRUE(half.isOk());
    reduceInto(*half, out.data(), a.data(), b.data(), kN, true, true);
    for (size_t i = 0; i < kN; ++i) {
      const __half x = halfOf(a[i]), y = halfOf(b[i]);
      const __half want = userOp == weftSum ? __hadd(x, y) : userOp == weftProd ? __hmul(x, y)
                          : userOp == weftMax ? __hmax(x, y) : __hmin(x, y);
      ASSERT_EQ(out[i], bitsOf(want)) << "half op " << userOp << std::hex << ": " << a[i] << ", " << b[i];
    }
    auto bf16 = deviceOp(userOp, weftBfloat16, 2);
    ASSERT_TRUE(bf16.isOk());
    reduceInto(*bf16, out.data(), a.data(), b.data(), kN, true, true);
    for (size_t i = 0; i < kN; ++i) {
      const __nv_bfloat16 x = bf16Of(a[i]), y = bf16Of(b[i]);
      const __nv_bfloat16 want = userOp == weftSum ? __hadd(x, y) : userOp == weftProd ? __hmul(x, y)
                                 : userOp == weftMax ? __hmax(x, y) : __hmin(x, y);
      ASSERT_EQ(out[i], bitsOf(want)) << "bf16 op " << userOp << std::hex << ": " << a[i] << ", " << b[i];
    }
  }
}

// Avg's scalar: 1/nRanks through CUDA's float conversions.
TEST(CollNumericCuda, AvgScalarsMatchCudaConversions) {
  for (int n = 1; n <= 5000; ++n) {
    const float inv = 1.0f / float(n);
    EXPECT_EQ(deviceOp(weftAvg, weftFloat16, n)->arg, bitsOf(__float2half(inv))) << n;
    EXPECT_EQ(deviceOp(weftAvg, weftBfloat16, n)->arg, bitsOf(__float2bfloat16(inv))) << n;
    EXPECT_EQ(deviceOp(weftAvg, weftFloat8e4m3, n)->arg, __nv_cvt_float_to_fp8(inv, __NV_SATFINITE, __NV_E4M3)) << n;
    EXPECT_EQ(deviceOp(weftAvg, weftFloat8e5m2, n)->arg, __nv_cvt_float_to_fp8(inv, __NV_SATFINITE, __NV_E5M2)) << n;
  }
}

}  // namespace
}  // namespace weft::coll
