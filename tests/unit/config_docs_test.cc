// docs/settings.md is generated from the settings table; it must not drift from it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/config/render.h"
#include "tests/support/log_capture.h"

namespace weft::config {
namespace {

using DocsTest = weft::test::WeftTest;

TEST_F(DocsTest, CommittedReferenceDocMatchesTheTable) {
  std::ifstream in(WEFT_DOCS_DIR "/settings.md", std::ios::binary);
  ASSERT_TRUE(in) << "docs/settings.md is missing";
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), renderReference())
      << "docs/settings.md is out of date: regenerate it with\n"
         "  build/tools/weft/weft info --config --format markdown > docs/settings.md";
}

TEST_F(DocsTest, ReferenceHasOneRowPerSetting) {
  std::string md = renderReference();
  for (const SettingDef& d : table()) {
    std::string row = "| `" + std::string(d.name) + "`";
    EXPECT_NE(md.find(row), std::string::npos) << d.name;
  }
  EXPECT_NE(md.find("| `NCCL_MAX_NCHANNELS` (older: `NCCL_MAX_NRINGS`) | `MAX_NCHANNELS` | integer | -2 (auto) | "
                    "an integer >= 1 or -2 (auto) |"),
            std::string::npos);
  EXPECT_NE(md.find("| `WEFT_CONFIG` | (environment only) |"), std::string::npos);
}

}  // namespace
}  // namespace weft::config
