// Fusion and trimming of topology XML with NCCL's rules (ncclTopoFuseXml, ncclTopoTrimXml).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/topo/xml.h"
#include "core/topo/xml_fuse.h"
#include "tests/support/log_capture.h"

namespace weft::topo {
namespace {

class TopoFuse : public test::WeftTest {
 protected:
  static TopoXml parse(const std::string& text, const std::string& name = "t.xml") {
    auto xml = TopoXml::parse(text, name);
    EXPECT_TRUE(xml.isOk()) << xml.status().toString();
    return xml.isOk() ? std::move(xml).value() : TopoXml();
  }
};

// Two ranks of one node, each after trim: the same CPU and switch, a different GPU.
const char* kRank0 =
    "<system version=\"1\">\n"
    "  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:10:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "        <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/>\n"
    "      </pci>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "</system>\n";
const char* kRank1 =
    "<system version=\"1\">\n"
    "  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:10:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <pci busid=\"0000:12:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "        <gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\"/>\n"
    "      </pci>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "</system>\n";

TEST_F(TopoFuse, SameCpuAndSwitchMergeAndTheSecondGpuIsAppended) {
  std::vector<TopoXml> ranks = {parse(kRank0), parse(kRank1)};
  auto fused = fuseXmls(ranks);
  ASSERT_TRUE(fused.isOk()) << fused.status().toString();
  EXPECT_EQ(fused->toString(),
            "<system version=\"1\">\n"
            "  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
            "    <pci busid=\"0000:10:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
            "      <pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
            "        <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/>\n"
            "      </pci>\n"
            "      <pci busid=\"0000:12:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
            "        <gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\"/>\n"
            "      </pci>\n"
            "    </pci>\n"
            "  </cpu>\n"
            "</system>\n");
}

TEST_F(TopoFuse, OrderOfArgumentsDecidesOrderOfSiblings) {
  std::vector<TopoXml> ranks = {parse(kRank1), parse(kRank0)};
  auto fused = fuseXmls(ranks);
  ASSERT_TRUE(fused.isOk());
  const XmlNode* sw = fused->root()->child("cpu")->child("pci");
  ASSERT_EQ(sw->children().size(), 2u);
  EXPECT_EQ(sw->children()[0]->get("busid"), "0000:12:00.0");
  EXPECT_EQ(sw->children()[1]->get("busid"), "0000:11:00.0");
}

TEST_F(TopoFuse, AttributeOrderDoesNotMatter) {
  TopoXml a = parse("<system version=\"1\"><cpu numaid=\"0\" arch=\"arm64\"><nic/></cpu></system>");
  TopoXml b = parse("<system version=\"1\"><cpu arch=\"arm64\" numaid=\"0\"><pci busid=\"0000:01:00.0\"/></cpu></system>");
  ASSERT_TRUE(fuseXml(a, b).isOk());
  ASSERT_EQ(a.root()->children().size(), 1u);
  const XmlNode* cpu = a.root()->child("cpu");
  ASSERT_EQ(cpu->children().size(), 2u);
  EXPECT_EQ(cpu->attrs()[0].first, "numaid") << "the first document's attribute order is kept";
  EXPECT_EQ(cpu->children()[1]->name(), "pci");
}

TEST_F(TopoFuse, AnExtraAttributeOrADifferentValueMakesANewSibling) {
  TopoXml a = parse("<system version=\"1\"><cpu numaid=\"0\" arch=\"arm64\"/></system>");
  TopoXml extra = parse("<system version=\"1\"><cpu numaid=\"0\" arch=\"arm64\" affinity=\"ff\"/></system>");
  TopoXml fewer = parse("<system version=\"1\"><cpu numaid=\"0\"/></system>");
  TopoXml other = parse("<system version=\"1\"><cpu numaid=\"1\" arch=\"arm64\"/></system>");
  ASSERT_TRUE(fuseXml(a, extra).isOk());
  ASSERT_TRUE(fuseXml(a, fewer).isOk());
  ASSERT_TRUE(fuseXml(a, other).isOk());
  ASSERT_EQ(a.root()->children().size(), 4u);
  EXPECT_EQ(a.root()->children()[1]->get("affinity"), "ff");
  EXPECT_EQ(a.root()->children()[2]->attrs().size(), 1u);
  EXPECT_EQ(a.root()->children()[3]->get("numaid"), "1");
}

TEST_F(TopoFuse, SelfClosingOpenAndInMemoryElementsNeverMatch) {
  // NCCL compares the node type too: <x/> (SINGLE), <x>…</x> (OPEN), made by detection (NONE).
  TopoXml a = parse("<system version=\"1\"><cpu numaid=\"0\"/></system>");
  TopoXml open = parse("<system version=\"1\"><cpu numaid=\"0\"></cpu></system>");
  ASSERT_TRUE(fuseXml(a, open).isOk());
  EXPECT_EQ(a.root()->children().size(), 2u);
  TopoXml mem = TopoXml::withRoot("system");
  mem.root()->addChild("cpu").set("numaid", "0");
  ASSERT_TRUE(fuseXml(a, mem).isOk());
  EXPECT_EQ(a.root()->children().size(), 3u);
  // In-memory elements match each other.
  TopoXml mem2 = TopoXml::withRoot("system");
  mem2.root()->addChild("cpu").set("numaid", "0");
  ASSERT_TRUE(fuseXml(mem, mem2).isOk());
  EXPECT_EQ(mem.root()->children().size(), 1u);
}

TEST_F(TopoFuse, RepeatedSiblingsInOneInputCollapse) {
  // The second <nic/> matches the copy of the first one, added moments before.
  TopoXml a = parse("<system version=\"1\"><cpu numaid=\"0\"/></system>");
  TopoXml b = parse("<system version=\"1\"><cpu numaid=\"1\"><nic/></cpu><cpu numaid=\"1\"><nic/></cpu></system>");
  ASSERT_TRUE(fuseXml(a, b).isOk());
  ASSERT_EQ(a.root()->children().size(), 2u);
  EXPECT_EQ(a.root()->children()[1]->children().size(), 1u);
}

TEST_F(TopoFuse, EqualSiblingsInsideACopiedSubtreeMergeOnlyWhenFusedAgain) {
  // A subtree without a match is copied whole, equal siblings included (NCCL's xmlAddTree);
  // fusing the same document again merges the second sibling into the first.
  TopoXml dst = parse("<system version=\"1\"><cpu numaid=\"0\"/></system>");
  TopoXml src = parse("<system version=\"1\"><cpu numaid=\"1\"><nic><net name=\"a\"/></nic><nic><net name=\"b\"/></nic></cpu></system>");
  ASSERT_TRUE(fuseXml(dst, src).isOk());
  const XmlNode* cpu1 = dst.root()->children()[1].get();
  ASSERT_EQ(cpu1->children().size(), 2u);
  ASSERT_TRUE(fuseXml(dst, src).isOk());
  ASSERT_EQ(cpu1->children().size(), 2u);
  EXPECT_EQ(cpu1->children()[0]->children().size(), 2u) << dst.toString();
  EXPECT_EQ(cpu1->children()[1]->children().size(), 1u) << dst.toString();
}

TEST_F(TopoFuse, EmptyDestinationBecomesACopy) {
  TopoXml dst;
  TopoXml src = parse(kRank0);
  ASSERT_TRUE(fuseXml(dst, src).isOk());
  EXPECT_TRUE(dst == src);
}

TEST_F(TopoFuse, FusingTheSameRanksAgainAddsNothing) {
  std::vector<TopoXml> ranks = {parse(kRank0), parse(kRank1), parse(kRank0), parse(kRank1)};
  auto twice = fuseXmls(ranks);
  auto once = fuseXmls(std::span<const TopoXml>(ranks).first(2));
  ASSERT_TRUE(twice.isOk() && once.isOk());
  EXPECT_TRUE(*twice == *once);
}

TEST_F(TopoFuse, SourceWithoutSystemIsAnErrorNamingIt) {
  TopoXml dst = parse(kRank0);
  TopoXml before = dst;
  TopoXml graphs = parse("<graphs version=\"1\"><graph id=\"0\"/></graphs>", "g.xml");
  Status s = fuseXml(dst, graphs);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("g.xml: no <system> element"), std::string::npos) << s.message();
  EXPECT_TRUE(dst == before);
  TopoXml notSystem = parse("<graphs version=\"1\"/>", "d.xml");
  s = fuseXml(notSystem, dst);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("d.xml: no <system> element to fuse t.xml into"), std::string::npos) << s.message();
}

TEST_F(TopoFuse, TrimKeepsMarkedBranchesAndStripsTheMark) {
  TopoXml xml = parse(
      "<system version=\"1\">\n"
      "  <cpu numaid=\"0\">\n"
      "    <pci busid=\"0000:10:00.0\">\n"
      "      <pci busid=\"0000:11:00.0\">\n"
      "        <gpu dev=\"0\" keep=\"1\" rank=\"0\"><nvlink target=\"0000:12:00.0\" keep=\"1\"/></gpu>\n"
      "      </pci>\n"
      "      <pci busid=\"0000:12:00.0\"><gpu dev=\"1\"/></pci>\n"
      "      <pcilink target=\"0000:20:00.0\"/>\n"
      "    </pci>\n"
      "    <pci busid=\"0000:30:00.0\"><nic><net name=\"mlx5_0\" keep=\"0\"/></nic></pci>\n"
      "    <nic><net name=\"eth0\" keep=\"1\" dev=\"1\"/></nic>\n"
      "  </cpu>\n"
      "  <cpu numaid=\"1\"><pci busid=\"0000:80:00.0\"/></cpu>\n"
      "  <name-unknown/>\n"
      "</system>\n");
  EXPECT_EQ(trimXml(xml), 2);
  EXPECT_EQ(xml.toString(),
            "<system version=\"1\">\n"
            "  <cpu numaid=\"0\">\n"
            "    <pci busid=\"0000:10:00.0\">\n"
            "      <pci busid=\"0000:11:00.0\">\n"
            "        <gpu dev=\"0\" rank=\"0\">\n"
            // Nothing under a kept element is visited: its children keep their marks.
            "          <nvlink target=\"0000:12:00.0\" keep=\"1\"/>\n"
            "        </gpu>\n"
            "      </pci>\n"
            "      <pcilink target=\"0000:20:00.0\"/>\n"
            "    </pci>\n"
            "    <nic>\n"
            "      <net name=\"eth0\" dev=\"1\"/>\n"
            "    </nic>\n"
            "  </cpu>\n"
            "  <name-unknown/>\n"
            "</system>\n");
}

TEST_F(TopoFuse, TrimWithoutMarksLeavesOnlyTheSkeleton) {
  TopoXml xml = parse(kRank0);
  EXPECT_EQ(trimXml(xml), 0);
  EXPECT_EQ(xml.toString(), "<system version=\"1\"/>\n");
  TopoXml empty;
  EXPECT_EQ(trimXml(empty), 0);
}

}  // namespace
}  // namespace weft::topo
