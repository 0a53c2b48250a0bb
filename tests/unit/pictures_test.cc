// Pictures of topologies and channels: the DOT weft writes, rendered by the real Graphviz `dot`
// and read back from the SVG (nodes, edges, labels). The rendering tests skip, saying why, when
// Graphviz is not installed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <pugixml.hpp>

#include "core/base/files.h"
#include "core/config/settings.h"
#include "core/connect/offline.h"
#include "core/topo/offline.h"
#include "core/topo/paths.h"
#include "core/topo/system_build.h"
#include "core/topo/system_print.h"
#include "core/topo/xml.h"
#include "tests/support/corpus.h"
#include "tests/support/log_capture.h"
#include "tests/support/scoped_env.h"
#include "tools/weft/picture_dot.h"
#include "tools/weft/picture_search.h"
#include "tools/weft/picture_topo.h"

namespace weft::tool {
namespace {

namespace fs = std::filesystem;

const std::string kHgx = std::string(WEFT_SOURCE_DIR) + "/examples/topologies/hgx-h100-8gpu.xml";

#define WEFT_REQUIRE_DOT()                                                                          \
  do {                                                                                              \
    if (findDot().empty())                                                                          \
      GTEST_SKIP() << "Graphviz's dot is not installed (apt-get install graphviz): SVG not checked"; \
  } while (0)

// What an SVG written by dot holds: its nodes (by title: the DOT node name), its edges (tail,
// head) and every text drawn.
struct Box {
  double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
};

struct Svg {
  std::set<std::string> nodes;
  std::vector<std::pair<std::string, std::string>> edges;  // without ports ("GPU/0-1:e" -> "GPU/0-1")
  std::map<std::string, Box> nodeBoxes;                     // what each node's outline covers
  std::vector<std::vector<std::pair<double, double>>> edgePoints;  // each edge's path, as edges
  int clusters = 0;
  std::vector<std::string> texts;
  double width = 0, height = 0;  // points

  int countText(const std::string& t) const { return static_cast<int>(std::count(texts.begin(), texts.end(), t)); }
  bool hasEdge(const std::string& a, const std::string& b) const {
    return std::find(edges.begin(), edges.end(), std::make_pair(a, b)) != edges.end();
  }
};

void collectTexts(const pugi::xml_node& n, std::vector<std::string>& out) {
  for (const pugi::xml_node& c : n.children()) {
    if (std::string(c.name()) == "text") out.emplace_back(c.child_value());
    collectTexts(c, out);
  }
}

// The coordinates of an outline or a path ("M101,-339C34.38,-339 ..." or "x,y x,y ..."), as
// (x, y) pairs in order: every number, whatever the letters between them.
std::vector<std::pair<double, double>> outlinePoints(const pugi::xml_node& g) {
  std::vector<double> numbers;
  for (const pugi::xml_node& c : g.children()) {
    std::string text = c.attribute(std::string(c.name()) == "path" ? "d" : "points").value();
    for (const char* p = text.c_str(); *p != '\0';) {
      char* end = nullptr;
      double v = std::strtod(p, &end);
      if (end == p) {
        ++p;
        continue;
      }
      numbers.push_back(v);
      p = end;
    }
    if (!numbers.empty()) break;  // the first outline (an edge's arrowhead follows its path)
  }
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i + 1 < numbers.size(); i += 2) out.emplace_back(numbers[i], numbers[i + 1]);
  return out;
}

std::string withoutPort(const std::string& id) { return id.substr(0, id.find(':')); }

Svg readSvg(const std::string& text) {
  Svg svg;
  pugi::xml_document doc;
  pugi::xml_parse_result parsed = doc.load_string(text.c_str());
  EXPECT_TRUE(parsed) << parsed.description();
  for (const pugi::xpath_node& g : doc.select_nodes("//*[local-name()='g'][@class]")) {
    std::string cls = g.node().attribute("class").value();
    std::string title = g.node().child("title").child_value();
    if (cls == "node") {
      svg.nodes.insert(title);
      Box& b = svg.nodeBoxes[title];
      for (const auto& [x, y] : outlinePoints(g.node())) {
        b.x0 = std::min(b.x0, x), b.x1 = std::max(b.x1, x);
        b.y0 = std::min(b.y0, y), b.y1 = std::max(b.y1, y);
      }
    } else if (cls == "edge") {
      size_t at = title.find("->");
      if (at == std::string::npos) at = title.find("--");
      EXPECT_NE(at, std::string::npos) << title;
      svg.edges.emplace_back(withoutPort(title.substr(0, at)), withoutPort(title.substr(at + 2)));
      svg.edgePoints.push_back(outlinePoints(g.node()));
    } else if (cls == "cluster") {
      ++svg.clusters;
    }
  }
  collectTexts(doc, svg.texts);
  svg.width = doc.child("svg").attribute("width").as_double();  // "1021pt": strtod stops at "pt"
  svg.height = doc.child("svg").attribute("height").as_double();
  return svg;
}

Svg render(const std::string& dot) {
  auto svg = renderDot(findDot(), dot, "svg");
  EXPECT_TRUE(svg.isOk()) << svg.status().toString();
  return svg.isOk() ? readSvg(*svg) : Svg{};
}

topo::System systemOf(const std::string& file) {
  auto xml = topo::TopoXml::load(file);
  EXPECT_TRUE(xml.isOk()) << xml.status().toString();
  auto system = topo::buildSystem(*xml);
  EXPECT_TRUE(system.isOk()) << system.status().toString();
  return std::move(*system);
}

int nodeCount(const topo::System& s) {
  int n = 0;
  for (topo::NodeType t : topo::kAllNodeTypes) n += s.count(t);
  return n;
}

// Pairs of distinct nodes joined by a link of some type, in either direction or both.
size_t linkedPairs(const topo::System& s) {
  std::set<std::tuple<std::string, std::string, int>> pairs;
  for (topo::NodeType t : topo::kAllNodeTypes) {
    for (const topo::Node& n : s.nodes(t)) {
      for (const topo::Link& l : n.links) {
        std::string a = topo::nodeName(n), b = topo::nodeName(s.node(l.rem));
        if (a != b) pairs.insert({std::min(a, b), std::max(a, b), topo::val(l.type)});
      }
    }
  }
  return pairs.size();
}

class Pictures : public test::WeftTest {};

TEST_F(Pictures, TopoShow_HgxH100_DrawsEveryNodeAndEveryLinkOnceInsideItsNuma) {
  WEFT_REQUIRE_DOT();
  topo::System s = systemOf(kHgx);
  auto xml = topo::TopoXml::load(kHgx);
  ASSERT_TRUE(xml.isOk());
  Svg svg = render(systemDot(s, {"hgx-h100-8gpu.xml", netNamesOf(*xml)}));
  // 8 GPUs, 2 CPUs, 8 PCI switches, 1 NVSwitch, 8 NICs, 8 ports.
  EXPECT_EQ(svg.nodes.size(), 35u);
  // GPU-NVSwitch, GPU-switch, switch-CPU, NIC-switch, NIC-port (8 each) and the CPUs' SYS link.
  EXPECT_EQ(svg.edges.size(), 41u);
  EXPECT_EQ(svg.clusters, 2);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(svg.countText("rank " + std::to_string(r) + " · sm90"), 1) << "rank " << r;
  EXPECT_EQ(svg.countText("NVL 370.8"), 8);  // 18 NVLinks of 20.6 GB/s per GPU
  EXPECT_EQ(svg.countText("SYS 22.0"), 1);
  EXPECT_EQ(svg.countText("NET 0 mlx5_0"), 1);
  EXPECT_EQ(svg.countText("NVSwitch"), 1);
  // The PCI tree is drawn from the CPU down, the NVLinks from the GPUs to the NVSwitch.
  EXPECT_TRUE(svg.hasEdge("CPU/0-0", "PCI/0-10000"));
  EXPECT_TRUE(svg.hasEdge("PCI/0-10000", "GPU/0-14000"));
  EXPECT_TRUE(svg.hasEdge("GPU/0-14000", "NVS/0-0"));
}

TEST_F(Pictures, TopoShow_CorpusTopologies_OneSvgNodePerSystemNodeOneEdgePerLinkedPair) {
  WEFT_REQUIRE_CORPUS();
  WEFT_REQUIRE_DOT();
  // An NVLink mesh (DGX-1), C2C with a NUMA id of -1 (GB10), an NVSwitch machine (OCI H100),
  // Azure's NDv4 and a machine without GPUs.
  for (const char* file : {"berkeley-blinkplus-dgx1v/topology.xml", "github-issues/nvidia-nccl-pr2202-gb10-dgx-spark.xml",
                           "oracle-oci-hpc-oke/BM.GPU.H100.8.xml", "azure-azhpc-images/ndv4-topo.xml",
                           "aws-ofi-nccl/p4d-24xl-topo.xml"}) {
    SCOPED_TRACE(file);
    topo::System s = systemOf((test::corpusDir() / "topologies" / file).string());
    Svg svg = render(systemDot(s, {file, {}}));
    EXPECT_EQ(static_cast<int>(svg.nodes.size()), nodeCount(s));
    EXPECT_EQ(svg.edges.size(), linkedPairs(s));
    EXPECT_EQ(svg.clusters, s.count(topo::NodeType::kCpu));
  }
}

// A PCI tree is far wider than deep: drawn top down, a p5.48xlarge (40 leaves) was 19 times as
// wide as high, an HGX H100 5 times. Drawn left to right, the leaves go down the page.
TEST_F(Pictures, TopoShow_WidePciTrees_AreDrawnDownThePageNotAcrossIt) {
  WEFT_REQUIRE_DOT();
  std::vector<std::string> files{kHgx};
  if (test::haveCorpus()) {
    for (const char* f : {"aws-ofi-nccl/p5.48xl-topo.pr1226-unmerged.xml", "oracle-oci-hpc-oke/BM.GPU4.8.xml"})
      files.push_back((test::corpusDir() / "topologies" / f).string());
  }
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    Svg svg = render(systemDot(systemOf(file), {file, {}}));
    EXPECT_GT(svg.width, 0);
    EXPECT_GE(svg.height, svg.width);
  }
}

// Four CPUs (OCI's BM.GPU4.8, AMD NUMA nodes 3, 1, 7, 5) are linked pair by pair and drawn in
// one column: a link between two CPUs that are not neighbours there ran straight through the
// CPUs between them, as if it joined those too. Each arcs in the margin left of the CPUs.
TEST_F(Pictures, TopoShow_FourCpus_InterCpuLinksPassBesideTheOtherCpus) {
  WEFT_REQUIRE_CORPUS();
  WEFT_REQUIRE_DOT();
  topo::System s = systemOf((test::corpusDir() / "topologies/oracle-oci-hpc-oke/BM.GPU4.8.xml").string());
  ASSERT_EQ(s.count(topo::NodeType::kCpu), 4);
  Svg svg = render(systemDot(s, {"BM.GPU4.8.xml", {}}));
  double cpuLeft = 1e300;
  for (const auto& [name, box] : svg.nodeBoxes)
    if (name.rfind("CPU/", 0) == 0) cpuLeft = std::min(cpuLeft, box.x0);
  int links = 0;
  for (size_t i = 0; i < svg.edges.size(); ++i) {
    if (svg.edges[i].first.rfind("CPU/", 0) != 0 || svg.edges[i].second.rfind("CPU/", 0) != 0) continue;
    ++links;
    ASSERT_FALSE(svg.edgePoints[i].empty());
    for (const auto& [x, y] : svg.edgePoints[i]) EXPECT_LE(x, cpuLeft + 0.5) << svg.edges[i].first << " -- " << svg.edges[i].second;
  }
  EXPECT_EQ(links, 6);
}

// NCCL gives a NIC under its CPU, outside the PCI tree (GB10's tailscale0), bus id 0 and a
// link as fast as a node's to itself; a NIC in a real device at 0000:00:00.0 (B200 under gVisor)
// keeps its bus id.
TEST_F(Pictures, TopoShow_NicOutsideThePciTree_IsSaidNotOnPci) {
  WEFT_REQUIRE_CORPUS();
  std::string gb10 = systemDot(systemOf((test::corpusDir() / "topologies/github-issues/nvidia-nccl-pr2202-gb10-dgx-spark.xml").string()), {"gb10", {}});
  EXPECT_NE(gb10.find("NIC\\nnot on PCI"), std::string::npos) << gb10;
  EXPECT_NE(gb10.find("NIC\\n0009:01:00.0"), std::string::npos) << gb10;
  std::string b200 = systemDot(systemOf((test::corpusDir() / "topologies/modal-gvisor-b200/nccl_topo.v1-5554632.xml").string()), {"b200", {}});
  EXPECT_EQ(b200.find("not on PCI"), std::string::npos) << b200;
  EXPECT_NE(b200.find("NIC\\n0000:00:00.0"), std::string::npos) << b200;
}

TEST_F(Pictures, TopoShow_TwoHosts_EachHostIsABoxAroundItsCpus) {
  WEFT_REQUIRE_DOT();
  auto xml = topo::TopoXml::parse(
      "<system version=\"1\">\n"
      "  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"143\" modelid=\"49\">\n"
      "    <pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
      "      <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"0\"/>\n"
      "    </pci>\n"
      "  </cpu>\n"
      "  <cpu host_hash=\"0x2\" numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"143\" modelid=\"49\">\n"
      "    <pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
      "      <gpu dev=\"0\" sm=\"80\" rank=\"1\" gdr=\"0\"/>\n"
      "    </pci>\n"
      "  </cpu>\n"
      "</system>\n",
      "two-hosts.xml");
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  auto s = topo::buildSystem(*xml);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  Svg svg = render(systemDot(*s, {"two hosts", {}}));
  EXPECT_EQ(svg.nodes.size(), 4u);
  EXPECT_EQ(svg.clusters, 4);  // two hosts, a CPU in each
  EXPECT_EQ(svg.countText("host 1 · GPU 0"), 1);
  EXPECT_EQ(svg.countText("GPU 0"), 1);  // host 0's, named without a host
}

TEST_F(Pictures, TopoShow_NumaMinusOne_IsNamedSo) {
  WEFT_REQUIRE_CORPUS();
  topo::System s = systemOf((test::corpusDir() / "topologies/github-issues/nvidia-nccl-pr2202-gb10-dgx-spark.xml").string());
  std::string dot = systemDot(s, {"gb10", {}});
  EXPECT_NE(dot.find("NUMA -1 (unknown)"), std::string::npos) << dot;
}

// Node 0's search and every rank's channels on `nodes` HGX H100 nodes, as `weft search` runs them.
struct Searched {
  std::vector<topo::SearchCache> caches;
  std::vector<topo::SimulatedNode> domains;
  connect::Connection conn;
};

Searched searchFile(const std::string& file, int nodes) {
  Searched out;
  auto xml = topo::TopoXml::load(file);
  EXPECT_TRUE(xml.isOk());
  topo::OfflineOptions o;
  o.nodes = nodes;
  o.params = topo::Params::fromSettings(config::Settings());
  test::LogCapture quiet(log::Level::kWarn);
  auto domains = topo::simulateDomains(*xml, 0, o, out.caches);
  EXPECT_TRUE(domains.isOk()) << domains.status().toString();
  out.domains = std::move(*domains);
  std::vector<int> compCaps;  // one per trim domain (L20's two groups of 8 GPUs), as `weft search`
  for (const topo::SimulatedNode& d : out.domains) compCaps.push_back(topo::minCompCap(d.system));
  auto inputs = connect::offlineInputs(out.caches, compCaps, out.domains.front().gpusPerNode, nodes, false, false);
  EXPECT_TRUE(inputs.isOk()) << inputs.status().toString();
  auto conn = connect::connectRanks(*inputs, connect::ConnectOptions::fromParams(o.params));
  EXPECT_TRUE(conn.isOk()) << conn.status().toString();
  out.conn = std::move(*conn);
  return out;
}

Searched searchHgx(int nodes) { return searchFile(kHgx, nodes); }

SearchPicture pictureOf(const Searched& s, int nodes, std::vector<int> channels, bool rings, bool trees) {
  SearchPicture p;
  p.node = &s.domains.front();
  p.conn = &s.conn;
  p.nodes = nodes;
  p.channels = std::move(channels);
  p.rings = rings;
  p.trees = trees;
  p.title = "hgx";
  auto xml = topo::TopoXml::load(kHgx);
  if (xml.isOk()) p.netNames = netNamesOf(*xml);
  return p;
}

std::string rankId(int panel, int rank) { return "p" + std::to_string(panel) + "_r" + std::to_string(rank); }
bool isNet(const std::string& id) { return id.find("_net") != std::string::npos; }

TEST_F(Pictures, SearchPicture_TwoHgxNodes_RingArrowsFollowTheConnectedRingThroughTheNics) {
  WEFT_REQUIRE_DOT();
  Searched s = searchHgx(2);
  for (int c : {0, 3}) {
    SCOPED_TRACE("channel " + std::to_string(c));
    auto dot = searchDot(pictureOf(s, 2, {c}, true, false));
    ASSERT_TRUE(dot.isOk()) << dot.status().toString();
    Svg svg = render(*dot);
    // 16 GPUs and, per node, the port the ring enters by and the one it leaves by.
    EXPECT_EQ(svg.nodes.size(), 16u + 4u);
    // 14 arrows inside the nodes; each of the 2 node crossings is GPU -> port -> port -> GPU.
    EXPECT_EQ(svg.edges.size(), 14u + 2u * 3u);
    std::map<std::string, std::string> next;
    for (const auto& [a, b] : svg.edges) EXPECT_TRUE(next.emplace(a, b).second) << a << " has two successors";
    std::vector<int> drawn;
    std::string at = rankId(0, 0);
    for (int steps = 0; steps < 64 && (drawn.empty() || at != rankId(0, 0)); ++steps) {
      if (!isNet(at)) drawn.push_back(std::stoi(at.substr(at.find("_r") + 2)));
      ASSERT_TRUE(next.count(at)) << at << " has no successor";
      at = next[at];
    }
    EXPECT_EQ(drawn, connect::ringFrom(s.conn, c, 0));
    EXPECT_EQ(svg.countText("channel " + std::to_string(c) + " · ring"), 1);
    EXPECT_GE(svg.countText("mlx5_" + std::to_string(c % 8)), 1);
    // The legend names every path type an arrow or a caption can show (GB10's LOC/P2C too).
    for (const char* type : {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET"})
      EXPECT_GE(svg.countText(type), 1) << type;
  }
}

TEST_F(Pictures, SearchPicture_FourHgxNodes_TreeArrowsGoFromEachParentToItsChildren) {
  WEFT_REQUIRE_DOT();
  Searched s = searchHgx(4);
  for (int c : {0, 9}) {
    SCOPED_TRACE("channel " + std::to_string(c));
    auto dot = searchDot(pictureOf(s, 4, {c}, false, true));
    ASSERT_TRUE(dot.isOk()) << dot.status().toString();
    Svg svg = render(*dot);
    int stored = s.conn.source[static_cast<size_t>(c)];
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& [a, b] : svg.edges) out[a].push_back(b);
    int parents = 0;
    for (int r = 0; r < s.conn.nRanks; ++r) {
      int up = s.conn.treeUpOf(stored, r);
      if (up < 0) continue;
      ++parents;
      if (up / 8 == r / 8) {
        EXPECT_TRUE(svg.hasEdge(rankId(0, up), rankId(0, r))) << up << " -> " << r;
        continue;
      }
      // Across nodes: parent -> its node's port -> the child node's port -> child.
      bool found = false;
      for (const std::string& p1 : out[rankId(0, up)])
        for (const std::string& p2 : out[p1])
          if (isNet(p1) && isNet(p2) && svg.hasEdge(p2, rankId(0, r))) found = true;
      EXPECT_TRUE(found) << up << " -> " << r << " through the network";
    }
    EXPECT_EQ(parents, s.conn.nRanks - 1);  // one root
  }
}

// A ring through 8 nodes drawn in one row was 70 boxes (11000 pixels) wide: the nodes are drawn
// one below the other, each about as wide as the single node's ring.
TEST_F(Pictures, SearchPicture_EightHgxNodes_RingDrawsTheNodesOneBelowTheOther) {
  WEFT_REQUIRE_DOT();
  Searched one = searchHgx(1), eight = searchHgx(8);
  auto single = searchDot(pictureOf(one, 1, {0}, true, false));
  auto stacked = searchDot(pictureOf(eight, 8, {0}, true, false));
  ASSERT_TRUE(single.isOk() && stacked.isOk());
  Svg a = render(*single), b = render(*stacked);
  EXPECT_EQ(b.nodes.size(), 64u + 16u);
  EXPECT_LE(b.width, 1.5 * a.width);
  EXPECT_GT(b.height, 4 * a.height);
}

// OCI's BM.GPU4.8 orders its GPUs alike in ring channels 0 and 1 (and 2 and 3) and sends them
// through different NICs: each channel is drawn through the NIC of its own graph channel, as
// NCCL connects it, not through the first NIC whose channel orders the GPUs so.
TEST_F(Pictures, SearchPicture_ChannelsOrderedAlike_EachLeavesByItsOwnNic) {
  WEFT_REQUIRE_CORPUS();
  WEFT_REQUIRE_DOT();
  Searched s = searchFile((test::corpusDir() / "topologies/oracle-oci-hpc-oke/BM.GPU4.8.xml").string(), 2);
  const topo::Graph& ring = s.domains.front().graphs.ring;
  ASSERT_GE(ring.nChannels, 2);
  for (int j = 0; j < ring.ngpus; ++j) ASSERT_EQ(ring.rank(0, j), ring.rank(1, j)) << "the corpus file changed";
  for (int c : {0, 1}) {
    SCOPED_TRACE("channel " + std::to_string(c));
    for (bool rings : {true, false}) {
      auto dot = searchDot(pictureOf(s, 2, {c}, rings, !rings));
      ASSERT_TRUE(dot.isOk()) << dot.status().toString();
      Svg svg = render(*dot);
      const topo::Graph& graph = rings ? ring : s.domains.front().graphs.tree;
      std::string nic = "NET " + std::to_string(topo::localIdOf(graph.inter[static_cast<size_t>(2 * c)]));
      EXPECT_EQ(svg.countText(nic), 2) << (rings ? "ring" : "tree") << ": one port per node";
      EXPECT_EQ(svg.countText("NET " + std::to_string(1 - c)), 0) << (rings ? "ring" : "tree");
    }
  }
}

TEST_F(Pictures, SearchPicture_MoreThanEightNodes_IsRefused) {
  Searched s = searchHgx(1);
  auto dot = searchDot(pictureOf(s, kPictureMaxNodes + 1, {0}, true, true));
  ASSERT_FALSE(dot.isOk());
  EXPECT_NE(dot.status().toString().find("at most 8 nodes"), std::string::npos);
}

TEST(PictureChannels, ListsAndRangesWithinTheChannelCount) {
  EXPECT_EQ(*parseChannelList("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(*parseChannelList("0, 2-4", 8), (std::vector<int>{0, 2, 3, 4}));
  EXPECT_FALSE(parseChannelList("5", 4).isOk());
  EXPECT_FALSE(parseChannelList("3-1", 4).isOk());
  EXPECT_FALSE(parseChannelList("x", 4).isOk());
}

TEST(PictureFiles, WithoutGraphvizTheDotTextIsWrittenBesideTheAskedFile) {
  char tmpl[] = "/tmp/weft-pic-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  {
    test::ScopedEnv noDot("WEFT_DOT", (dir / "no-such-dot").c_str());
    ASSERT_EQ(findDot(), "");
    Status s = writePicture("graph g { a -- b }\n", (dir / "topo.svg").string(), "svg");
    EXPECT_TRUE(s.isOk()) << s.toString();
  }
  EXPECT_FALSE(fs::exists(dir / "topo.svg"));
  auto text = readWholeFile((dir / "topo.dot").string());
  ASSERT_TRUE(text.isOk()) << text.status().toString();
  EXPECT_EQ(*text, "graph g { a -- b }\n");
  fs::remove_all(dir);
}

TEST(PictureFiles, FormatFollowsTheExtension) {
  EXPECT_EQ(pictureFormat("a.svg"), "svg");
  EXPECT_EQ(pictureFormat("a.PNG"), "png");
  EXPECT_EQ(pictureFormat("a.gv"), "dot");
  EXPECT_EQ(pictureFormat("a"), "svg");
}

TEST(PictureFiles, BadDotTextIsAnErrorNotAnEmptyPicture) {
  WEFT_REQUIRE_DOT();
  auto svg = renderDot(findDot(), "graph g { a -- }\n", "svg");
  ASSERT_FALSE(svg.isOk());
  // The error names the program and what to try, and is not an internal error.
  EXPECT_NE(svg.status().message().find("Graphviz (" + findDot() + " -Tsvg) failed with exit status"), std::string::npos)
      << svg.status().toString();
  EXPECT_NE(svg.status().code(), Code::kInternalError);
}

// A renderer that never finishes is stopped at WEFT_DOT_TIMEOUT and said so; the picture is not
// written and the program is not left running.
TEST(PictureFiles, ARendererPastWeftDotTimeoutIsStoppedWithAClearError) {
  char tmpl[] = "/tmp/weft-pic-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  fs::path slow = dir / "slow-dot";
  {
    std::FILE* f = std::fopen(slow.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "#!/bin/sh\necho $$ > %s\nexec sleep 120\n", (dir / "pid").c_str());
    std::fclose(f);
    fs::permissions(slow, fs::perms::owner_all);
  }
  test::ScopedEnv program("WEFT_DOT", slow.c_str());
  test::ScopedEnv limit("WEFT_DOT_TIMEOUT", "1");
  Status s = writePicture("digraph g { a -> b }\n", (dir / "x.svg").string(), "svg");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("did not finish within 1 s (WEFT_DOT_TIMEOUT)"), std::string::npos) << s.toString();
  EXPECT_NE(s.message().find("--picture-channels"), std::string::npos) << s.toString();
  EXPECT_FALSE(fs::exists(dir / "x.svg"));
  auto pid = readWholeFile((dir / "pid").string());
  ASSERT_TRUE(pid.isOk());
  EXPECT_NE(::kill(std::atoi(pid->c_str()), 0), 0) << "the renderer is still running";
  {
    test::ScopedEnv bad("WEFT_DOT_TIMEOUT", "soon");
    Status b = writePicture("digraph g { a -> b }\n", (dir / "x.svg").string(), "svg");
    EXPECT_NE(b.message().find("WEFT_DOT_TIMEOUT=soon: expected whole seconds"), std::string::npos) << b.toString();
  }
  fs::remove_all(dir);
}

// The corpus topologies NCCL can load (weft's simulation succeeds on exactly those).
std::vector<fs::path> loadableCorpus() {
  std::vector<fs::path> out;
  for (const fs::path& f : test::corpusTopologies()) {
    auto xml = topo::TopoXml::load(f.string());
    if (!xml.isOk()) continue;
    topo::OfflineOptions o;
    o.params = topo::Params::fromSettings(config::Settings());
    std::vector<topo::SearchCache> caches;
    test::LogCapture quiet(log::Level::kWarn);
    if (topo::simulateDomains(*xml, 0, o, caches).isOk()) out.push_back(f);
  }
  return out;
}

// Every node of the DOT text with its position ("name [... pos=\"x,y\"]").
std::map<std::string, std::pair<double, double>> positions(const std::string& dot) {
  std::map<std::string, std::pair<double, double>> out;
  for (size_t at = dot.find(" pos=\""); at != std::string::npos; at = dot.find(" pos=\"", at + 1)) {
    size_t lineStart = dot.rfind('\n', at) + 1;
    std::string line = dot.substr(lineStart, dot.find('\n', at) - lineStart);
    std::string name = line.substr(line.find_first_not_of(' '));
    name = name.substr(0, name.find(' '));
    if (name.find("->") != std::string::npos || line.find(" -> ") != std::string::npos) continue;  // an edge's path
    double x = 0, y = 0;
    if (std::sscanf(dot.c_str() + at, " pos=\"%lf,%lf", &x, &y) == 2) out[name] = {x, y};
  }
  return out;
}

// dot's own layout lost edges on 12 of the 22 topologies at 4 nodes and ran for minutes on two.
// Positions now come from the structure: every topology at 1, 2, 4 and 8 nodes, every channel,
// gets a position for each GPU and port, no two boxes on one another; each is drawn at 8 nodes
// (channel 0) and the largest whole picture (OCI H100, 8 nodes, 64 panels) too.
TEST_F(Pictures, SearchPicture_EveryCorpusTopology_OneToEightNodes_EveryBoxPlacedApart) {
  WEFT_REQUIRE_CORPUS();
  std::vector<fs::path> files = loadableCorpus();
  EXPECT_EQ(files.size(), 22u) << "the corpus changed";
  for (const fs::path& f : files) {
    for (int nodes : {1, 2, 4, 8}) {
      SCOPED_TRACE(f.string() + " at " + std::to_string(nodes) + " nodes");
      Searched s = searchFile(f.string(), nodes);
      std::vector<int> all;
      for (int c = 0; c < s.conn.nChannels; ++c) all.push_back(c);
      auto dot = searchDot(pictureOf(s, nodes, all, true, true));
      ASSERT_TRUE(dot.isOk()) << dot.status().toString();
      EXPECT_NE(dot->find("layout=nop2"), std::string::npos);
      auto pos = positions(*dot);
      int g = s.domains.front().gpusPerNode;
      for (int panel = 0; panel < 2 * s.conn.nChannels; ++panel)
        for (int r = 0; r < nodes * g; ++r) ASSERT_TRUE(pos.count(rankId(panel, r))) << rankId(panel, r);
      // Boxes are 72 x 36 points, ports 72 wide: centres closer than that overlap.
      std::vector<std::pair<double, double>> points;
      for (const auto& [name, p] : pos) points.push_back(p);
      std::sort(points.begin(), points.end());
      for (size_t i = 0; i < points.size(); ++i)
        for (size_t j = i + 1; j < points.size() && points[j].first - points[i].first < 72; ++j)
          EXPECT_GE(std::abs(points[j].second - points[i].second), 36) << "two boxes at " << points[i].first << "," << points[i].second;
    }
  }
  WEFT_REQUIRE_DOT();
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    Searched s = searchFile(f.string(), 8);
    auto dot = searchDot(pictureOf(s, 8, {0}, true, true));
    ASSERT_TRUE(dot.isOk());
    Svg svg = render(*dot);
    EXPECT_GE(static_cast<int>(svg.nodes.size()), 2 * 8 * s.domains.front().gpusPerNode);
  }
  Searched oci = searchFile((test::corpusDir() / "topologies/oracle-oci-hpc/H100-topology.xml").string(), 8);
  std::vector<int> all;
  for (int c = 0; c < oci.conn.nChannels; ++c) all.push_back(c);
  auto whole = searchDot(pictureOf(oci, 8, all, true, true));
  ASSERT_TRUE(whole.isOk());
  Svg svg = render(*whole);
  EXPECT_EQ(svg.clusters, 2 * oci.conn.nChannels * (1 + 8));
}

}  // namespace
}  // namespace weft::tool
