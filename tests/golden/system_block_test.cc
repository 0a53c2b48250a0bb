// The system block weft prints equals, line for line, the rank-0 block NCCL 2.28.9 printed for
// the same topology on 2 nodes (nothing trimmed). The header's maxBw/totalBw need paths and
// are checked by the search golden tests.
#include <gtest/gtest.h>

#include "core/topo/system_build.h"
#include "core/topo/system_print.h"
#include "tests/support/corpus.h"
#include "tests/support/reference.h"

namespace weft::topo {
namespace {

TEST(SystemBlockGolden, EveryTwoNodeReferenceCaseMatchesNccl) {
  WEFT_REQUIRE_CORPUS();
  int checked = 0;
  for (const test::ReferenceCase& c : test::referenceCases()) {
    if (c.nodes != 2) continue;
    SCOPED_TRACE(c.name);
    auto xml = TopoXml::load(c.topology.string());
    ASSERT_TRUE(xml.isOk()) << xml.status().toString();
    auto sys = buildSystem(*xml);
    ASSERT_TRUE(sys.isOk()) << sys.status().toString();
    auto expected = test::block(test::rankLines(c.log, 0), "=== System :", "=====");
    ASSERT_FALSE(expected.empty()) << "no system block in " << c.log;
    auto actual = systemBlock(*sys);
    expected.erase(expected.begin());
    actual.erase(actual.begin());
    EXPECT_EQ(test::diffLines(expected, actual), "");
    ++checked;
  }
  EXPECT_GE(checked, 6) << "fewer reference cases than the corpus had when this test was written";
}

}  // namespace
}  // namespace weft::topo
