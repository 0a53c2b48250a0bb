// `weft topo detect/fuse/show` as a user runs them, and detection on this very machine compared
// with what hwloc's own `lstopo` reports.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/topo/detect.h"
#include "core/topo/system_build.h"
#include "core/topo/xml.h"
#include "tests/support/corpus.h"
#include "tests/support/tool.h"
#include "tests/support/log_capture.h"

namespace weft::topo {
namespace {

namespace fs = std::filesystem;

using Outcome = test::ToolOutcome;
Outcome run(const std::string& command) { return test::runCommand(command); }
std::string weft() { return test::weftTool(); }

class TopoCli : public test::WeftTest {
 protected:
  void SetUp() override {
    test::WeftTest::SetUp();
    char tmpl[] = "/tmp/weft-cli-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    test::WeftTest::TearDown();
  }
  std::string file(const std::string& name, const std::string& content) {
    fs::path p = dir_ / name;
    std::ofstream(p) << content;
    return p.string();
  }
  fs::path dir_;
};

const char* kRank0 =
    "<system version=\"1\">\n"
    "  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"143\" modelid=\"49\">\n"
    "    <pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"0\"/>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "</system>\n";
const char* kRank1 =
    "<system version=\"1\">\n"
    "  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"143\" modelid=\"49\">\n"
    "    <pci busid=\"0000:12:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"0\"/>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "</system>\n";

TEST_F(TopoCli, FuseWritesTheFusedFileAndShowReadsIt) {
  std::string a = file("rank0.xml", kRank0), b = file("rank1.xml", kRank1);
  std::string out = (dir_ / "node.xml").string();
  Outcome r = run(weft() + " topo fuse " + a + " " + b + " -o " + out);
  ASSERT_EQ(r.rc, 0) << r.out;
  auto fused = TopoXml::load(out);
  ASSERT_TRUE(fused.isOk()) << fused.status().toString();
  const XmlNode* cpu = fused->root()->child("cpu");
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(cpu->children().size(), 2u);
  EXPECT_EQ(cpu->children()[0]->get("busid"), "0000:11:00.0");
  EXPECT_EQ(cpu->children()[1]->get("busid"), "0000:12:00.0");
  Outcome show = run(weft() + " topo show " + out);
  ASSERT_EQ(show.rc, 0) << show.out;
  EXPECT_NE(show.out.find("- GPU/0-12000 (1)"), std::string::npos) << show.out;
}

TEST_F(TopoCli, FuseToStdoutFollowsArgumentOrder) {
  std::string a = file("rank0.xml", kRank0), b = file("rank1.xml", kRank1);
  Outcome r = run(weft() + " topo fuse " + b + " " + a + " -o -");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_LT(r.out.find("0000:12:00.0"), r.out.find("0000:11:00.0")) << r.out;
}

TEST_F(TopoCli, FuseRefusesABadInputAndWritesNothing) {
  std::string a = file("rank0.xml", kRank0);
  std::string g = file("graph.xml", "<graphs version=\"1\">\n  <graph id=\"0\"/>\n</graphs>\n");
  std::string out = (dir_ / "node.xml").string();
  Outcome r = run(weft() + " topo fuse " + a + " " + g + " -o " + out);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find(g + ":1: <graphs version=\"1\">: root element is <graphs>"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  Outcome usage = run(weft() + " topo fuse " + a);
  EXPECT_EQ(usage.rc, 2) << usage.out;
  EXPECT_NE(usage.out.find("--output is required"), std::string::npos) << usage.out;
}

TEST_F(TopoCli, HelpTeachesTheRules) {
  Outcome fuse = run(weft() + " topo fuse --help");
  EXPECT_EQ(fuse.rc, 0);
  for (const char* words : {"local-rank order", "same attributes", "atomically", "Example"})
    EXPECT_NE(fuse.out.find(words), std::string::npos) << words << "\n" << fuse.out;
  Outcome detect = run(weft() + " topo detect --help");
  EXPECT_EQ(detect.rc, 0);
  for (const char* words : {"NCCL_TOPO_FILE", "--net", "--trim", "NVML", "Example"})
    EXPECT_NE(detect.out.find(words), std::string::npos) << words << "\n" << detect.out;
}

// Bus ids of hwloc's PCI devices and NUMA node numbers, from `lstopo-no-graphics --of xml`.
struct Lstopo {
  std::set<std::string> pciBusIds;
  std::set<std::string> numaIds;
};

void collect(const XmlNode& n, Lstopo& out) {
  if (n.name() == "object" && n.get("type") == "PCIDev") out.pciBusIds.insert(n.get("pci_busid"));
  if (n.name() == "object" && n.get("type") == "NUMANode") out.numaIds.insert(n.get("os_index"));
  for (const auto& c : n.children()) collect(*c, out);
}

std::set<std::string> detectedBusIds(const XmlNode& n, std::set<std::string> out = {}) {
  if (n.name() == "pci") out.insert(n.get("busid"));
  for (const auto& c : n.children()) out = detectedBusIds(*c, std::move(out));
  return out;
}

TEST_F(TopoCli, DetectContainsEveryPciDeviceAndNumaNodeLstopoShows) {
  Outcome which = run("command -v lstopo-no-graphics");
  if (which.rc != 0) GTEST_SKIP() << "lstopo-no-graphics (hwloc-nox) is not installed";
  Outcome ls = run("lstopo-no-graphics --of xml -");
  ASSERT_EQ(ls.rc, 0) << ls.out;
  auto lsXml = TopoXml::parse(ls.out, "lstopo.xml");
  ASSERT_TRUE(lsXml.isOk()) << lsXml.status().toString();
  Lstopo expected;
  collect(*lsXml->root(), expected);

  std::string out = (dir_ / "here.xml").string();
  Outcome detect = run("env -u NCCL_TOPO_FILE " + weft() + " topo detect -o " + out);
  ASSERT_EQ(detect.rc, 0) << detect.out;
  auto xml = TopoXml::load(out);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  std::set<std::string> found = detectedBusIds(*xml->root());
  for (const std::string& busId : expected.pciBusIds) EXPECT_EQ(found.count(busId), 1u) << busId << " missing:\n" << xml->toString();
  // Every NUMA node hwloc shows has its <cpu>, unless the kernel gave no device a NUMA node (a
  // virtual machine): then, as in NCCL, one <cpu numaid="-1"> holds every device.
  bool numaUnknown = !expected.pciBusIds.empty();
  for (const std::string& busId : expected.pciBusIds) {
    std::ifstream numaFile("/sys/bus/pci/devices/" + busId + "/numa_node");
    int numa = -1;
    numaFile >> numa;
    if (numa >= 0) numaUnknown = false;
  }
  if (numaUnknown) {
    std::vector<XmlNode*> cpus;
    findAll(*xml->root(), "cpu", cpus);
    ASSERT_EQ(cpus.size(), 1u) << xml->toString();
    EXPECT_EQ(cpus[0]->get("numaid"), "-1");
  } else {
    for (const std::string& numa : expected.numaIds)
      EXPECT_NE(xml->root()->childWith("cpu", "numaid", numa), nullptr) << "NUMA node " << numa << " missing";
  }
  RecordProperty("lstopo_pci_devices", static_cast<int>(expected.pciBusIds.size()));

  // weft reads it back, GPUs or not.
  auto system = buildSystem(*xml);
  ASSERT_TRUE(system.isOk()) << system.status().toString();
  Outcome show = run(weft() + " topo show " + out);
  ASSERT_EQ(show.rc, 0) << show.out;
  EXPECT_NE(show.out.find("NCCL INFO === System : maxBw"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("NCCL INFO CPU/0-"), std::string::npos) << show.out;
  if (system->count(NodeType::kGpu) == 0) {
    EXPECT_NE(show.out.find("has no GPU with a rank"), std::string::npos) << show.out;
  }
}

}  // namespace
}  // namespace weft::topo
