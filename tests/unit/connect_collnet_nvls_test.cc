// CollNet and NVLS links after the exchange, on two nodes of four GPUs.
#include <gtest/gtest.h>

#include <deque>

#include "core/connect/collnet.h"
#include "core/connect/connect.h"
#include "core/connect/log_lines.h"
#include "core/connect/nvls.h"
#include "tests/support/log_capture.h"

namespace weft::connect {
namespace {

topo::Graph makeGraph(topo::Pattern p, const std::vector<std::vector<int>>& channels, int shift) {
  topo::Graph g;
  g.resize(static_cast<int>(channels[0].size()));
  g.pattern = p;
  g.nChannels = static_cast<int>(channels.size());
  g.bwIntra = 20;
  g.bwInter = 10;
  for (size_t c = 0; c < channels.size(); ++c)
    for (size_t i = 0; i < channels[c].size(); ++i) g.rank(static_cast<int>(c), static_cast<int>(i)) = channels[c][i] + shift;
  return g;
}

struct Node {
  topo::Graph ring, tree, chain, direct, nvls;
};

// Nodes of 4 GPUs: rings and trees in order, CollNet direct heads 0 and 1, NVLS heads 0 and 1.
class CollnetNvls : public test::WeftTest {
 protected:
  std::vector<RankInput> inputs(int nodes) {
    std::vector<RankInput> out;
    for (int n = 0; n < nodes; ++n) {
      int s = 4 * n;
      Node& node = nodes_.emplace_back();
      node.ring = makeGraph(topo::Pattern::kRing, {{0, 1, 2, 3}, {0, 1, 2, 3}}, s);
      node.tree = makeGraph(topo::Pattern::kBalancedTree, {{0, 1, 2, 3}, {0, 1, 2, 3}}, s);
      node.chain = makeGraph(topo::Pattern::kTree, {{0, 1, 2, 3}, {0, 1, 2, 3}}, s);
      node.direct = makeGraph(topo::Pattern::kCollnetDirect, {{0, 1, 2, 3}, {1, 2, 3, 0}}, s);
      node.nvls = makeGraph(topo::Pattern::kNvls, {{0, 1, 2, 3}, {1, 2, 3, 0}}, s);
      GraphSet gs{&node.ring, &node.tree, &node.chain, &node.direct, &node.nvls, 0};
      EXPECT_TRUE(addRanks(out, gs, 90).isOk());
    }
    return out;
  }
  static ConnectOptions withCollnetAndNvls() {
    ConnectOptions o;
    o.collnet = true;
    o.nvls = true;
    return o;
  }

 private:
  std::deque<Node> nodes_;
};

TEST_F(CollnetNvls, CollnetAddsChannelsAndLinksChainsAndHeads) {
  auto conn = connectRanks(inputs(2), withCollnetAndNvls());
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  EXPECT_TRUE(conn->collnet);
  // 2 connected channels, doubled for the two trees, then half again for CollNet (20 > 10 GB/s).
  EXPECT_EQ(conn->nChannels, 6);
  EXPECT_EQ(channelOf(*conn, 0, 5).chainUp, 8);  // the chain head talks to the CollNet root
  EXPECT_EQ(channelOf(*conn, 0, 5).chainDown, 1);
  EXPECT_EQ(channelOf(*conn, 3, 0).chainUp, 2);
  EXPECT_EQ(channelOf(*conn, 3, 0).chainDepth, 4);

  CollnetDirect head1 = collnetDirectOf(*conn, 5);
  EXPECT_EQ(head1.headRank, 1);
  EXPECT_EQ(head1.down, (std::vector<int>{6, 7, 4}));
  EXPECT_EQ(head1.up, (std::vector<int>{4}));
  EXPECT_EQ(head1.heads, (std::vector<int>{5, 4}));
  EXPECT_EQ(head1.shift, 1);
  EXPECT_EQ(head1.out, 8);
  CollnetDirect leaf = collnetDirectOf(*conn, 2);
  EXPECT_EQ(leaf.headRank, -1);
  EXPECT_EQ(leaf.up, (std::vector<int>{0, 1}));
  EXPECT_EQ(leaf.depth, 2);
  EXPECT_EQ(collnetDirectLine(*conn, 0, 3),
            "CollNetDirect channel 3 rank 0 down  1  2  3 nDown 3 up  1 heads  0  1 nUp 1 nHeads 2 headRank 0 out 8 shift 0");
  EXPECT_EQ(collnetDirectLine(*conn, 2, 0), "CollNetDirect channel 0 rank 2 up  0  1 heads  0  1 nUp 2 nHeads 2 headRank -1 out -1 shift 0");
}

TEST_F(CollnetNvls, CollnetBelowTheNodeThresholdIsOffAndSaysSo) {
  auto conn = connectRanks(inputs(1), withCollnetAndNvls());
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  EXPECT_FALSE(conn->collnet);
  EXPECT_EQ(conn->nChannels, 4);
  ASSERT_FALSE(rankLogLines(*conn, 0).empty());
  EXPECT_EQ(rankLogLines(*conn, 0)[0].text,
            "Communicator has 1 nodes which is less than CollNet node threshold 2, disabling CollNet");
}

TEST_F(CollnetNvls, NvlsHeadsFormTreesAcrossNodes) {
  auto conn = connectRanks(inputs(2), withCollnetAndNvls());
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  EXPECT_EQ(conn->nvlsChannels, 16);
  EXPECT_EQ(nvlsHeadLines(*conn), (std::vector<std::string>{"NVLS Head  0:  0  4", "NVLS Head  1:  1  5"}));
  NvlsLinks l = nvlsOf(*conn, 0, 0);
  EXPECT_EQ(l.headRank, 0);
  EXPECT_EQ(l.up, (std::vector<int>{9, 10}));  // heads are numbered after the ranks and the CollNet root
  EXPECT_EQ(l.out, 8);                          // CollNet is on and rank 0 is a head
  EXPECT_EQ(nvlsTreesLine(*conn, 0), "NVLS Trees : 9/4/-1->0->-1 9/-1/-1->0->4");
  EXPECT_EQ(nvlsTreesLine(*conn, 5), "NVLS Trees : 10/-1/-1->5->1 10/1/-1->5->-1");
  EXPECT_EQ(nvlsTreesLine(*conn, 2), "NVLS Trees : 8/-1/-1->2->-1 8/-1/-1->2->-1");
}

TEST_F(CollnetNvls, NvlsOffWithoutSupport) {
  auto conn = connectRanks(inputs(2), ConnectOptions());
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  EXPECT_EQ(conn->nvlsChannels, 0);
  EXPECT_FALSE(conn->collnet);
  EXPECT_TRUE(nvlsHeadLines(*conn).empty());
  EXPECT_EQ(channelOf(*conn, 0, 0).chainUp, -1);
}

TEST(NvlsChannels, DependOnTheGpuGenerationAndTheHosts) {
  ConnectOptions o;
  EXPECT_EQ(defaultNvlsChannels(90, true, o), 16);
  EXPECT_EQ(defaultNvlsChannels(100, true, o), 32);
  EXPECT_EQ(defaultNvlsChannels(100, false, o), 24);
  o.maxCTAs = 8;
  EXPECT_EQ(defaultNvlsChannels(90, true, o), 8);
  o.minCTAs = o.maxCTAs = 20;
  EXPECT_EQ(defaultNvlsChannels(90, true, o), 20);
}

}  // namespace
}  // namespace weft::connect
