// Search behaviour under each setting and for every pattern, on the bundled example topology
// (no corpus needed) and on corpus machines. The expected facts follow from NCCL's rules; the
// golden tests cover the default settings against NCCL's own output.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/base/strings.h"
#include "core/topo/offline.h"
#include "core/topo/paths.h"
#include "core/topo/search.h"
#include "core/topo/system_build.h"
#include "core/topo/system_print.h"
#include "tests/support/corpus.h"
#include "tests/support/log_capture.h"

namespace weft::topo {
namespace {

std::string exampleTopology() { return std::string(WEFT_SOURCE_DIR) + "/examples/topologies/hgx-h100-8gpu.xml"; }

TopoXml loadOrDie(const std::string& path) {
  auto xml = TopoXml::load(path);
  EXPECT_TRUE(xml.isOk()) << xml.status().toString();
  return xml.isOk() ? std::move(*xml) : TopoXml();
}

Params paramsWith(std::initializer_list<std::pair<const char*, const char*>> values) {
  config::Settings s;
  for (const auto& [k, v] : values) EXPECT_TRUE(s.set(k, v).isOk()) << k;
  return Params::fromSettings(s);
}

SimulatedNode run(const TopoXml& topo, int nodes, const Params& params, bool collnet = false, bool nvls = false) {
  OfflineOptions o;
  o.nodes = nodes;
  o.params = params;
  o.collnet = collnet;
  o.nvls = nvls;
  auto node = simulateNode(topo, 0, o);
  EXPECT_TRUE(node.isOk()) << node.status().toString();
  return node.isOk() ? std::move(*node) : SimulatedNode{};
}

// Every channel of a ring or tree holds each of the node's ranks exactly once.
void expectPermutations(const System& s, const Graph& g) {
  for (int c = 0; c < g.nChannels; ++c) {
    std::set<int> ranks;
    for (int i = 0; i < g.ngpus; ++i) ranks.insert(g.rank(c, i));
    EXPECT_EQ(static_cast<int>(ranks.size()), s.count(NodeType::kGpu)) << "channel " << c;
  }
}

const NetInfo& netOf(const System& s, int64_t id) { return s.node(NodeType::kNet, s.find(NodeType::kNet, id)).net; }

class SearchSettings : public test::WeftTest {};

TEST_F(SearchSettings, DefaultExampleFindsNvlinkRingsThroughLocalNics) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode n = run(topo, 2, Params());
  EXPECT_TRUE(n.system.inter);
  EXPECT_GT(n.graphs.ring.nChannels, 0);
  EXPECT_EQ(n.graphs.ring.typeIntra, val(PathType::kNvl));
  EXPECT_EQ(n.graphs.tree.nChannels, n.graphs.ring.nChannels) << "trees are searched with the ring's channel count";
  expectPermutations(n.system, n.graphs.ring);
  expectPermutations(n.system, n.graphs.tree);
}

TEST_F(SearchSettings, CrossNicZeroKeepsEveryChannelOnOneNicPort) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode n = run(topo, 2, paramsWith({{"NCCL_CROSS_NIC", "0"}}));
  const Graph& ring = n.graphs.ring;
  ASSERT_GT(ring.nChannels, 0);
  EXPECT_EQ(ring.crossNic, 0);
  for (int c = 0; c < ring.nChannels; ++c) {
    const NetInfo& in = netOf(n.system, ring.inter[static_cast<size_t>(2 * c)]);
    const NetInfo& out = netOf(n.system, ring.inter[static_cast<size_t>(2 * c + 1)]);
    EXPECT_EQ(in.asic, out.asic) << "channel " << c;
    EXPECT_EQ(in.port, out.port) << "channel " << c;
  }
}

TEST_F(SearchSettings, CrossNicOneIsReportedAndAllowsDifferentEnds) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode n = run(topo, 2, paramsWith({{"NCCL_CROSS_NIC", "1"}}));
  EXPECT_EQ(n.graphs.ring.crossNic, 1);
  EXPECT_GT(n.graphs.ring.nChannels, 0);
}

TEST_F(SearchSettings, P2pDisableRoutesGpuPairsThroughTheCpu) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode def = run(topo, 1, Params());
  SimulatedNode off = run(topo, 1, paramsWith({{"NCCL_P2P_DISABLE", "1"}}));
  const Path& nvl = def.system.node(NodeType::kGpu, 0).pathTo(NodeType::kGpu, 1);
  const Path& cpu = off.system.node(NodeType::kGpu, 0).pathTo(NodeType::kGpu, 1);
  EXPECT_EQ(nvl.type, PathType::kNvl);
  EXPECT_GE(val(cpu.type), val(PathType::kPhb)) << "P2P disabled: GPU 0 -> GPU 1 goes through host memory";
  EXPECT_GT(cpu.count(), nvl.count());
}

TEST_F(SearchSettings, P2pLevelNamesAndOldIntegersAgree) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode byName = run(topo, 1, paramsWith({{"NCCL_P2P_LEVEL", "LOC"}}));
  SimulatedNode byNumber = run(topo, 1, paramsWith({{"NCCL_P2P_LEVEL", "0"}}));
  EXPECT_EQ(byName.system.node(NodeType::kGpu, 0).pathTo(NodeType::kGpu, 3).type,
            byNumber.system.node(NodeType::kGpu, 0).pathTo(NodeType::kGpu, 3).type);
  EXPECT_GE(val(byName.system.node(NodeType::kGpu, 0).pathTo(NodeType::kGpu, 3).type), val(PathType::kPhb));
}

TEST_F(SearchSettings, GdrLevelLocDisablesGpuDirectAndLogsWhy) {
  TopoXml topo = loadOrDie(exampleTopology());
  test::LogCapture capture(log::Level::kInfo, log::kGraph, log::Prefix::kRank);
  // One node: the NICs stay in the system and get their paths, and the search stays short.
  SimulatedNode n = run(topo, 1, paramsWith({{"NCCL_NET_GDR_LEVEL", "LOC"}}));
  bool disabled = false;
  for (const std::string& l : capture.lines())
    if (l.find("GPU Direct RDMA Disabled for GPU 0 / HCA 0 (distance 4 > 0)") != std::string::npos) disabled = true;
  EXPECT_TRUE(disabled);
  // Without GDR, GPU -> NIC traffic goes through the GPU's CPU.
  EXPECT_GE(val(n.system.node(NodeType::kGpu, 0).pathTo(NodeType::kNet, 0).type), val(PathType::kPhb));
}

TEST_F(SearchSettings, GdrReadIsOnlyAutoForAmpereOrNvlink) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode n = run(topo, 2, Params());
  test::LogCapture capture(log::Level::kInfo, log::kGraph, log::Prefix::kRank);
  auto on = checkGdr(n.system, Params(), 0, n.system.node(NodeType::kNet, 0).id, true);
  ASSERT_TRUE(on.isOk());
  EXPECT_EQ(*on, GdrMode::kDefault) << "sm90 reads are allowed by default";
  auto off = checkGdr(n.system, paramsWith({{"NCCL_NET_GDR_READ", "0"}}), 0, n.system.node(NodeType::kNet, 0).id, true);
  ASSERT_TRUE(off.isOk());
  EXPECT_EQ(*off, GdrMode::kDisable);
}

TEST_F(SearchSettings, PxnDisableRemovesPxnPaths) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode pxn = run(topo, 2, Params());
  SimulatedNode none = run(topo, 2, paramsWith({{"NCCL_PXN_DISABLE", "1"}}));
  // GPU 1 reaches GPU 0's NIC through GPU 0 (NVLink + PCI) with PXN, through the CPU without.
  EXPECT_EQ(pxn.system.node(NodeType::kGpu, 1).pathTo(NodeType::kNet, 0).type, PathType::kPxn);
  EXPECT_NE(none.system.node(NodeType::kGpu, 1).pathTo(NodeType::kNet, 0).type, PathType::kPxn);
  for (const Node& g : none.system.nodes(NodeType::kGpu))
    for (const Path& p : g.paths[idx(NodeType::kNet)]) EXPECT_NE(p.type, PathType::kPxn);
}

TEST_F(SearchSettings, NvbDisableRemovesTwoHopNvlinkPaths) {
  WEFT_REQUIRE_CORPUS();
  // DGX-1V hybrid cube mesh: some GPU pairs are two NVLink hops apart (NVB).
  TopoXml topo = loadOrDie((test::corpusDir() / "topologies/berkeley-blinkplus-dgx1v/topology.xml").string());
  SimulatedNode nvb = run(topo, 1, Params());
  SimulatedNode off = run(topo, 1, paramsWith({{"NCCL_NVB_DISABLE", "1"}}));
  int nvbPaths = 0, after = 0;
  for (int g = 0; g < nvb.system.count(NodeType::kGpu); ++g) {
    for (const Path& p : nvb.system.node(NodeType::kGpu, g).paths[idx(NodeType::kGpu)]) nvbPaths += p.type == PathType::kNvb;
    for (const Path& p : off.system.node(NodeType::kGpu, g).paths[idx(NodeType::kGpu)]) after += p.type == PathType::kNvb;
  }
  EXPECT_GT(nvbPaths, 0);
  EXPECT_EQ(after, 0);
}

TEST_F(SearchSettings, NetDevsPolicyMaxOneGivesEachGpuOneNic) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode n = run(topo, 2, paramsWith({{"NCCL_NETDEVS_POLICY", "MAX:1"}}));
  Params p = paramsWith({{"NCCL_NETDEVS_POLICY", "MAX:1"}});
  for (const Node& g : n.system.nodes(NodeType::kGpu)) {
    int first = localNet(n.system, p, g.gpu.rank, 0);
    for (int c = 1; c < 8; ++c) EXPECT_EQ(localNet(n.system, p, g.gpu.rank, c), first);
  }
}

TEST_F(SearchSettings, GraphFileReplacesTheSearch) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode searched = run(topo, 2, Params());
  auto file = graphsToXml(searched.system, searched.graphs.dumpOrder());
  ASSERT_TRUE(file.isOk());
  test::LogCapture capture(log::Level::kInfo, log::kGraph, log::Prefix::kRank);
  OfflineOptions o;
  o.nodes = 2;
  o.graphFile = &*file;
  auto loaded = simulateNode(topo, 0, o);
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_EQ(loaded->graphs.ring.nChannels, searched.graphs.ring.nChannels);
  EXPECT_EQ(loaded->graphs.ring.intra, searched.graphs.ring.intra);
  bool said = false;
  for (const std::string& l : capture.lines())
    if (l.find("Search 0 : " + std::to_string(searched.graphs.ring.nChannels) + " channels loaded from XML graph") !=
        std::string::npos)
      said = true;
  EXPECT_TRUE(said);
}

TEST_F(SearchSettings, GraphFileCrossNicGraphIsSkippedWhenCrossNicIsOff) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode searched = run(topo, 2, paramsWith({{"NCCL_CROSS_NIC", "1"}}));
  auto file = graphsToXml(searched.system, searched.graphs.dumpOrder());
  ASSERT_TRUE(file.isOk());
  Graph g;
  g.id = kGraphRing;
  g.resize(searched.system.count(NodeType::kGpu));
  auto loaded = graphFromXml(*file, searched.system, /*crossNicSetting=*/0, g);
  ASSERT_TRUE(loaded.isOk());
  EXPECT_EQ(*loaded, 0) << "a crossnic=1 graph is ignored under NCCL_CROSS_NIC=0";
}

TEST_F(SearchSettings, SearchIsDeterministic) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode a = run(topo, 2, Params());
  SimulatedNode b = run(topo, 2, Params());
  EXPECT_EQ(a.graphs.ring.intra, b.graphs.ring.intra);
  EXPECT_EQ(a.graphs.ring.inter, b.graphs.ring.inter);
  EXPECT_EQ(a.graphs.tree.intra, b.graphs.tree.intra);
}

class SearchPatterns : public test::WeftTest {};

TEST_F(SearchPatterns, SplitTreePutsTheNicOnTheFirstTwoGpus) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode n = run(topo, 2, Params());
  Graph g;
  g.id = kGraphTree;
  g.pattern = Pattern::kSplitTree;
  g.minChannels = 1;
  g.maxChannels = kMaxChannels / 2;
  ASSERT_TRUE(computeGraph(n.system, Params(), g).isOk());
  EXPECT_EQ(g.pattern, Pattern::kSplitTree);
  ASSERT_GT(g.nChannels, 0);
  expectPermutations(n.system, g);
}

TEST_F(SearchPatterns, NvlsHeadsAreDistinctGpusNextToTheirNics) {
  TopoXml topo = loadOrDie(exampleTopology());
  SimulatedNode n = run(topo, 2, Params(), false, true);
  const Graph& nvls = n.graphs.nvls;
  ASSERT_GT(nvls.nChannels, 0) << "NVSwitch + sm90: NVLS is searched";
  EXPECT_LE(nvls.nChannels, n.system.count(NodeType::kGpu));
  std::set<int> heads;
  for (int c = 0; c < nvls.nChannels; ++c) heads.insert(nvls.rank(c, 0));
  EXPECT_EQ(static_cast<int>(heads.size()), nvls.nChannels) << "one head per GPU at most";
}

TEST_F(SearchPatterns, NvlsNeedsAnNvswitch) {
  WEFT_REQUIRE_CORPUS();
  TopoXml topo = loadOrDie((test::corpusDir() / "topologies/panlichen-nccl-tests/topo.xml").string());
  SimulatedNode n = run(topo, 2, Params(), false, true);
  EXPECT_EQ(n.graphs.nvls.nChannels, 0);
}

// ncclNvlsInit decides before the search: NCCL_NVLS_ENABLE=0, or a system of two GPUs or fewer,
// means no NVLS graph at all (NCCL does not search it), even on NVSwitch and sm90.
TEST_F(SearchPatterns, NvlsFollowsNcclsNvlsInit) {
  TopoXml topo = loadOrDie(exampleTopology());
  EXPECT_GT(run(topo, 1, paramsWith({{"NCCL_NVLS_ENABLE", "1"}}), false, true).graphs.nvls.nChannels, 0);
  EXPECT_EQ(run(topo, 1, paramsWith({{"NCCL_NVLS_ENABLE", "0"}}), false, true).graphs.nvls.nChannels, 0);
  // The same box with its GPUs of rank 3 and up taken out (each GPU's PCI parent with it).
  auto keepGpus = [&](int keep) {
    TopoXml fewer = topo;
    std::vector<XmlNode*> gpus;
    findAll(*fewer.root(), "gpu", gpus);
    for (XmlNode* g : gpus)
      if (std::atoi(g->get("rank", "0").c_str()) >= keep) g->parent()->parent()->detach(g->parent());
    return fewer;
  };
  SimulatedNode three = run(keepGpus(3), 1, Params(), false, true);
  ASSERT_EQ(three.system.count(NodeType::kGpu), 3);
  EXPECT_GT(three.graphs.nvls.nChannels, 0);
  SimulatedNode two = run(keepGpus(2), 1, Params(), false, true);
  ASSERT_EQ(two.system.count(NodeType::kGpu), 2);
  EXPECT_EQ(two.graphs.nvls.nChannels, 0);
}

TEST_F(SearchPatterns, CollnetUsesOnlyCollNics) {
  WEFT_REQUIRE_CORPUS();
  // H800 box: its ConnectX-7 ports are marked coll="1".
  TopoXml topo = loadOrDie((test::corpusDir() / "topologies/zy-uestc-yccl/topo_h800.xml").string());
  SimulatedNode n = run(topo, 2, Params(), true, false);
  for (const Graph* g : {&n.graphs.collnetChain, &n.graphs.collnetDirect}) {
    ASSERT_GT(g->nChannels, 0) << "graph " << g->id;
    for (int c = 0; c < g->nChannels; ++c)
      EXPECT_EQ(netOf(n.system, g->inter[static_cast<size_t>(2 * c)]).collSupport, 1) << "graph " << g->id;
  }
  EXPECT_EQ(n.graphs.collnetChain.pattern, Pattern::kTree);
  EXPECT_LE(n.graphs.collnetDirect.nChannels, 8) << "CollNet direct: at most 8 heads";
}

TEST_F(SearchPatterns, SingleGpuFallsBackToTree) {
  TopoXml topo = TopoXml::withRoot("system");
  auto parsed = TopoXml::parse(
      "<system version=\"1\">\n"
      "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\">\n"
      "    <pci busid=\"0000:3b:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
      "      <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"/>\n"
      "    </pci>\n"
      "  </cpu>\n"
      "</system>\n",
      "one.xml");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  SimulatedNode n = run(*parsed, 1, Params());
  EXPECT_EQ(n.graphs.tree.pattern, Pattern::kTree) << "with one GPU every non-ring pattern becomes TREE";
  EXPECT_GT(n.graphs.ring.nChannels, 0);
  EXPECT_FLOAT_EQ(n.system.maxBw, kLocBw);
}

TEST_F(SearchPatterns, UnreachableNicsFallBackToSimpleOrder) {
  // A NIC that no GPU reaches (no PCI path) leaves the ring search without a solution.
  auto parsed = TopoXml::parse(
      "<system version=\"1\">\n"
      "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\">\n"
      "    <pci busid=\"0000:3b:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
      "      <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"/>\n"
      "    </pci>\n"
      "    <pci busid=\"0000:3c:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
      "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\"/>\n"
      "    </pci>\n"
      "  </cpu>\n"
      "</system>\n",
      "two.xml");
  ASSERT_TRUE(parsed.isOk());
  test::LogCapture capture(log::Level::kInfo, log::kGraph, log::Prefix::kRank);
  SimulatedNode n = run(*parsed, 2, Params());  // 2 nodes but no NIC: nothing to leave the node through
  EXPECT_EQ(n.graphs.ring.nChannels, 1);
  EXPECT_FLOAT_EQ(n.graphs.ring.bwIntra, 0.1f);
  EXPECT_EQ(n.graphs.ring.typeIntra, val(PathType::kSys));
  bool said = false;
  for (const std::string& l : capture.lines())
    if (l.find("Could not find a path for pattern 4, falling back to simple order") != std::string::npos) said = true;
  EXPECT_TRUE(said);
}

// The opening tag of an Intel Skylake socket, NUMA node `numa`.
std::string intelSocket(int numa) {
  return strprintf("  <cpu numaid=\"%d\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\">\n", numa);
}

// A NIC with `ports` ports (dev 0.., guid 0x1..) of `mbps` each, without GPUDirect.
std::string nicPorts(int ports, int mbps) {
  std::string x = "    <nic>\n";
  for (int p = 0; p < ports; ++p)
    x += strprintf("      <net name=\"eth%d\" dev=\"%d\" speed=\"%d\" port=\"0\" guid=\"0x%x\" gdr=\"0\"/>\n", p, p,
                   mbps, p + 1);
  return x + "    </nic>\n";
}

// Two sockets of two PCIe GPUs each, a four-port NIC on the first socket, on 2 nodes.
std::string twoSocketsFourPorts() {
  std::string x = "<system version=\"1\">\n" + intelSocket(0) + nicPorts(4, 10000);
  for (int g = 0; g < 4; ++g) {
    if (g == 2) x += "  </cpu>\n" + intelSocket(1);
    x += strprintf("    <pci busid=\"0000:%02x:00.0\" class=\"0x030000\" link_speed=\"8.0 GT/s PCIe\" link_width=\"8\">\n"
                   "      <gpu dev=\"%d\" sm=\"86\" rank=\"%d\" gdr=\"1\"/>\n"
                   "    </pci>\n",
                   0x20 + 0x10 * g, g, g);
  }
  return x + "  </cpu>\n</system>\n";
}

TEST_F(SearchPatterns, NextGpuOrderFollowsThePciBandwidthLeft) {
  // NCCL orders the next GPUs by NIC bandwidth, then by what is left on each GPU's PCI link at
  // that moment of the search (gpuPciBw reads the link as the channels so far left it), then
  // by hops. All four GPUs reach the NICs at the same bandwidth here, so from the third tree
  // channel on, the PCI bandwidth the first channels took decides the order. NCCL 2.28.9 gives
  // these channels (sorting by the links' starting bandwidth gives 1 0 3 2 and 1 2 3 0 for
  // channels 2 and 3).
  auto parsed = TopoXml::parse(twoSocketsFourPorts(), "pci-left.xml");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  SimulatedNode n = run(*parsed, 2, Params());
  const Graph& tree = n.graphs.tree;
  ASSERT_EQ(tree.nChannels, 4);
  EXPECT_FLOAT_EQ(tree.bwIntra, 1.2f);
  EXPECT_EQ(tree.sameChannels, 0);
  const int expected[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {1, 3, 2, 0}, {1, 0, 3, 2}};
  for (int c = 0; c < 4; ++c) {
    std::string got, want;
    for (int i = 0; i < 4; ++i) {
      got += std::to_string(tree.rank(c, i)) + " ";
      want += std::to_string(expected[c][i]) + " ";
    }
    EXPECT_EQ(got, want) << "tree channel " << c;
  }
}

TEST_F(SearchPatterns, NetsSharingAnIdSharePathsAsInNccl) {
  // The same two NIC ports listed under both sockets (what some container hosts dump): NET
  // nodes with equal ids. NCCL files every path to a NET under the first node with its id, so
  // the copies keep no path of their own (DIS), the first one's path is whichever BFS wrote it
  // (here the one from the first socket: 4 hops and SYS for GPU 1, as NCCL 2.28.9 computes),
  // and a copy's local GPU is found by id.
  std::string x = "<system version=\"1\">\n";
  for (int cpu = 0; cpu < 2; ++cpu) {
    x += intelSocket(cpu);
    x += strprintf("    <pci busid=\"0000:%02x:00.0\" class=\"0x030000\" link_speed=\"8.0 GT/s PCIe\" link_width=\"16\">\n"
                   "      <gpu dev=\"%d\" sm=\"86\" rank=\"%d\" gdr=\"1\"/>\n"
                   "    </pci>\n",
                   0x20 + 0x20 * cpu, cpu, cpu);
    x += nicPorts(2, 200000) + "  </cpu>\n";
  }
  x += "</system>\n";
  auto parsed = TopoXml::parse(x, "shared-ids.xml");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  SimulatedNode n = run(*parsed, 2, Params());
  const System& s = n.system;
  ASSERT_EQ(s.count(NodeType::kNet), 4);
  EXPECT_EQ(s.node(NodeType::kNet, 2).id, s.node(NodeType::kNet, 0).id);
  for (int g = 0; g < 2; ++g) {
    for (int copy : {2, 3}) EXPECT_EQ(s.node(NodeType::kGpu, g).pathTo(NodeType::kNet, copy).type, PathType::kDis);
    EXPECT_EQ(s.node(NodeType::kGpu, g).pathTo(NodeType::kNet, 0).type, g == 0 ? PathType::kPhb : PathType::kSys);
  }
  EXPECT_EQ(s.node(NodeType::kGpu, 1).pathTo(NodeType::kNet, 0).count(), 4);
  for (int net = 0; net < 4; ++net) EXPECT_EQ(s.node(NodeType::kNet, net).net.localGpu, 0) << "NET " << net;
}

TEST_F(SearchPatterns, PathLinesAreCutAt1023CharactersLikeNcclsBuffer) {
  // 48 NIC ports: a GPU's path line lists 50 nodes (some 1,300 characters); NCCL prints what
  // fits in its 1024-byte line buffer.
  std::string x = "<system version=\"1\">\n" + intelSocket(0) +
                  "    <pci busid=\"0000:20:00.0\" class=\"0x030000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
                  "      <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"/>\n"
                  "    </pci>\n" +
                  nicPorts(48, 100000) + "  </cpu>\n</system>\n";
  auto parsed = TopoXml::parse(x, "many-ports.xml");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  SimulatedNode n = run(*parsed, 1, Params());
  std::vector<std::string> lines = pathLines(n.system);
  ASSERT_EQ(lines.size(), 49u);  // the GPU, then every NET
  EXPECT_EQ(lines[0].size(), kPathLineMax);
  EXPECT_EQ(lines[0].rfind("GPU/0-20000 :GPU/0-20000 (0/5000.0/LOC) CPU/0-0 (1/24.0/PHB) NET/0-0 ", 0), 0u) << lines[0];
}

// The path pass after trimming is skipped when the trim removed no GPU and nobody reads its GDR
// lines: with a reader (which makes both passes run, as NCCL's do) and without one, the paths
// and graphs must come out the same, on a node whose trim removes nothing and on one whose trim
// removes a GPU it cannot reach.
TEST_F(SearchPatterns, PathsAfterTrimAreTheSameWithOrWithoutTheSecondPass) {
  WEFT_REQUIRE_CORPUS();
  // The example (NVLink and PXN paths; its trim removes nothing) and L20 (two groups of 8 GPUs:
  // its trim removes one group).
  std::vector<TopoXml> topos;
  topos.push_back(loadOrDie(exampleTopology()));
  topos.push_back(loadOrDie((test::corpusDir() / "topologies/zy-uestc-yccl/topo_l20.xml").string()));
  for (size_t t = 0; t < topos.size(); ++t) {
    for (const char* gdrLevel : {"PHB", "LOC"}) {  // LOC: GDR off, the NIC paths go through the CPU
      SCOPED_TRACE(strprintf("topology %zu, NCCL_NET_GDR_LEVEL=%s", t, gdrLevel));
      Params params = paramsWith({{"NCCL_NET_GDR_LEVEL", gdrLevel}});
      SimulatedNode quiet = run(topos[t], 2, params);
      std::vector<std::string> read;
      SimulatedNode logged;
      {
        log::ScopedRecorder recorder(&read, log::kGraph | log::kNet);
        logged = run(topos[t], 2, params);
      }
      EXPECT_EQ(pathLines(quiet.system), pathLines(logged.system));
      for (int n = 0; n < quiet.system.count(NodeType::kNet); ++n)
        EXPECT_EQ(quiet.system.node(NodeType::kNet, n).net.localGpu, logged.system.node(NodeType::kNet, n).net.localGpu);
      EXPECT_EQ(graphLines(quiet.system, quiet.graphs.ring), graphLines(logged.system, logged.graphs.ring));
      EXPECT_EQ(graphLines(quiet.system, quiet.graphs.tree), graphLines(logged.system, logged.graphs.tree));
      // With the reader both passes ran: the first over the file's GPUs, the second over those
      // the trim kept, so where the trim keeps them all every GDR line comes twice.
      std::map<std::string, int> gdrLines;
      for (const std::string& l : read)
        if (l.find("GPU Direct RDMA") != std::string::npos) ++gdrLines[l];
      EXPECT_FALSE(gdrLines.empty());
      if (t == 0) {
        for (const auto& [line, count] : gdrLines) EXPECT_EQ(count, 2) << line;
      }
      EXPECT_EQ(quiet.system.count(NodeType::kGpu), 8);  // (L20: the trim kept one group)
    }
  }
}

}  // namespace
}  // namespace weft::topo
