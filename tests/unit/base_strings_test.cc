#include <gtest/gtest.h>

#include "core/base/strings.h"

namespace weft {
namespace {

TEST(Strings, ParseIntAcceptsBasesLikeStrtoll) {
  EXPECT_EQ(parseInt("42"), 42);
  EXPECT_EQ(parseInt("0x10", 0), 16);
  EXPECT_EQ(parseInt("-2", 0), -2);
  EXPECT_FALSE(parseInt("12abc"));
  EXPECT_FALSE(parseInt(""));
  EXPECT_EQ(parseUint("ff", 16), 255u);
  EXPECT_FALSE(parseUint("-1"));
}

TEST(Strings, SplitKeepsEmptyFields) {
  auto parts = split("a,,b", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
}

TEST(Strings, EditDistanceIgnoresCase) {
  EXPECT_EQ(editDistance("MAX_NCHANNELS", "max_nchannels"), 0u);
  EXPECT_EQ(editDistance("MAX_NCHANELS", "MAX_NCHANNELS"), 1u);
}

}  // namespace
}  // namespace weft
