// The search keeps link bandwidths as integer thousandths (SearchEngine, search_engine.h) where
// NCCL keeps floats rounded by SUB_ROUND. These checks are the exhaustive half of the argument
// in search_engine.cc: for every link value the search can hold and for every bandwidth it
// reserves, the integer update gives the float NCCL would have computed.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "core/topo/search_engine.h"
#include "tests/support/sanitizer.h"

namespace weft::topo {
using detail::SearchEngine;
namespace {

constexpr int32_t kLimit = SearchEngine::kMilliLimit;

float milliToFloat(int64_t k) { return static_cast<float>(k) / 1000.0f; }

// Every per-channel speed the search tries (NCCL 2.28's speed arrays), halved as trees do,
// and its PCI-overhead variant.
std::vector<int32_t> reservedMillis() {
  const float speeds[] = {96.0f, 90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 48.0f, 45.1f, 45.0f, 42.0f, 40.0f, 30.0f,
                          28.0f, 24.0f, 22.0f, 20.0f, 19.0f, 18.0f, 17.5f, 15.0f, 12.0f, 11.0f, 10.0f, 9.0f,
                          7.0f,  6.0f,  5.0f,  4.0f,  3.0f,  2.4f,  1.2f,  0.24f, 0.12f};
  std::set<int32_t> out;
  for (float s : speeds) {
    for (float v : {s, s / 2}) {
      int32_t k = SearchEngine::exactMilli(v);
      EXPECT_NE(k, SearchEngine::kSlow) << v << " is not an exact thousandth";
      out.insert(k);
      out.insert(-k);  // releases
      // PCI links on a path through an Intel root complex cost 6/5 (when that is exact).
      int32_t pci = SearchEngine::exactMilli(v * 6 / 5);
      if (pci != SearchEngine::kSlow) {
        out.insert(pci);
        out.insert(-pci);
      }
    }
  }
  return {out.begin(), out.end()};
}

TEST(SearchBwExact, MilliRoundTripsOverTheWholeRange) {
  float prev = milliToFloat(-kLimit);
  for (int32_t k = -kLimit + 1; k < kLimit; ++k) {
    float f = milliToFloat(k);
    ASSERT_EQ(SearchEngine::exactMilli(f), k) << "k=" << k;
    ASSERT_LT(prev, f) << "fl(k/1000) must increase with k, k=" << k;  // comparisons agree
    prev = f;
  }
}

TEST(SearchBwExact, ValuesOutsideTheFormStayFloats) {
  EXPECT_EQ(SearchEngine::exactMilli(0.1234567f), SearchEngine::kSlow);
  EXPECT_EQ(SearchEngine::exactMilli(24.0f * 6 / 5 + 1e-4f), SearchEngine::kSlow);
  EXPECT_EQ(SearchEngine::exactMilli(milliToFloat(kLimit)), SearchEngine::kSlow);
  EXPECT_EQ(SearchEngine::exactMilli(5000.0f), SearchEngine::kSlow);
  EXPECT_EQ(SearchEngine::exactMilli(-5000.0f), SearchEngine::kSlow);
  EXPECT_EQ(SearchEngine::exactMilli(std::numeric_limits<float>::infinity()), SearchEngine::kSlow);
  EXPECT_EQ(SearchEngine::exactMilli(std::numeric_limits<float>::quiet_NaN()), SearchEngine::kSlow);
  EXPECT_EQ(SearchEngine::exactMilli(0.0f), 0);
  EXPECT_EQ(SearchEngine::exactMilli(-0.0f), 0);
}

// SUB_ROUND(fl(ka/1000), fl(kb/1000)) == fl((ka-kb)/1000) for every link value ka and every
// reserved bandwidth kb, whenever the result stays in range.
TEST(SearchBwExact, SubRoundIsIntegerSubtractionForEveryReservedBandwidth) {
  // A sanitizer build checks every reserved bandwidth against every 16th link value (the plain
  // build, every one): the arithmetic is the same, only the instrumented loop is slower.
  const int64_t step = test::kSanitized ? 16 : 1;
  for (int32_t kb : reservedMillis()) {
    const float b = milliToFloat(kb);
    int64_t lo = std::max<int64_t>(-kLimit + 1, static_cast<int64_t>(kb) - kLimit + 1);
    int64_t hi = std::min<int64_t>(kLimit - 1, static_cast<int64_t>(kb) + kLimit - 1);
    for (int64_t ka = lo; ka <= hi; ka += step) {
      float got = SearchEngine::subRoundBw(milliToFloat(ka), b);
      float want = milliToFloat(ka - kb);
      ASSERT_EQ(got, want) << "ka=" << ka << " kb=" << kb;
    }
  }
}

// The proof does not depend on kb being a speed: spot-check arbitrary pairs across the range.
TEST(SearchBwExact, SubRoundIsIntegerSubtractionForArbitraryPairs) {
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int32_t> any(-kLimit + 1, kLimit - 1);
  int checked = 0;
  while (checked < 4000000) {
    int64_t ka = any(rng);
    int64_t kb = any(rng);
    if (ka - kb <= -kLimit || ka - kb >= kLimit) continue;
    ASSERT_EQ(SearchEngine::subRoundBw(milliToFloat(ka), milliToFloat(kb)), milliToFloat(ka - kb))
        << "ka=" << ka << " kb=" << kb;
    ++checked;
  }
}

// Wide links (search_engine.h): values of the form fl(k/1000) from 4,000 to 16,384 GB/s.
TEST(SearchBwWide, LinkValuesBeyondTheSmallRangeAreKeptWide) {
  EXPECT_EQ(SearchEngine::linkMilli(24.0f), 24000);  // small values keep their small form
  EXPECT_EQ(SearchEngine::linkMilli(5000.0f), SearchEngine::kWide + 5000000);
  EXPECT_EQ(SearchEngine::linkMilli(milliToFloat(5052600)), SearchEngine::kWide + 5052600);
  EXPECT_EQ(SearchEngine::linkMilli(16000.5f), SearchEngine::kWide + 16000500);
  EXPECT_EQ(SearchEngine::linkMilli(20000.0f), SearchEngine::kSlow);  // beyond kWideLimit
  EXPECT_EQ(SearchEngine::linkMilli(-5000.0f), SearchEngine::kSlow);
  EXPECT_EQ(SearchEngine::linkMilli(5000.0005f), SearchEngine::kSlow);  // 5000.000488...: not a thousandth
  EXPECT_FALSE(SearchEngine::isSmall(SearchEngine::kWide + 5000000));
  EXPECT_FALSE(SearchEngine::isSmall(SearchEngine::kSlow));
  EXPECT_TRUE(SearchEngine::isSmall(-kLimit + 1));
}

TEST(SearchBwWide, MilliToBwIsTheFloatDivisionForEveryK) {
  for (int32_t k = -(1 << 24); k <= (1 << 24); ++k)
    ASSERT_EQ(std::bit_cast<uint32_t>(SearchEngine::milliToBw(k)),
              std::bit_cast<uint32_t>(static_cast<float>(k) / 1000.0f))
        << "k=" << k;
}

// wideStep against NCCL's own arithmetic (subRoundBw is SUB_ROUND): a link that wideStep updates
// holds what SUB_ROUND gives, and giving the bandwidth back with SUB_ROUND returns the value it
// had; where either fails, wideStep leaves the link alone. Both outcomes must occur: the float
// results of wide values do drift.
TEST(SearchBwWide, WideStepIsSubRoundWhereItUpdates) {
  std::mt19937 rng(20261123);
  std::uniform_int_distribution<int32_t> wide(0, SearchEngine::kWideLimit - 1);
  const std::vector<int32_t> costs = reservedMillis();
  std::uniform_int_distribution<size_t> pick(0, costs.size() - 1);
  int updated = 0, left = 0, shortfalls = 0, drifted = 0;
  for (int i = 0; i < 2000000; ++i) {
    const int32_t k = i < 1000000 ? 5000000 - (i % 2000) * 1440 : wide(rng);  // a CPU NIC's link
    const int32_t c = i < 1000000 ? (i & 1 ? 1440 : -1440) : (i & 1 ? costs[pick(rng)] : -costs[pick(rng)]);
    int32_t m = SearchEngine::kWide + k;
    const SearchEngine::Exact e = SearchEngine::wideStep(m, c);
    const float a = milliToFloat(k), b = milliToFloat(c);
    if (e == SearchEngine::kShort) {
      ASSERT_TRUE(a < b) << "k=" << k << " c=" << c;
      ASSERT_EQ(m, SearchEngine::kWide + k);
      ++shortfalls;
      continue;
    }
    ASSERT_FALSE(a < b) << "k=" << k << " c=" << c;
    const float taken = SearchEngine::subRoundBw(a, b);
    const bool exact = taken == milliToFloat(k - c) && SearchEngine::subRoundBw(taken, -b) == a;
    if (e == SearchEngine::kDone) {
      ASSERT_TRUE(exact) << "k=" << k << " c=" << c;
      ASSERT_EQ(m, SearchEngine::kWide + k - c);
      ++updated;
    } else {
      ASSERT_FALSE(exact && k - c < SearchEngine::kWideLimit) << "k=" << k << " c=" << c << " left to the float code";
      ASSERT_EQ(m, SearchEngine::kWide + k);
      ++left;
      // What wideDrift makes of it instead: SUB_ROUND's own result, kept wide where it fits.
      int32_t d = SearchEngine::kWide + k;
      const bool fits = taken >= 0 && taken * 1000 < static_cast<float>(SearchEngine::kWideLimit);
      ASSERT_EQ(SearchEngine::wideDrift(d, c), fits) << "k=" << k << " c=" << c;
      if (fits) {
        ASSERT_EQ(milliToFloat(d - SearchEngine::kWide), taken) << "k=" << k << " c=" << c;
        if (d != SearchEngine::kWide + k - c) ++drifted;
      } else {
        ASSERT_EQ(d, SearchEngine::kWide + k);
      }
    }
  }
  std::printf("[ wide     ] %d updated, %d left to the float code (%d of them to another value than k - c), %d short\n",
              updated, left, drifted, shortfalls);
  EXPECT_GT(updated, 1000000);
  EXPECT_GT(left, 1000);
  EXPECT_GT(drifted, 1000);
  EXPECT_GT(shortfalls, 0);
}

}  // namespace
}  // namespace weft::topo
