// The postset's rules one at a time, on small synthetic communicators: log line formats,
// cross-NIC ring alternation, channel doubling and limits, CollNet and NVLS links, and the
// errors for inputs that do not make a communicator.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/connect/collnet.h"
#include "core/connect/connect.h"
#include "core/connect/log_lines.h"
#include "core/connect/nvls.h"
#include "core/connect/rings.h"
#include "core/config/settings.h"
#include "core/topo/params.h"
#include "tests/support/log_capture.h"
#include "tests/unit/connect_synthetic.h"

namespace weft::connect {
namespace {

using testing::Synthetic;
using testing::SyntheticSpec;

class Postset : public test::WeftTest {};

Connection connectOrDie(const std::vector<RankInput>& inputs, const ConnectOptions& o = ConnectOptions()) {
  auto conn = connectRanks(inputs, o);
  EXPECT_TRUE(conn.isOk()) << conn.status().toString();
  return conn.isOk() ? std::move(*conn) : Connection();
}

SyntheticSpec inOrder(int nodes, int gpus, int channels) {
  SyntheticSpec s;
  s.nodes = nodes;
  s.gpus = gpus;
  s.channels = channels;
  s.shuffle = false;
  return s;
}

std::string expectedChannelLine(int c, int nChannels, int nRanks, int shown) {
  std::string line = "Channel " + std::string(c < 10 ? "0" : "") + std::to_string(c) + "/" +
                     std::string(nChannels < 10 ? "0" : "") + std::to_string(nChannels) + " :";
  int width = static_cast<int>(std::to_string(nRanks - 1).size());
  char buf[32];
  for (int r = 0; r < shown; ++r) {
    std::snprintf(buf, sizeof(buf), " %*d", width, r);
    line += buf;
  }
  return line;
}

TEST_F(Postset, ChannelLineEndsWithDotsWhenItReaches128Characters) {
  Synthetic syn(inOrder(1, 100, 1));
  Connection conn = connectOrDie(syn.inputs());
  std::string line = channelLine(conn, 0);
  EXPECT_EQ(line.size(), 127u);
  EXPECT_EQ(line, expectedChannelLine(0, 2, 100, 40).substr(0, 124) + "...");
}

TEST_F(Postset, ChannelLineThatFillsExactly127CharactersHasNoDots) {
  // 15 characters of prefix and 28 ranks of " %3d": 127 characters, and NCCL stops there.
  Synthetic syn(inOrder(25, 8, 1));
  Connection conn = connectOrDie(syn.inputs());
  EXPECT_EQ(channelLine(conn, 1), expectedChannelLine(1, 2, 200, 28));
}

TEST_F(Postset, TreesLineIsCutAt1022CharactersAfterTrees) {
  Synthetic syn(inOrder(2, 8, 4));
  ConnectOptions o;
  o.minChannels = 64;
  Connection conn = connectOrDie(syn.inputs(), o);
  ASSERT_EQ(conn.nChannels, 64);
  std::string line = treesLine(conn, 9);
  EXPECT_EQ(line.size(), 5u + 1022u);
  EXPECT_EQ(line.substr(0, 40), "Trees [0] 10/-1/-1->9->8 [1] 10/-1/-1->9");
}

TEST_F(Postset, RingLineShowsPrevRankNext) {
  Synthetic syn(inOrder(2, 2, 1));
  Connection conn = connectOrDie(syn.inputs());
  EXPECT_EQ(ringLine(conn, 0, 0), "Ring 00 : 3 -> 0 -> 1");
  EXPECT_EQ(ringLine(conn, 3, 1), "Ring 01 : 2 -> 3 -> 0");
}

// Two nodes of two GPUs whose two channels run in opposite directions.
Synthetic crossNicPair(int crossNic) {
  SyntheticSpec s = inOrder(2, 2, 2);
  s.crossNic = crossNic;
  Synthetic syn(s);
  for (testing::SyntheticNode& n : syn.nodes()) {
    std::swap(n.ring.rank(1, 0), n.ring.rank(1, 1));
  }
  return syn;
}

TEST_F(Postset, CrossNicRingsSwapChannelPairsOnOddNodes) {
  Synthetic plain = crossNicPair(0);
  Connection a = connectOrDie(plain.inputs());
  EXPECT_EQ(a.ringNextOf(0, 1), 2);  // node 1 enters channel 0 at rank 2
  Synthetic alternating = crossNicPair(2);
  Connection b = connectOrDie(alternating.inputs());
  EXPECT_EQ(b.ringNextOf(0, 1), 3);  // node 1 uses its channel-1 order in channel 0
  EXPECT_EQ(b.ringNextOf(0, 3), 2);
  EXPECT_EQ(a.ringNextOf(1, 0), 3);  // channel 1: node 0 ends at rank 0, node 1 starts at 3 ...
  EXPECT_EQ(b.ringNextOf(1, 0), 2);  // ... or at 2 when it alternates
  Synthetic allowed = crossNicPair(1);  // crossNic 1 does not alternate
  EXPECT_EQ(connectOrDie(allowed.inputs()).ringNextOf(0, 1), 2);
}

int channelsWith(int nodes, int channels, int compCap, float ringBwIntra) {
  SyntheticSpec s = inOrder(nodes, 8, channels);
  s.compCap = compCap;
  s.ringBwIntra = ringBwIntra;
  Synthetic syn(s);
  return connectOrDie(syn.inputs()).nChannels;
}

TEST_F(Postset, Sm90DoublesChannelsAcrossNodesWhenNvlinkIsFast) {
  EXPECT_EQ(channelsWith(2, 4, 90, 48), 16);
  EXPECT_EQ(channelsWith(2, 4, 100, 48), 16);
  EXPECT_EQ(channelsWith(2, 4, 80, 48), 8);   // before Hopper
  EXPECT_EQ(channelsWith(1, 4, 90, 48), 8);   // one node
  EXPECT_EQ(channelsWith(2, 4, 90, 45), 8);   // not above 45 GB/s
  EXPECT_EQ(channelsWith(2, 8, 90, 48), 16);  // already 16
}

TEST_F(Postset, MaxKeepsTheFirstChannelsAndMinRepeatsThem) {
  Synthetic syn([] {
    SyntheticSpec s = inOrder(2, 4, 4);
    s.shuffle = true;
    return s;
  }());
  ConnectOptions o;
  o.maxChannels = 3;
  o.minChannels = 7;
  Connection conn = connectOrDie(syn.inputs(), o);
  ASSERT_EQ(conn.nChannels, 7);
  EXPECT_EQ(conn.source, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
  for (int r = 0; r < conn.nRanks; ++r) {
    EXPECT_EQ(ringLine(conn, r, 4).substr(9), ringLine(conn, r, 1).substr(9));
    EXPECT_EQ(channelOf(conn, r, 6).treeUp, channelOf(conn, r, 0).treeUp);
  }
  ConnectOptions ctas;
  ctas.maxCTAs = 2;
  EXPECT_EQ(connectOrDie(syn.inputs(), ctas).nChannels, 2);
}

// The connect options NCCL's init derives from these settings.
ConnectOptions optionsWith(std::initializer_list<std::pair<const char*, const char*>> values) {
  config::Settings s;
  for (const auto& [k, v] : values) EXPECT_TRUE(s.set(k, v).isOk()) << k;
  return ConnectOptions::fromParams(topo::Params::fromSettings(s));
}

// NCCL_MIN_CTAS / NCCL_MAX_CTAS reach the postset as NCCL's init sets config.minCTAs/maxCTAs:
// values of 0 or less leave the defaults (1, 64), larger ones are capped at 64, and a minimum
// above the maximum is lowered to it.
TEST_F(Postset, CtaSettingsFollowNcclsConfigRules) {
  auto ctas = [](const ConnectOptions& o) { return std::pair<int, int>{o.minCTAs, o.maxCTAs}; };
  EXPECT_EQ(ctas(optionsWith({})), (std::pair<int, int>{1, 64}));
  EXPECT_EQ(ctas(optionsWith({{"NCCL_MIN_CTAS", "16"}})), (std::pair<int, int>{16, 64}));
  EXPECT_EQ(ctas(optionsWith({{"NCCL_MAX_CTAS", "4"}})), (std::pair<int, int>{1, 4}));
  EXPECT_EQ(ctas(optionsWith({{"NCCL_MIN_CTAS", "4"}, {"NCCL_MAX_CTAS", "2"}})), (std::pair<int, int>{2, 2}));
  EXPECT_EQ(ctas(optionsWith({{"NCCL_MIN_CTAS", "0"}, {"NCCL_MAX_CTAS", "-1"}})), (std::pair<int, int>{1, 64}));
  EXPECT_EQ(ctas(optionsWith({{"NCCL_MIN_CTAS", "100"}, {"NCCL_MAX_CTAS", "200"}})), (std::pair<int, int>{64, 64}));
  // And they bound the channels: 4 searched channels, at most 3 or at least 10 of them.
  Synthetic syn(inOrder(2, 4, 4));
  EXPECT_EQ(connectOrDie(syn.inputs(), optionsWith({{"NCCL_MAX_CTAS", "3"}})).nChannels, 3);
  EXPECT_EQ(connectOrDie(syn.inputs(), optionsWith({{"NCCL_MIN_CTAS", "10"}})).nChannels, 10);
}

// NCCL_COLLNET_NODE_THRESHOLD reaches the CollNet setup (NCCL: fewer nodes turn CollNet off).
TEST_F(Postset, CollnetNodeThresholdComesFromTheSettings) {
  EXPECT_EQ(ConnectOptions::fromParams(topo::Params::fromSettings(config::Settings())).collnetNodeThreshold, 2);
  config::Settings s;
  ASSERT_TRUE(s.set("NCCL_COLLNET_NODE_THRESHOLD", "4").isOk());
  EXPECT_EQ(ConnectOptions::fromParams(topo::Params::fromSettings(s)).collnetNodeThreshold, 4);
}

// NCCL_NVLS_NCHANNELS sets config.nvlsCTAs, which replaces the generation's NVLS channel count
// (16 before sm100; 24 on one sm100 node, 32 across nodes); 0 or less is ignored; the CTAs bound it.
TEST_F(Postset, NvlsChannelsFollowNcclsNvlsInit) {
  EXPECT_EQ(defaultNvlsChannels(90, true, optionsWith({})), 16);
  EXPECT_EQ(defaultNvlsChannels(100, false, optionsWith({})), 24);
  EXPECT_EQ(defaultNvlsChannels(100, true, optionsWith({})), 32);
  EXPECT_EQ(defaultNvlsChannels(90, false, optionsWith({{"NCCL_NVLS_NCHANNELS", "5"}})), 5);
  EXPECT_EQ(defaultNvlsChannels(100, true, optionsWith({{"NCCL_NVLS_NCHANNELS", "1"}})), 1);
  EXPECT_EQ(defaultNvlsChannels(100, true, optionsWith({{"NCCL_NVLS_NCHANNELS", "0"}})), 32);
  EXPECT_EQ(defaultNvlsChannels(90, true, optionsWith({{"NCCL_NVLS_NCHANNELS", "-3"}})), 16);
  EXPECT_EQ(defaultNvlsChannels(90, true, optionsWith({{"NCCL_NVLS_NCHANNELS", "3"}, {"NCCL_MIN_CTAS", "5"}})), 5);
  EXPECT_EQ(defaultNvlsChannels(90, true, optionsWith({{"NCCL_MAX_CTAS", "4"}})), 4);
}

TEST_F(Postset, EveryRankLogsInNcclOrder) {
  Synthetic syn(inOrder(2, 2, 1));
  Connection conn = connectOrDie(syn.inputs());
  std::vector<std::string> texts;
  for (const LogLine& l : rankLogLines(conn, 0)) texts.push_back(l.text);
  EXPECT_EQ(texts, (std::vector<std::string>{
                       "Tree 0 : -1 -> 0 -> 1/2/-1", "Tree 1 : 2 -> 0 -> 1/-1/-1", "Channel 00/02 : 0 1 2 3",
                       "Channel 01/02 : 0 1 2 3", "Ring 00 : 3 -> 0 -> 1", "Ring 01 : 3 -> 0 -> 1",
                       "Trees [0] 1/2/-1->0->-1 [1] 1/-1/-1->0->2"}));
  // In a balanced tree over three GPUs, the third is neither a node's tree end nor rank 0.
  Synthetic three(inOrder(2, 3, 1));
  std::vector<LogLine> rank2 = rankLogLines(connectOrDie(three.inputs()), 2);
  ASSERT_EQ(rank2.size(), 3u);
  EXPECT_EQ(rank2[0].text, "Ring 00 : 1 -> 2 -> 3");
  EXPECT_EQ(rank2[0].subsys, log::kGraph);
  EXPECT_EQ(rank2[2].subsys, log::kInit);
}

// One rank per node with a balanced tree (CPU endpoints): the child-side rank index 1 reads
// past the one-GPU channel, as NCCL reads its flat array, and in the last channel past the
// channels the graph holds: rank 0, which then takes children for other nodes. NCCL's links:
// tree 0 of channel 1 over 3 nodes hangs node 2 (from node 0's second child slot) and node 1
// (from node 2's first child slot, read as rank 0) below rank 0.
TEST_F(Postset, OneRankPerNodeBalancedTree_ReadsPastTheChannelAsNccl) {
  Synthetic syn(inOrder(3, 1, 2));
  Connection conn = connectOrDie(syn.inputs());
  EXPECT_EQ(channelOf(conn, 0, 1).treeDown, (std::array<int, kMaxTreeArity>{2, 1, -1}));
  EXPECT_EQ(channelOf(conn, 1, 1).treeUp, 0);
  EXPECT_EQ(channelOf(conn, 2, 1).treeUp, 0);
  EXPECT_EQ(channelOf(conn, 0, 0).treeDown, (std::array<int, kMaxTreeArity>{2, -1, -1}));
}

TEST_F(Postset, RankMissingFromItsRingIsAnError) {
  Synthetic syn(inOrder(1, 2, 1));
  topo::Graph& ring = syn.nodes()[0].ring;
  std::vector<RankInput> inputs = syn.inputs();
  ring.rank(0, 1) = 0;  // rank 1 vanishes from channel 0
  auto conn = connectRanks(inputs, ConnectOptions());
  ASSERT_FALSE(conn.isOk());
  EXPECT_NE(conn.status().message().find("rank 1 is not in channel 0 of its node's ring graph"), std::string::npos);
}

TEST_F(Postset, RanksWithoutNodeOrWithTwoNodesAreErrors) {
  Synthetic syn(inOrder(2, 2, 1));
  std::vector<RankInput> inputs = syn.inputs();
  GraphSet again;
  again.ring = &syn.nodes()[0].ring;
  again.tree = &syn.nodes()[0].tree;
  Status twice = addRanks(inputs, again, 80);
  EXPECT_NE(twice.message().find("rank 0 belongs to two nodes"), std::string::npos);
  inputs.resize(6);
  auto conn = connectRanks(inputs, ConnectOptions());
  ASSERT_FALSE(conn.isOk());
  EXPECT_NE(conn.status().message().find("rank 4 has no graphs"), std::string::npos);
}

TEST_F(Postset, RingCheckNamesTheRingAndTheRank) {
  Synthetic syn(inOrder(1, 4, 1));
  Connection conn = connectOrDie(syn.inputs());
  std::vector<uint8_t> seen;
  EXPECT_TRUE(checkRing(conn, 0, seen).isOk());
  conn.ringNext[1] = 0;  // 0 -> 1 -> 0: ranks 2 and 3 are left out
  EXPECT_EQ(checkRing(conn, 0, seen).message(), "Error : ring 0 does not contain rank 2");
  conn.ringNext[1] = 3;  // 0 -> 1 -> 3 -> 0 -> 1: after 4 steps at rank 1, not back at 0
  EXPECT_EQ(checkRing(conn, 0, seen).message(), "Error : ring 0 does not loop back to start (1 != 0)");
}

}  // namespace
}  // namespace weft::connect
