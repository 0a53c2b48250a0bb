// Every reference case through search and connect: for every rank, the lines NCCL 2.28.9 logged
// in the connect phase ("Tree", "Channel", "Ring", "Trees") equal weft's, in order. Each node is
// simulated on its own (no shared search), as NCCL's ranks do.
#include <gtest/gtest.h>

#include <deque>

#include "core/connect/connect.h"
#include "core/connect/log_lines.h"
#include "core/connect/offline.h"
#include "core/topo/offline.h"
#include "core/topo/paths.h"
#include "tests/support/corpus.h"
#include "tests/support/log_capture.h"
#include "tests/support/reference.h"

namespace weft::connect {
namespace {

using test::linesOfRank;

bool isConnectLine(const std::string& l) {
  return l.rfind("Tree ", 0) == 0 || l.rfind("Trees", 0) == 0 || l.rfind("Channel ", 0) == 0 ||
         l.rfind("Ring ", 0) == 0;
}

std::vector<std::string> connectPhase(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const std::string& l : lines)
    if (isConnectLine(l)) out.push_back(l);
  return out;
}

TEST(ConnectGolden, EveryRankOfEveryReferenceCaseMatchesNccl) {
  WEFT_REQUIRE_CORPUS();
  auto cases = test::referenceCases();
  ASSERT_GE(cases.size(), 12u);
  for (const test::ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto topo = topo::TopoXml::load(c.topology.string());
    ASSERT_TRUE(topo.isOk()) << topo.status().toString();
    topo::OfflineOptions o;
    o.nodes = c.nodes;
    o.params = topo::Params::fromSettings(config::Settings());
    std::deque<topo::SimulatedNode> nodes;
    std::vector<RankInput> inputs;
    {
      test::LogCapture quiet(log::Level::kWarn);
      for (int n = 0; n < c.nodes; ++n) {
        auto node = topo::simulateNode(*topo, n, o);
        ASSERT_TRUE(node.isOk()) << node.status().toString();
        nodes.push_back(std::move(*node));
        Status s = addRanks(inputs, graphSet(nodes.back().graphs, false, false), topo::minCompCap(nodes.back().system));
        ASSERT_TRUE(s.isOk()) << s.toString();
      }
    }
    auto conn = connectRanks(inputs, ConnectOptions::fromParams(o.params));
    ASSERT_TRUE(conn.isOk()) << conn.status().toString();
    test::LogCapture capture(log::Level::kInfo, log::kAll, log::Prefix::kRank);
    for (int r = 0; r < conn->nRanks; ++r) logRank(*conn, r);
    for (int r = 0; r < conn->nRanks; ++r) {
      auto expected = connectPhase(test::rankLines(c.log, r));
      auto actual = linesOfRank(capture.lines(), r);
      EXPECT_FALSE(expected.empty()) << "rank " << r;
      EXPECT_EQ(test::diffLines(expected, actual), "") << "rank " << r;
    }
  }
}

}  // namespace
}  // namespace weft::connect
