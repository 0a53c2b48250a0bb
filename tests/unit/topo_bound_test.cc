// The machine's bound (core/topo/bound.h) on hand-made machines whose bound is known by
// construction: the cut that binds is the only narrow place, and a schedule that reaches the
// figure exists (said next to each case), so the bound is neither loose nor too tight there.
#include <gtest/gtest.h>

#include "core/base/strings.h"
#include "core/topo/bound.h"
#include "core/topo/offline.h"
#include "core/topo/system_build.h"
#include "tests/support/corpus.h"
#include "tests/support/log_capture.h"

namespace weft::topo {
namespace {

System build(const std::string& xml) {
  auto doc = TopoXml::parse(xml, "bound.xml");
  EXPECT_TRUE(doc.isOk()) << doc.status().toString();
  auto s = buildSystem(*doc);
  EXPECT_TRUE(s.isOk()) << s.status().toString();
  return std::move(*s);
}

// A Skylake socket (NCCL counts its inter-CPU link 10 GB/s).
std::string socket(int numa, const std::string& inside) {
  return strprintf("  <cpu numaid=\"%d\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\">\n", numa) +
         inside + "  </cpu>\n";
}

// A PCIe Gen4 x16 GPU; `nvswitchLinks` NVLinks to an NVSwitch (sm80: 20 GB/s each).
std::string gpu(int bus, int dev, int nvswitchLinks = 0) {
  std::string links = nvswitchLinks == 0 ? "" : strprintf("      <nvlink target=\"0000:e0:00.0\" count=\"%d\" tclass=\"0x068000\"/>\n", nvswitchLinks);
  return strprintf("    <pci busid=\"0000:%02x:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
                   "      <gpu dev=\"%d\" sm=\"80\" rank=\"%d\" gdr=\"1\"%s>\n%s      </gpu>\n    </pci>\n",
                   bus, dev, dev, "", links.c_str());
}

// A one-port NIC of `gbps` Gb/s.
std::string nic(int bus, int gbps) {
  return strprintf("    <pci busid=\"0000:%02x:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
                   "      <nic>\n        <net name=\"mlx5_0\" dev=\"0\" speed=\"%d\" port=\"1\" guid=\"0x1\" gdr=\"1\"/>\n"
                   "      </nic>\n    </pci>\n",
                   bus, gbps * 1000);
}

std::string system(const std::string& sockets) { return "<system version=\"1\">\n" + sockets + "</system>\n"; }

float linkBw(const System& s, NodeType from, NodeType to) {
  for (const Node& n : s.nodes(from))
    for (const Link& l : n.links)
      if (l.rem.type == to) return l.bw;
  return 0;
}

class Bound : public test::WeftTest {};

// Two sockets of two GPUs, one node. Any allreduce must carry S bytes each way between the
// sockets (a socket's GPUs need the other socket's sum); over 10 GB/s that is t >= S/10, so
// busbw = 2 (n-1)/n S/t <= 15 GB/s. Reduce-scatter inside each socket, exchange the halves'
// partial sums over the link, allgather inside: exactly that. Allgather: each socket receives
// the other's 2 chunks, (n-1)/n S/t <= 3/4 x 2 x 10 = 15 likewise.
TEST_F(Bound, TwoSocketsOneNode_TheInterCpuLinkBinds) {
  System s = build(system(socket(0, gpu(0x1a, 0) + gpu(0x1b, 1)) + socket(1, gpu(0x5a, 2) + gpu(0x5b, 3))));
  ASSERT_FLOAT_EQ(linkBw(s, NodeType::kCpu, NodeType::kCpu), 10.0f);
  ASSERT_GT(linkBw(s, NodeType::kCpu, NodeType::kGpu), 15.0f) << "the GPUs' own links must not bind";
  MachineBound b = machineBound(s, 1);
  ASSERT_TRUE(b.defined);
  EXPECT_EQ(b.ranks, 4);
  for (const CollectiveBound* c : {&b.allreduce, &b.allgather}) {
    EXPECT_FLOAT_EQ(c->busBw, 15.0f);
    EXPECT_EQ(c->partsPerNode, 2);
    EXPECT_EQ(c->gpusPerPart, 2);
    EXPECT_EQ(c->limit, strprintf("the links into each of the 2 groups of GPUs that links of %.1f GB/s or more join "
                                  "(SYS 10.0 GB/s)",
                                  static_cast<double>(linkBw(s, NodeType::kCpu, NodeType::kGpu))));
  }
}

// Three GPUs, two on one socket and one on the other: the lone GPU must receive both other
// chunks of an allgather over the 10 GB/s link (t >= 2c/10, busbw = 2/3 x 3c/t <= 10 GB/s),
// while an allreduce needs only one partial sum each way (2 x 2/3 x 10 = 13.3 GB/s).
TEST_F(Bound, UnevenSockets_AllgatherIsBoundByTheLoneGpusShareAllreduceIsNot) {
  System s = build(system(socket(0, gpu(0x1a, 0) + gpu(0x1b, 1)) + socket(1, gpu(0x5a, 2))));
  MachineBound b = machineBound(s, 1);
  EXPECT_FLOAT_EQ(b.allgather.busBw, 10.0f);
  EXPECT_EQ(b.allgather.gpusPerPart, 1);
  EXPECT_EQ(b.allgather.limit, "the links into the group of 1 GPU, one of 2 (SYS 10.0 GB/s)");
  EXPECT_NEAR(b.allreduce.busBw, 40.0f / 3, 1e-4);
}

// One GPU and one 100 Gb/s NIC per node, N nodes. Each node receives at most 12.5 GB/s; an
// allreduce needs 2 (N-1) partial sums per element to cross between nodes (one-way gossip), so
// t >= 2 (N-1) S / (N x 12.5) and busbw <= 12.5 GB/s, which a ring reaches; an allgather's
// ring likewise. The GPUs' PCIe links are faster and do not bind.
TEST_F(Bound, OneGpuOneNicPerNode_TheNetworkBindsAtEveryNodeCount) {
  System s = build(system(socket(0, gpu(0x1a, 0) + nic(0x1c, 100))));
  EXPECT_FALSE(machineBound(s, 1).defined) << "a single rank has nothing to move";
  for (int nodes : {2, 3, 16, 1000}) {
    SCOPED_TRACE(std::to_string(nodes) + " nodes");
    MachineBound b = machineBound(s, nodes);
    ASSERT_TRUE(b.defined);
    for (const CollectiveBound* c : {&b.allreduce, &b.allgather}) {
      EXPECT_NEAR(c->busBw, 12.5f, 1e-4);
      EXPECT_EQ(c->limit, "the links into each node (network 12.5 GB/s)");
    }
  }
}

// Four GPUs on an NVSwitch (6 NVLinks of 20 GB/s each) and one 400 Gb/s NIC per node. On one
// node each GPU can take in its NVLinks and its PCIe link, no more: NVLink SHARP aside, an
// allreduce's GPUs must receive 2 (n-1) S in total, so busbw <= the GPUs' links in. Across N
// nodes the node's 50 GB/s port binds: (n-1)/n x N x 50 / (N-1), 87.5 GB/s at 2 nodes (the
// hierarchical schedule reaches it: reduce-scatter over NVLink, each node's quarter across,
// allgather back).
TEST_F(Bound, NvswitchNode_GpuLinksBindAloneTheNetworkAcrossNodes) {
  System s = build(system(socket(0, gpu(0x1a, 0, 6) + gpu(0x1b, 1, 6) + gpu(0x1c, 2, 6) + gpu(0x1d, 3, 6) + nic(0x1e, 400))));
  float pci = linkBw(s, NodeType::kCpu, NodeType::kGpu);
  ASSERT_GT(pci, 0);
  MachineBound one = machineBound(s, 1);
  EXPECT_FLOAT_EQ(one.allreduce.busBw, 120.0f + pci);
  EXPECT_EQ(one.allreduce.gpusPerPart, 1);
  EXPECT_EQ(one.allreduce.limit, strprintf("the links into each GPU (NVL 120.0 + PCI %.1f GB/s)", static_cast<double>(pci)));
  MachineBound two = machineBound(s, 2);
  EXPECT_FLOAT_EQ(two.allreduce.busBw, 87.5f);
  EXPECT_FLOAT_EQ(two.allgather.busBw, 87.5f);
  EXPECT_EQ(two.allreduce.limit, "the links into each node (network 50.0 GB/s)");
  MachineBound eight = machineBound(s, 8);
  EXPECT_NEAR(eight.allreduce.busBw, 31.0 / 32 * 8 * 50 / 7, 1e-3);
}

// NCCL's figure: channels times the slower of the two bandwidths across nodes, bwIntra alone
// on one node; the line says both and the ratio.
TEST_F(Bound, RingFigureAndLine) {
  Graph ring;
  ring.nChannels = 4;
  ring.bwIntra = 24;
  ring.bwInter = 20;
  EXPECT_FLOAT_EQ(ringFigure(ring, 1).busBw, 96.0f);
  RingFigure f = ringFigure(ring, 2);
  EXPECT_FLOAT_EQ(f.busBw, 80.0f);
  CollectiveBound b;
  b.busBw = 96;
  b.limit = "the links into each node (network 100.0 GB/s)";
  EXPECT_EQ(boundLine(f, b),
            "rings 4 x 20.0 GB/s = 80.0 GB/s of a 96.0 GB/s bound (83%): limited by the links into each node "
            "(network 100.0 GB/s)");
}

// NCCL's rings are one schedule: on no corpus machine do they promise more than the bound.
TEST_F(Bound, CorpusRings_NeverAboveTheBound) {
  WEFT_REQUIRE_CORPUS();
  int checked = 0;
  for (const auto& f : test::corpusTopologies()) {
    auto xml = TopoXml::load(f.string());
    if (!xml.isOk()) continue;
    for (int nodes : {1, 2, 8}) {
      OfflineOptions o;
      o.nodes = nodes;
      o.params = Params::fromSettings(config::Settings());
      test::LogCapture quiet(log::Level::kWarn);
      auto node = simulateNode(*xml, 0, o);
      if (!node.isOk() || !node->bound.defined) continue;
      ++checked;
      float rings = ringFigure(node->graphs.ring, nodes).busBw;
      EXPECT_GT(node->bound.allreduce.busBw, 0) << f << " at " << nodes;
      EXPECT_LE(rings, node->bound.allreduce.busBw * 1.0001f) << f << " at " << nodes << ": " << node->bound.allreduce.limit;
      EXPECT_LE(rings, node->bound.allgather.busBw * 1.0001f) << f << " at " << nodes << ": " << node->bound.allgather.limit;
    }
  }
  EXPECT_GE(checked, 60);  // 22 machines, 3 node counts, less the single-GPU machine on one node
}

}  // namespace
}  // namespace weft::topo
