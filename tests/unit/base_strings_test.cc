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

TEST(Strings, StrprintfFormatsShortAndLongTextWhole) {
  EXPECT_EQ(strprintf("%d/%.1f/%s", 3, 24.05, "PIX"), "3/24.1/PIX");
  EXPECT_EQ(strprintf("%s", ""), "");
  // Past the 1 KiB stack buffer the text is formatted a second time into the string.
  std::string big(5000, 'x');
  EXPECT_EQ(strprintf("<%s|%d>", big.c_str(), 7), "<" + big + "|7>");
  // Appending keeps what was there.
  std::string head = "head ";
  auto append = [&head](const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    appendFormatV(head, fmt, ap);
    va_end(ap);
  };
  append("%s:%d", big.c_str(), 1);
  EXPECT_EQ(head, "head " + big + ":1");
}

TEST(Strings, EditDistanceIgnoresCase) {
  EXPECT_EQ(editDistance("MAX_NCHANNELS", "max_nchannels"), 0u);
  EXPECT_EQ(editDistance("MAX_NCHANELS", "MAX_NCHANNELS"), 1u);
}

}  // namespace
}  // namespace weft
