// Every reference case through the offline pipeline: for each node, the lines NCCL 2.28.9 printed
// on the node's first rank before the connect phase (system block with its maxBw/totalBw header,
// path lines, GPU Direct RDMA lines, graphs) equal weft's, and node 0's graph dump equals NCCL's.
#include <gtest/gtest.h>

#include "core/topo/offline.h"
#include "tests/support/corpus.h"
#include "tests/support/log_capture.h"
#include "tests/support/reference.h"

namespace weft::topo {
namespace {

using test::linesOfRank;

bool isConnectLine(const std::string& l) {
  return l.rfind("Tree ", 0) == 0 || l.rfind("Trees", 0) == 0 || l.rfind("Channel ", 0) == 0 || l.rfind("Ring ", 0) == 0;
}

// The reference lines of `rank` from the topology load to the connect phase. The harness that
// produced them read the file once more on rank 0 before "Loading topology file": skipped.
std::vector<std::string> searchPhase(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("Loading topology file", 0) == 0) start = i + 1;
  for (size_t i = start; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (isConnectLine(l)) break;
    if (l.rfind("Loading ", 0) == 0) continue;
    out.push_back(l);
  }
  return out;
}

class SearchGolden : public ::testing::TestWithParam<std::string> {};

TEST(SearchGoldenCorpus, HasReferenceCases) {
  WEFT_REQUIRE_CORPUS();
  EXPECT_GE(test::referenceCases().size(), 12u);
}

TEST(SearchGoldenCorpus, EveryCaseMatchesNccl) {
  WEFT_REQUIRE_CORPUS();
  for (const test::ReferenceCase& c : test::referenceCases()) {
    SCOPED_TRACE(c.name);
    auto topo = TopoXml::load(c.topology.string());
    ASSERT_TRUE(topo.isOk()) << topo.status().toString();
    OfflineOptions o;
    o.nodes = c.nodes;
    o.params = Params::fromSettings(config::Settings());
    for (int n = 0; n < c.nodes; ++n) {
      test::LogCapture capture(log::Level::kInfo, log::kGraph, log::Prefix::kRank);
      auto node = simulateNode(*topo, n, o);
      ASSERT_TRUE(node.isOk()) << node.status().toString();
      auto expected = searchPhase(test::rankLines(c.log, node->firstRank));
      auto actual = linesOfRank(capture.lines(), node->firstRank);
      EXPECT_EQ(test::diffLines(expected, actual), "") << "node " << n << " (rank " << node->firstRank << ")";
      if (n != 0) continue;
      auto xml = graphsToXml(node->system, node->graphs.dumpOrder());
      ASSERT_TRUE(xml.isOk()) << xml.status().toString();
      auto ref = TopoXml::load(c.graphXml.string());
      ASSERT_TRUE(ref.isOk()) << ref.status().toString();
      EXPECT_EQ(test::diffLines(test::splitLines(ref->toString()), test::splitLines(xml->toString())), "")
          << "graph dump";
    }
  }
}

}  // namespace
}  // namespace weft::topo
