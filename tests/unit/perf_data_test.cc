// `weft perf -c`: the test data. The expected result of every reduction must be what any
// implementation computes in the type, whatever order it combines the ranks in.
#include "tools/weft/perf_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

namespace weft::tool::perf {
namespace {

constexpr size_t kCount = 2048;

bool isFloat(DataType t) { return t >= DataType::kHalf; }

uint64_t at(const std::vector<char>& buf, size_t i, size_t size) {
  uint64_t v = 0;
  std::memcpy(&v, buf.data() + i * size, size);
  return v;
}

uint64_t mask(size_t size) { return size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1; }

// One step of a reduction as a device computes it in the type: exact arithmetic, then rounding.
uint64_t combine(uint64_t a, uint64_t b, DataType t, RedOp op) {
  const size_t size = typeSize(t);
  if (!isFloat(t)) {
    const bool isSigned = t == DataType::kInt8 || t == DataType::kInt32 || t == DataType::kInt64;
    auto value = [&](uint64_t x) {
      return isSigned ? static_cast<int64_t>(x << (64 - 8 * size)) >> (64 - 8 * size) : static_cast<int64_t>(x);
    };
    switch (op) {
      case RedOp::kSum:
      case RedOp::kAvg:
      case RedOp::kMulSum:
        return (a + b) & mask(size);
      case RedOp::kProd:
        return (a * b) & mask(size);
      case RedOp::kMax:
        if (!isSigned) return std::max(a, b);
        return value(a) >= value(b) ? a : b;
      case RedOp::kMin:
        if (!isSigned) return std::min(a, b);
        return value(a) <= value(b) ? a : b;
    }
  }
  const double x = decode(a, t), y = decode(b, t);
  switch (op) {
    case RedOp::kSum:
    case RedOp::kMulSum:
    case RedOp::kAvg:
      return encode(x + y, t);
    case RedOp::kProd:
      return encode(x * y, t);
    case RedOp::kMax:
      return x >= y ? a : b;
    case RedOp::kMin:
      return x <= y ? a : b;
  }
  return 0;
}

// Every rank's input of a reduction, after mulsum's pre-multiplication.
std::vector<std::vector<char>> inputs(DataType t, RedOp op, int nranks, uint64_t seed) {
  const size_t size = typeSize(t);
  std::vector<std::vector<char>> in(static_cast<size_t>(nranks), std::vector<char>(kCount * size));
  for (int r = 0; r < nranks; ++r) {
    auto& buf = in[static_cast<size_t>(r)];
    fillReduceInput(buf.data(), kCount, t, op, nranks, r, seed, 1000);
    if (op != RedOp::kMulSum) continue;
    uint64_t s = premulScalar(t, r);
    for (size_t i = 0; i < kCount; ++i) {
      uint64_t x = at(buf, i, size);
      uint64_t y = isFloat(t) ? encode(decode(x, t) * decode(s, t), t) : (x * s) & mask(size);
      std::memcpy(buf.data() + i * size, &y, size);
    }
  }
  return in;
}

// Every type, op and a few communicator sizes (odd ones, and more ranks than f8e5m2 has exact
// integers for), in one test: 360 cases would otherwise be 360 processes under ctest.
template <typename F>
void forEachReduction(F&& check) {
  for (DataType t : allTypes()) {
    for (RedOp op : allOps()) {
      for (int nranks : {1, 2, 3, 8, 33}) {
        SCOPED_TRACE(std::string(typeName(t)) + " " + opName(op) + " over " + std::to_string(nranks) + " ranks");
        check(t, op, nranks);
      }
    }
  }
}

// How many elements of the expected result differ from reducing the inputs in `order`.
int64_t mismatches(DataType t, RedOp op, const std::vector<std::vector<char>>& in, const std::vector<char>& expected,
                   const std::vector<int>& order) {
  const size_t size = typeSize(t);
  const int nranks = static_cast<int>(in.size());
  int64_t wrong = 0;
  for (size_t i = 0; i < kCount; ++i) {
    const uint64_t want = at(expected, i, size);
    uint64_t acc = at(in[static_cast<size_t>(order[0])], i, size);
    for (size_t k = 1; k < order.size(); ++k) acc = combine(acc, at(in[static_cast<size_t>(order[k])], i, size), t, op);
    if (op == RedOp::kAvg && isFloat(t)) {
      // NCCL multiplies each input by 1/n before adding: within 2 ulps of the exact average.
      acc = encode(decode(acc, t) / nranks, t);
      wrong += countWrong(&acc, &want, 1, t, op, true);
      continue;
    }
    if (op == RedOp::kAvg) acc /= static_cast<uint64_t>(nranks);  // the inputs keep the sum non-negative, unwrapped
    if (acc != want) ++wrong;
  }
  return wrong;
}

TEST(PerfData, ExpectedIsWhatEveryOrderComputesInTheType) {
  forEachReduction([](DataType t, RedOp op, int nranks) {
    auto in = inputs(t, op, nranks, 7);
    std::vector<char> expected(kCount * typeSize(t));
    fillReduceExpected(expected.data(), kCount, t, op, nranks, 7, 1000);
    std::vector<int> order(static_cast<size_t>(nranks));
    std::iota(order.begin(), order.end(), 0);
    EXPECT_EQ(mismatches(t, op, in, expected, order), 0) << "rank order";
    std::reverse(order.begin(), order.end());
    EXPECT_EQ(mismatches(t, op, in, expected, order), 0) << "reverse order";
    std::rotate(order.begin(), order.begin() + nranks / 2, order.end());
    EXPECT_EQ(mismatches(t, op, in, expected, order), 0) << "a ring starting elsewhere";
  });
}

TEST(PerfData, InputsAreFiniteAndDependOnTheRank) {
  forEachReduction([](DataType t, RedOp op, int nranks) {
    const size_t size = typeSize(t);
    auto in = inputs(t, op, nranks, 3);
    for (const auto& buf : in) {
      for (size_t i = 0; i < kCount; ++i) ASSERT_TRUE(std::isfinite(decode(at(buf, i, size), t)));
    }
    if (nranks > 1) {
      EXPECT_NE(in[0], in[1]);
    }
  });
}

TEST(PerfData, EncodeRoundsToNearestEvenInEveryFormat) {
  EXPECT_EQ(encode(1.0, DataType::kHalf), 0x3c00u);
  EXPECT_EQ(encode(65504.0, DataType::kHalf), 0x7bffu);   // half's largest finite
  EXPECT_EQ(encode(2049.0, DataType::kHalf), 0x6800u);    // tie: to even (2048)
  EXPECT_EQ(encode(2051.0, DataType::kHalf), 0x6802u);    // tie: to even (2052)
  EXPECT_EQ(encode(-0x1p-24, DataType::kHalf), 0x8001u);  // smallest subnormal
  EXPECT_EQ(encode(1e6, DataType::kHalf), 0x7c00u);       // overflow: infinity
  EXPECT_EQ(encode(1.0, DataType::kBfloat16), 0x3f80u);
  EXPECT_EQ(encode(-2.0, DataType::kBfloat16), 0xc000u);
  EXPECT_EQ(encode(1.0, DataType::kF8e4m3), 0x38u);
  EXPECT_EQ(encode(448.0, DataType::kF8e4m3), 0x7eu);   // e4m3's largest finite
  EXPECT_EQ(encode(0x1p-9, DataType::kF8e4m3), 0x01u);  // smallest subnormal
  EXPECT_EQ(encode(17.0, DataType::kF8e4m3), 0x58u);    // tie between 16 and 18: 16
  EXPECT_EQ(encode(1.0, DataType::kF8e5m2), 0x3cu);
  EXPECT_EQ(encode(57344.0, DataType::kF8e5m2), 0x7bu);  // e5m2's largest finite
  EXPECT_EQ(encode(1.0, DataType::kFloat), 0x3f800000u);
  EXPECT_EQ(encode(-1.0, DataType::kInt8), 0xffu);
  EXPECT_EQ(encode(2.0, DataType::kUint64), 2u);
  for (uint64_t bits = 0; bits < 256; ++bits) {
    for (DataType t : {DataType::kF8e4m3, DataType::kF8e5m2}) {
      double v = decode(bits, t);
      if (std::isfinite(v)) {
        EXPECT_EQ(encode(v, t), bits) << typeName(t) << " " << bits;
      }
    }
  }
}

TEST(PerfData, PremulScalarsAreOneAndTwo) {
  EXPECT_EQ(decode(premulScalar(DataType::kHalf, 0), DataType::kHalf), 1.0);
  EXPECT_EQ(decode(premulScalar(DataType::kF8e5m2, 3), DataType::kF8e5m2), 2.0);
  EXPECT_EQ(premulScalar(DataType::kInt32, 1), 2u);
}

TEST(PerfData, CopiesAreDeterministicAndIndexed) {
  std::vector<float> a(64), b(32);
  fillCopy(a.data(), a.size(), DataType::kFloat, 5, 0);
  fillCopy(b.data(), b.size(), DataType::kFloat, 5, 32);  // the second half of the same stream
  EXPECT_EQ(std::memcmp(a.data() + 32, b.data(), 32 * sizeof(float)), 0);
  fillCopy(b.data(), b.size(), DataType::kFloat, 6, 32);
  EXPECT_NE(std::memcmp(a.data() + 32, b.data(), 32 * sizeof(float)), 0);
  for (float f : a) EXPECT_TRUE(std::isfinite(f) && f != 0);
}

TEST(PerfData, CountWrongCountsElementsAndAllowsTwoUlpsForFloatAvg) {
  std::vector<uint16_t> want(100), got;
  fillCopy(want.data(), want.size(), DataType::kHalf, 1, 0);
  got = want;
  EXPECT_EQ(countWrong(got.data(), want.data(), 100, DataType::kHalf, RedOp::kSum, true), 0);
  got[3] ^= 1;
  got[50] ^= 0x100;
  EXPECT_EQ(countWrong(got.data(), want.data(), 100, DataType::kHalf, RedOp::kSum, true), 2);
  got = want;
  got[7] += 2;  // 2 ulps
  EXPECT_EQ(countWrong(got.data(), want.data(), 100, DataType::kHalf, RedOp::kAvg, true), 0);
  got[7] += 1;  // 3 ulps
  EXPECT_EQ(countWrong(got.data(), want.data(), 100, DataType::kHalf, RedOp::kAvg, true), 1);
  EXPECT_EQ(countWrong(got.data(), want.data(), 100, DataType::kHalf, RedOp::kAvg, false), 1);
  std::vector<int32_t> wi{1, 2, 3}, gi{1, 2, 4};
  EXPECT_EQ(countWrong(gi.data(), wi.data(), 3, DataType::kInt32, RedOp::kAvg, true), 1);  // integers: exact
}

}  // namespace
}  // namespace weft::tool::perf
