// Real NCCL runs from the corpus (../shared/corpus/nccl-logs) whose settings weft can reproduce:
// the connect lines ("Tree", "Channel", "Ring", "Trees") of the ranks in each log equal weft's.
// These logs come from older NCCL versions (2.18.1, 2.21.5, 2.23.4). What differs between those
// versions and 2.28.9 is noted per test; the rings and trees themselves did not change.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

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

bool isConnectLine(const std::string& l) {
  return l.rfind("Tree ", 0) == 0 || l.rfind("Trees", 0) == 0 || l.rfind("Ring ", 0) == 0 ||
         (l.rfind("Channel ", 0) == 0 && l.find(" via ") == std::string::npos && l.find("->") == std::string::npos);
}

// Before NCCL 2.2x the "Channel" lines printed every rank in a wider field; compare the ranks.
std::string squeezeSpaces(const std::string& l) {
  std::string out;
  for (char ch : l)
    if (ch != ' ' || out.empty() || out.back() != ' ') out += ch;
  return out;
}

// The connect lines of `rank` in a log with NCCL's "host:pid:tid [rank] NCCL INFO " prefix, each
// once: some logs repeat the postset's lines of a communicator that was set up twice.
std::vector<std::string> ncclLogLines(const std::filesystem::path& file, int rank) {
  std::string tag = "[" + std::to_string(rank) + "] NCCL INFO ";
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& line : test::splitLines(test::readFile(file))) {
    size_t at = line.find(tag);
    if (line.empty() || line[0] == '#' || at == std::string::npos) continue;
    std::string text = line.substr(at + tag.size());
    if (!isConnectLine(text)) continue;
    if (text.rfind("Channel ", 0) == 0) text = squeezeSpaces(text);
    if (seen.insert(text).second) out.push_back(text);
  }
  return out;
}

std::vector<std::string> weftLines(const Connection& conn, int rank) {
  std::vector<std::string> out;
  for (const LogLine& l : rankLogLines(conn, rank))
    out.push_back(l.text.rfind("Channel ", 0) == 0 ? squeezeSpaces(l.text) : l.text);
  return out;
}

// The offline pipeline on `nodes` copies of a corpus topology with `settings`, then connect.
Result<Connection> connectCorpusTopology(const std::string& topology, const config::Settings& settings, int nodes) {
  WEFT_ASSIGN_OR_RETURN(topo::TopoXml xml, topo::TopoXml::load((test::corpusDir() / "topologies" / topology).string()));
  topo::OfflineOptions o;
  o.nodes = nodes;
  o.params = topo::Params::fromSettings(settings);
  std::vector<topo::SearchCache> caches;
  std::vector<int> compCaps;
  test::LogCapture quiet(log::Level::kWarn);
  for (int n = 0; n < nodes; ++n) {
    WEFT_ASSIGN_OR_RETURN(std::vector<topo::SimulatedNode> domains, topo::simulateDomains(xml, n, o, caches));
    if (n == 0)
      for (const topo::SimulatedNode& d : domains) compCaps.push_back(topo::minCompCap(d.system));
  }
  WEFT_ASSIGN_OR_RETURN(std::vector<RankInput> inputs,
                        offlineInputs(caches, compCaps, topo::gpusPerNode(xml), nodes, false, false));
  return connectRanks(inputs, ConnectOptions::fromParams(o.params));
}

config::Settings p2pAndShmOff() {
  config::Settings s;
  EXPECT_TRUE(s.set("NCCL_P2P_LEVEL", "LOC").isOk());
  EXPECT_TRUE(s.set("NCCL_SHM_DISABLE", "1").isOk());
  return s;
}

void expectRanksMatch(const Connection& conn, const std::string& log, const std::vector<int>& ranks) {
  for (int r : ranks) {
    auto expected = ncclLogLines(test::corpusDir() / "nccl-logs" / log, r);
    EXPECT_FALSE(expected.empty()) << "rank " << r;
    EXPECT_EQ(test::diffLines(expected, weftLines(conn, r)), "") << "rank " << r;
  }
}

// NCCL 2.18.1, 8 processes on one 8x V100 VM with NCCL_P2P_LEVEL=LOC and NCCL_SHM_DISABLE=1:
// each GPU is trimmed to its own "node", so the rings and the 8-node double binary tree go over
// the network. The log has every rank's lines. 2.18.1 printed "Channel" ranks 4 characters wide.
TEST(ConnectNcclLogs, V100x8WithoutP2pAndShmIsAnEightNodeDoubleTree) {
  WEFT_REQUIRE_CORPUS();
  auto conn = connectCorpusTopology("cuiboyuan-nccl_miner/nccl_topo_8_gpu.xml", p2pAndShmOff(), 1);
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  EXPECT_EQ(conn->nNodes, 8);
  expectRanksMatch(*conn, "cuiboyuan-v100x8-lambda-p2pLOC-shmoff.allranks.nccl-2.18.1.txt", {0, 1, 2, 3, 4, 5, 6, 7});
}

// NCCL 2.21.5, 3 single-GPU "nodes" (P2P LOC, SHM off) with three 1.2 GB/s socket NICs: three
// channels (one per NIC), a 3-node tree shifted by one for tree 1. Only rank 0's log is kept.
TEST(ConnectNcclLogs, ThreeGpusWithoutP2pAndShmAreThreeNodes) {
  WEFT_REQUIRE_CORPUS();
  auto conn = connectCorpusTopology("cuiboyuan-nccl_miner/sim_csl_3_gpu.xml", p2pAndShmOff(), 1);
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  EXPECT_EQ(conn->nNodes, 3);
  EXPECT_EQ(conn->nChannels, 6);
  expectRanksMatch(*conn, "cuiboyuan-sim-3gpu-p2pLOC-shmoff.rank0.nccl-2.21.5.txt", {0});
}

// NCCL 2.23.4, 2x RTX A6000 joined by an NVLink bridge, default settings: one node, two ring
// channels doubled to four, trees alternating direction. Only rank 1's log is kept.
TEST(ConnectNcclLogs, A6000PairOverNvlinkBridge) {
  WEFT_REQUIRE_CORPUS();
  auto conn = connectCorpusTopology("cuiboyuan-nccl_miner/nccl_topo.root-a6000x2-nvlink.xml", config::Settings(), 1);
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  expectRanksMatch(*conn, "cuiboyuan-a6000x2-nvlink.rank1.nccl-2.23.4.txt", {1});
}

// Identical-shape nodes of `gpus` GPUs whose ring and tree (pattern TREE) have `channels`
// channels, odd channels running backwards: the graphs a log prints, for logs without topology.
struct LogNodes {
  std::deque<topo::Graph> graphs;
  std::vector<RankInput> inputs;

  LogNodes(int nodes, int gpus, int channels, float ringBw, float treeBw, int crossNic) {
    for (int n = 0; n < nodes; ++n) {
      topo::Graph& ring = graphs.emplace_back();
      topo::Graph& tree = graphs.emplace_back();
      for (topo::Graph* g : {&ring, &tree}) {
        g->resize(gpus);
        g->nChannels = channels;
        g->bwInter = ringBw;
        for (int c = 0; c < channels; ++c)
          for (int i = 0; i < gpus; ++i) g->rank(c, i) = gpus * n + (c % 2 == 0 ? i : gpus - 1 - i);
      }
      ring.bwIntra = ringBw;
      ring.crossNic = crossNic;
      tree.bwIntra = treeBw;
      tree.pattern = topo::Pattern::kTree;
      GraphSet gs;
      gs.ring = &ring;
      gs.tree = &tree;
      EXPECT_TRUE(addRanks(inputs, gs, 90).isOk());
    }
  }
};

// NCCL 2.23.4, 4 ranks on NVSwitch H100-class GPUs with P2P and SHM disabled: 4 single-GPU
// nodes. The host's topology XML is not in the corpus, so each node gets the one-GPU graphs its
// log prints (ring: 1 channel; tree: pattern 3, 1 channel) and only the connect phase is compared.
TEST(ConnectNcclLogs, FourSingleGpuNodesDoubleBinaryTree) {
  WEFT_REQUIRE_CORPUS();
  LogNodes nodes(4, 1, 1, 12, 24, 0);
  auto conn = connectRanks(nodes.inputs, ConnectOptions());
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  expectRanksMatch(*conn, "cuiboyuan-lambda-nvs-4x1gpu-p2poff-shmoff.rank1.nccl-2.23.4.txt", {1});
}

// "Ring 00 : 7 -> 8 -> 9" lines of a log, by the rank they name in the middle: hosts print their
// CUDA device in brackets, which is not the rank on the second host.
std::map<int, std::vector<std::string>> ringLinesByRank(const std::filesystem::path& file) {
  std::map<int, std::vector<std::string>> out;
  const std::string tag = "NCCL INFO ";
  for (const std::string& line : test::splitLines(test::readFile(file))) {
    size_t at = line.find(tag + "Ring ");
    if (at == std::string::npos) continue;
    std::string text = line.substr(at + tag.size());
    size_t arrow = text.find(" -> ");
    int rank = std::atoi(text.c_str() + arrow + 4);
    std::vector<std::string>& lines = out[rank];
    if (std::find(lines.begin(), lines.end(), text) == lines.end()) lines.push_back(text);
  }
  return out;
}

// NCCL 2.18.1, 2 nodes of 8 RTX 3090 over one IB NIC (nccl-tests logs of both hosts): one ring
// channel through GPUs 0..7 of each node, doubled. Only the Ring lines are compared: 2.18.1's
// tree search ordered the GPUs 0..7 where 2.28.9's orders them 4..7, 0..3 (the 2.28.9
// reference log of this topology shows it), so the trees differ by search, not by connect.
TEST(ConnectNcclLogs, RtxPairOfNodesOverIbRings) {
  WEFT_REQUIRE_CORPUS();
  auto conn = connectCorpusTopology("panlichen-nccl-tests/topo.xml", config::Settings(), 2);
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  auto expected = ringLinesByRank(test::corpusDir() / "nccl-logs" / "panlichen-rtx3090x8-2node-ib.oneflow-27.log.txt");
  auto second = ringLinesByRank(test::corpusDir() / "nccl-logs" / "panlichen-rtx3090x8-2node-ib.oneflow-25.log.txt");
  expected.insert(second.begin(), second.end());
  ASSERT_EQ(expected.size(), 16u);
  for (const auto& [rank, lines] : expected) {
    std::vector<std::string> actual;
    for (int c = 0; c < conn->nChannels; ++c) actual.push_back(ringLine(*conn, rank, c));
    EXPECT_EQ(test::diffLines(lines, actual), "") << "rank " << rank;
  }
}

// The rank a connect line is about, read from the line: "a -> RANK -> b" or "d/d/d->RANK->u".
int rankInLine(const std::string& text) {
  size_t at = text.rfind("Trees", 0) == 0 ? text.find("->") + 2 : text.find(" -> ") + 4;
  return std::atoi(text.c_str() + at);
}

// NCCL issue #1189 (early 2024, NCCL 2.19/2.20): 2 hosts of 2 H20 (sm90) GPUs, 4 ring channels
// alternating direction, crossNic 1, bwIntra 24 (below the sm90 doubling threshold), so 8
// channels. Version difference: NCCL of that time swapped channel pairs on odd nodes whenever
// the ring graph had crossNic set; 2.28.9 does it only for ranks whose ring search ended with
// crossNic 2. The log shows the swap, so the rings here say crossNic 2 to get the same rule.
// The log survives only in fragments, in an unknown order and without the tree graph: the tree
// channels are taken equal to the ring channels with pattern TREE (what the search gives sm90
// GPUs), and every fragment line must be among weft's lines for its rank.
TEST(ConnectNcclLogs, H20PairOfNodesFromIssueFragments) {
  WEFT_REQUIRE_CORPUS();
  LogNodes nodes(2, 2, 4, 24, 24, 2);
  auto conn = connectRanks(nodes.inputs, ConnectOptions());
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  EXPECT_EQ(conn->nChannels, 8);
  int compared = 0;
  const std::string tag = "NCCL INFO ";
  auto file = test::corpusDir() / "nccl-logs" / "issue-nvidia-nccl-1189-h20-2nodes-x2gpu.FRAGMENTS.txt";
  for (const std::string& line : test::splitLines(test::readFile(file))) {
    size_t at = line.find(tag);
    if (line.empty() || line[0] == '#' || at == std::string::npos) continue;
    std::string text = line.substr(at + tag.size());
    if (!isConnectLine(text) || text.rfind("Channel ", 0) == 0) continue;
    std::vector<std::string> mine = weftLines(*conn, rankInLine(text));
    EXPECT_NE(std::find(mine.begin(), mine.end(), text), mine.end()) << text;
    ++compared;
  }
  EXPECT_GE(compared, 12);
}

}  // namespace
}  // namespace weft::connect
