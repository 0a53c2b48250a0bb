// Real NCCL logs recorded on corpus machines (../shared/corpus/nccl-logs), compared with weft
// where the comparison means something. These runs used older NCCL versions on live machines,
// so each test says what differs between versions and compares only what did not change.
#include <gtest/gtest.h>

#include <fstream>
#include <cctype>

#include "core/topo/offline.h"
#include "tests/support/corpus.h"
#include "tests/support/log_capture.h"
#include "tests/support/reference.h"

namespace weft::topo {
namespace {

// The INFO payloads of `rank` in a raw NCCL log ("host:pid:tid [rank] NCCL INFO payload").
std::vector<std::string> logLines(const std::filesystem::path& file, int rank) {
  std::vector<std::string> out;
  std::ifstream in(file);
  std::string line, tag = "[" + std::to_string(rank) + "] NCCL INFO ";
  while (std::getline(in, line)) {
    size_t at = line.find(tag);
    if (at != std::string::npos) out.push_back(line.substr(at + tag.size()));
  }
  return out;
}

std::vector<std::string> startingWith(const std::vector<std::string>& lines, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& l : lines)
    if (l.rfind(prefix, 0) == 0) out.push_back(l);
  return out;
}

// Older NCCL printed graph channels with ranks ("GPU/3") and NETs without the host index
// ("NET/2"); weft prints 2.28's bus-id form. Rewrites a weft channel line into the old form.
std::string oldChannelForm(const std::string& line, const System& s) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    if (line.compare(i, 6, "GPU/0-") == 0 || line.compare(i, 6, "NET/0-") == 0) {
      size_t end = i + 6;
      while (end < line.size() && std::isxdigit(static_cast<unsigned char>(line[end]))) ++end;
      int64_t local = std::stoll(line.substr(i + 6, end - i - 6), nullptr, 16);
      if (line[i] == 'G') {
        for (const Node& g : s.nodes(NodeType::kGpu))
          if (localIdOf(g.id) == local) out += "GPU/" + std::to_string(g.gpu.rank);
      } else {
        out += "NET/" + std::to_string(local);
      }
      i = end;
      continue;
    }
    out += line[i++];
  }
  return out;
}

std::vector<std::string> weftGraphLines(const TopoXml& topo, const OfflineOptions& o, int node, SimulatedNode* out) {
  test::LogCapture capture(log::Level::kInfo, log::kGraph, log::Prefix::kRank);
  auto n = simulateNode(topo, node, o);
  EXPECT_TRUE(n.isOk()) << n.status().toString();
  std::vector<std::string> lines;
  std::string prefix = "[" + std::to_string(n->firstRank) + "] NCCL INFO ";
  bool inGraph = false;
  for (const std::string& l : capture.lines()) {
    std::string p = l.substr(prefix.size());
    if (p.rfind("Pattern ", 0) == 0) inGraph = true;
    if (inGraph) lines.push_back(oldChannelForm(p, n->system));
  }
  *out = std::move(*n);
  return lines;
}

// NCCL 2.21.5, 3 PCIe GPUs, NCCL_P2P_LEVEL=LOC and NCCL_SHM_DISABLE=1: every GPU is trimmed to
// a node of its own and reaches the network through 5 socket NICs. Unchanged since 2.21: the
// trimming, the socket NICs' bandwidths and the graphs (3 channels on NET/2,3,4). Changed: the
// system block's id format (2.28 adds the host index and the coll flag).
TEST(NcclLogs, SimCsl3GpuP2pLocShmOffGraphsMatchNccl2_21) {
  WEFT_REQUIRE_CORPUS();
  auto topo = TopoXml::load((test::corpusDir() / "topologies/cuiboyuan-nccl_miner/sim_csl_3_gpu.xml").string());
  ASSERT_TRUE(topo.isOk());
  config::Settings s;
  ASSERT_TRUE(s.set("NCCL_P2P_LEVEL", "LOC").isOk());
  ASSERT_TRUE(s.set("NCCL_SHM_DISABLE", "1").isOk());
  OfflineOptions o;
  o.params = Params::fromSettings(s);
  o.nodes = 1;
  SimulatedNode node;
  auto actual = weftGraphLines(*topo, o, 0, &node);
  EXPECT_EQ(node.system.count(NodeType::kGpu), 1) << "rank 0 keeps only its own GPU";
  EXPECT_TRUE(node.system.inter);
  auto log = logLines(test::corpusDir() / "nccl-logs/cuiboyuan-sim-3gpu-p2pLOC-shmoff.rank0.nccl-2.21.5.txt", 0);
  auto expected = test::block(log, "Pattern 4", "Pattern 3");
  std::vector<std::string> tree = test::block(log, "Pattern 3", "comm ");
  expected.insert(expected.end(), tree.begin() + 1, tree.end() - 1);
  EXPECT_EQ(test::diffLines(expected, actual), "");
}

// NCCL 2.23.4 on a VM with 2 RTX A6000 joined by a 4-link NVLink bridge. Unchanged: NVL[48.0],
// 2 ring channels at 20 GB/s and 2 balanced-tree channels at 40 GB/s, and their GPU orders.
// Changed: the VM's real NIC was socket-only (the topology file lists none), which does not
// enter an intra-node search.
TEST(NcclLogs, A6000NvlinkPairGraphsMatchNccl2_23) {
  WEFT_REQUIRE_CORPUS();
  auto topo =
      TopoXml::load((test::corpusDir() / "topologies/cuiboyuan-nccl_miner/nccl_topo.root-a6000x2-nvlink.xml").string());
  ASSERT_TRUE(topo.isOk());
  OfflineOptions o;
  SimulatedNode node;
  auto actual = weftGraphLines(*topo, o, 0, &node);
  auto log = logLines(test::corpusDir() / "nccl-logs/cuiboyuan-a6000x2-nvlink.rank1.nccl-2.23.4.txt", 1);
  auto expected = test::block(log, "Pattern 4", "comm ");
  expected.pop_back();
  EXPECT_EQ(test::diffLines(expected, actual), "");
  EXPECT_EQ(startingWith(log, "=== System")[0], "=== System : maxBw 48.0 totalBw 48.0 ===");
  EXPECT_FLOAT_EQ(node.system.maxBw, 48.0f);
  EXPECT_FLOAT_EQ(node.system.totalBw, 48.0f);
}

// NCCL 2.18.1, 2 nodes x 8 RTX 3090 over one IB NIC. Unchanged: the system header and tree
// (maxBw 7.0, totalBw 24.0) and the ring order NET/0 GPU 0..7 NET/0. Changed: on the live
// machine NVML reported P2P disabled between the consumer GPUs, so NCCL routed GPU pairs through
// the CPU (PHB paths, bw 4.0 per channel, and a different tree order); offline there is no NVML
// and the PCI switch paths stand (PIX, bw 7.0).
TEST(NcclLogs, PanlichenRtx3090RingOrderMatchesNccl2_18) {
  WEFT_REQUIRE_CORPUS();
  auto topo = TopoXml::load((test::corpusDir() / "topologies/panlichen-nccl-tests/topo.xml").string());
  ASSERT_TRUE(topo.isOk());
  OfflineOptions o;
  o.nodes = 2;
  SimulatedNode node;
  auto actual = weftGraphLines(*topo, o, 0, &node);
  auto log = logLines(test::corpusDir() / "nccl-logs/panlichen-rtx3090x8-2node-ib.oneflow-27.log.txt", 0);
  EXPECT_EQ(startingWith(log, "=== System")[0], "=== System : maxBw 7.0 totalBw 24.0 ===");
  EXPECT_FLOAT_EQ(node.system.maxBw, 7.0f);
  EXPECT_FLOAT_EQ(node.system.totalBw, 24.0f);
  auto ring = test::block(log, "Pattern 4", " 0 :");
  ASSERT_EQ(ring.size(), 2u);
  ASSERT_GE(actual.size(), 2u);
  EXPECT_EQ(actual[1], ring[1]) << "ring channel order";
}

}  // namespace
}  // namespace weft::topo
