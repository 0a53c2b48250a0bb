// Malformed topology files: each gives one clear error (file, line, element, what was expected)
// and never a crash or a half-built system.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/topo/system_build.h"
#include "core/topo/xml.h"
#include "tests/support/log_capture.h"

namespace weft::topo {
namespace {

struct Malformed {
  const char* name;
  std::string text;
  std::vector<std::string> expected;  // fragments of the error message
  bool strict = false;
};

// A valid one-GPU document around `body` (the children of the switch), for cases about one element.
std::string inSwitch(const std::string& body) {
  return "<system version=\"1\">\n"
         "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\" affinity=\"ff\">\n"
         "    <pci busid=\"0000:10:00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n" +
         body +
         "    </pci>\n"
         "  </cpu>\n"
         "</system>\n";
}

std::string gpuAt(const std::string& busId, const std::string& gpuAttrs, const std::string& inner = "") {
  std::string open = "      <pci busid=\"" + busId + "\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n";
  return open + "        <gpu " + gpuAttrs + (inner.empty() ? "/>\n" : ">\n" + inner + "        </gpu>\n") + "      </pci>\n";
}

// A literal with embedded NULs, whole.
template <size_t N>
std::string bytes(const char (&text)[N]) {
  return std::string(text, N - 1);
}

std::string deepNesting(int levels) {
  std::string s = "<system version=\"1\">";
  for (int i = 0; i < levels; ++i) s += "<x>";
  for (int i = 0; i < levels; ++i) s += "</x>";
  return s + "</system>";
}

std::vector<Malformed> cases() {
  const std::string okGpu = "dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"0\"";
  return {
      {"EmptyFile", "", {"bad.xml", "no XML element found (empty, truncated or not XML)"}},
      {"OnlyWhitespace", "\n\n   \n", {"bad.xml", "no XML element found"}},
      {"OnlyAComment", "<!-- <system version=\"1\"/> -->\n", {"bad.xml", "no XML element found"}},
      {"Truncated", "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"x86_64\"", {"bad.xml:2:", "malformed XML"}},
      {"UnclosedElement", "<system version=\"1\">\n  <cpu numaid=\"0\">\n</system>\n", {"bad.xml:3:", "malformed XML"}},
      {"BinaryGarbage", bytes("\x7f" "ELF\x02\x01\x01\0\0\0<\xff\xfe"), {"bad.xml", "no XML element found"}},
      {"BinaryAfterRoot", bytes("<system version=\"1\">\n\x01\x02<\0\xff</system>"), {"bad.xml:2:", "malformed XML"}},
      {"TwoRoots", "<system version=\"1\"/>\n<system version=\"1\"/>\n", {"bad.xml:2:", "<system>", "a second top element"}},
      {"WrongVersion", "<system version=\"2\">\n</system>\n", {"bad.xml:1:", "<system version=\"2\">", "wrong version 2, 1 needed"}},
      {"MissingVersion", "<system name=\"x\"/>\n", {"bad.xml:1:", "<system", "missing version attribute"}},
      {"WrongRoot", "<graphs version=\"1\">\n</graphs>\n", {"bad.xml:1:", "root element is <graphs>", "expected <system version=\"1\">"}},
      {"DuplicateAttribute", "<system version=\"1\">\n  <cpu numaid=\"0\" numaid=\"1\"/>\n</system>\n", {"bad.xml:2:", "<cpu>", "attribute 'numaid' appears twice"}},
      {"HugeAttribute", "<system version=\"1\">\n  <cpu numaid=\"0\" affinity=\"" + std::string(100000, 'f') + "\"/>\n</system>\n",
       {"bad.xml:2:", "<cpu>", "attribute 'affinity' value is 100000 characters long", "at most 253"}},
      // NCCL 2.28.9's limits, one past each: a value of 254, an attribute name of 255, an element
      // name of 254 characters (NCCL: "Error : value/name ... too long (max 255)").
      {"ValueOnePastNccl", "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"x86_64\" foo=\"" + std::string(254, 'v') + "\"/>\n</system>\n",
       {"bad.xml:2:", "<cpu>", "attribute 'foo' value is 254 characters long", "at most 253"}},
      {"AttributeNameOnePastNccl", "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"x86_64\" " + std::string(255, 'k') + "=\"1\"/>\n</system>\n",
       {"bad.xml:2:", "<cpu>", "name is 255 characters long", "at most 254"}},
      {"HugeElementName", "<system version=\"1\">\n  <" + std::string(300, 'p') + "/>\n</system>\n",
       {"bad.xml:2:", "element name is 300 characters long", "at most 253"}},
      {"ElementNameOnePastNccl", "<system version=\"1\">\n  <" + std::string(254, 'p') + "/>\n</system>\n",
       {"bad.xml:2:", "element name is 254 characters long"}},
      {"DeeplyNested", deepNesting(100000), {"bad.xml:1:", "<x>", "nested deeper than 64 levels"}},
      {"MissingNumaId", "<system version=\"1\">\n  <cpu arch=\"x86_64\"/>\n</system>\n", {"bad.xml:2:", "<cpu arch=\"x86_64\">", "missing attribute numaid", "integer"}},
      {"NonNumericNumaId", "<system version=\"1\">\n  <cpu numaid=\"zero\" arch=\"arm64\"/>\n</system>\n", {"bad.xml:2:", "<cpu numaid=\"zero\">", "numaid=\"zero\": expected an integer"}},
      {"MissingArch", "<system version=\"1\">\n  <cpu numaid=\"0\"/>\n</system>\n", {"bad.xml:2:", "<cpu numaid=\"0\">", "missing attribute arch"}},
      {"DuplicateCpu", "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"arm64\"/>\n  <cpu numaid=\"0\" arch=\"arm64\"/>\n</system>\n",
       {"bad.xml:3:", "<cpu numaid=\"0\">", "duplicate CPU id 0"}},
      {"BadBusId", inSwitch("      <pci busid=\"0000:zz:00.0\" class=\"0x060400\" link_speed=\"8 GT/s\" link_width=\"16\"/>\n"),
       {"bad.xml:4:", "<pci busid=\"0000:zz:00.0\">", "bad bus id", "0000:8d:00.0"}},
      {"MissingBusId", inSwitch("      <pci class=\"0x060400\" link_speed=\"8 GT/s\" link_width=\"16\"/>\n"), {"bad.xml:4:", "<pci class=\"0x060400\">", "missing attribute busid"}},
      {"MissingClass", inSwitch("      <pci busid=\"0000:11:00.0\" link_speed=\"8 GT/s\" link_width=\"16\"/>\n"), {"bad.xml:4:", "<pci busid=\"0000:11:00.0\">", "missing attribute class"}},
      {"DuplicatePciId", inSwitch("      <pci busid=\"0000:11:00.0\" class=\"0x060400\" link_speed=\"8 GT/s\" link_width=\"16\"/>\n"
                                  "      <pci busid=\"0000:11:00.0\" class=\"0x060400\" link_speed=\"8 GT/s\" link_width=\"16\"/>\n"),
       {"bad.xml:5:", "<pci busid=\"0000:11:00.0\">", "duplicate PCI id 11000"}},
      {"NonNumericLinkWidth", inSwitch("      <pci busid=\"0000:11:00.0\" class=\"0x060400\" link_speed=\"8 GT/s\" link_width=\"x16\"/>\n"),
       {"bad.xml:4:", "<pci busid=\"0000:11:00.0\">", "link_width=\"x16\": expected an integer"}},
      {"AbsurdLinkWidth", inSwitch("      <pci busid=\"0000:11:00.0\" class=\"0x060400\" link_speed=\"8 GT/s\" link_width=\"4096\"/>\n"),
       {"bad.xml:4:", "<pci busid=\"0000:11:00.0\">", "link_width=\"4096\"", "0 to 32"}},
      {"NegativeLinkWidth", inSwitch("      <pci busid=\"0000:11:00.0\" class=\"0x060400\" link_speed=\"8 GT/s\" link_width=\"-4\"/>\n"),
       {"bad.xml:4:", "link_width=\"-4\"", "0 to 32"}},
      {"MissingLinkSpeed", inSwitch("      <pci busid=\"0000:11:00.0\" class=\"0x060400\" link_width=\"16\"/>\n"), {"bad.xml:4:", "missing attribute link_speed"}},
      {"NonNumericRank", inSwitch(gpuAt("0000:11:00.0", "dev=\"0\" sm=\"90\" rank=\"zero\" gdr=\"0\"")),
       {"bad.xml:5:", "<gpu dev=\"0\">", "rank=\"zero\": expected an integer"}},
      {"MissingSm", inSwitch(gpuAt("0000:11:00.0", "dev=\"0\" rank=\"0\" gdr=\"0\"")), {"bad.xml:5:", "<gpu dev=\"0\">", "missing attribute sm"}},
      {"DuplicateRank", inSwitch(gpuAt("0000:11:00.0", okGpu) + gpuAt("0000:12:00.0", "dev=\"1\" sm=\"90\" rank=\"0\" gdr=\"0\"")),
       {"bad.xml:8:", "<gpu dev=\"1\">", "duplicate rank 0"}},
      {"DuplicateGpu", inSwitch(gpuAt("0000:11:00.0", okGpu) + gpuAt("0000:11:00.0", "dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"0\"")),
       {"bad.xml:7:", "<pci busid=\"0000:11:00.0\">", "duplicate GPU id 11000"}},
      {"DanglingNvlinkStrict", inSwitch(gpuAt("0000:11:00.0", okGpu, "          <nvlink target=\"0000:99:00.0\" count=\"2\" tclass=\"0x030200\"/>\n")),
       {"bad.xml:6:", "<nvlink target=\"0000:99:00.0\">", "NVLink target 0000:99:00.0 is not a GPU of this topology"}, true},
      {"NvlinkBadTarget", inSwitch(gpuAt("0000:11:00.0", okGpu, "          <nvlink target=\"gpu1\" count=\"2\" tclass=\"0x030200\"/>\n")),
       {"bad.xml:6:", "<nvlink target=\"gpu1\">", "bad bus id"}},
      {"NvlinkNonNumericCount", inSwitch(gpuAt("0000:11:00.0", okGpu, "          <nvlink target=\"0000:99:00.0\" count=\"many\" tclass=\"0x068000\"/>\n")),
       {"bad.xml:6:", "<nvlink target=\"0000:99:00.0\">", "count=\"many\": expected an integer"}},
      {"NvlinkOutsideGpuStrict", inSwitch("      <nvlink target=\"0000:99:00.0\" count=\"2\" tclass=\"0x068000\"/>\n"),
       {"bad.xml:4:", "<nvlink target=\"0000:99:00.0\">", "<nvlink> inside <pci>: expected it inside <gpu>"}, true},
      {"NvlinkUnderCpuStrict", "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"arm64\">\n    <nvlink target=\"0000:99:00.0\" count=\"2\" tclass=\"0x068000\"/>\n  </cpu>\n</system>\n",
       {"bad.xml:3:", "<nvlink> inside <cpu>: expected it inside <gpu>"}, true},
      {"NvlinkOfAGpuWithoutRank", inSwitch(gpuAt("0000:11:00.0", "dev=\"0\" sm=\"90\"", "          <nvlink target=\"0000:99:00.0\" count=\"2\" tclass=\"0x068000\"/>\n")),
       {"bad.xml:6:", "<nvlink target=\"0000:99:00.0\">", "belongs to no GPU"}},
      {"C2cWithoutCount", inSwitch(gpuAt("0000:11:00.0", okGpu, "          <c2c bw=\"40000\"/>\n")),
       {"bad.xml:6:", "<c2c bw=\"40000\">", "missing attribute count"}},
      {"NonNumericNetSpeed",
       "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"arm64\">\n    <nic>\n      <net name=\"eth0\" dev=\"0\" speed=\"fast\"/>\n    </nic>\n  </cpu>\n</system>\n",
       {"bad.xml:4:", "<net name=\"eth0\">", "speed=\"fast\": expected an integer"}},
      {"NonNumericNetDev",
       "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"arm64\">\n    <nic>\n      <net name=\"eth0\" dev=\"first\"/>\n    </nic>\n  </cpu>\n</system>\n",
       {"bad.xml:4:", "<net name=\"eth0\">", "dev=\"first\": expected an integer"}},
      {"BadGuid",
       "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"arm64\">\n    <nic>\n      <net name=\"eth0\" dev=\"0\" guid=\"0xnothex\"/>\n    </nic>\n  </cpu>\n</system>\n",
       {"bad.xml:4:", "<net name=\"eth0\">", "guid=\"0xnothex\": expected a hexadecimal number"}},
      {"PcilinkUnderGpuStrict", inSwitch(gpuAt("0000:11:00.0", okGpu, "          <pcilink target=\"0000:20:00.0\"/>\n")),
       {"bad.xml:6:", "<pcilink target=\"0000:20:00.0\">", "<pcilink> inside <gpu>: expected it inside <pci>"}, true},
      {"PcilinkOutsideSwitch",
       inSwitch("      <pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"8 GT/s\" link_width=\"16\">\n"
                "        <pcilink target=\"0000:20:00.0\"/>\n"
                "        <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"0\"/>\n"
                "      </pci>\n"),
       {"bad.xml:5:", "<pcilink target=\"0000:20:00.0\">", "not inside a PCI switch"}},
      {"C2cNonNumericCount", inSwitch(gpuAt("0000:11:00.0", okGpu, "          <c2c bw=\"40000\" count=\"two\"/>\n")),
       {"bad.xml:6:", "<c2c bw=\"40000\">", "count=\"two\": expected an integer"}},
  };
}

class TopoMalformed : public test::WeftTest, public ::testing::WithParamInterface<Malformed> {};

TEST_P(TopoMalformed, FailsWithAClearMessage) {
  const Malformed& m = GetParam();
  Status error;
  auto xml = TopoXml::parse(m.text, "bad.xml");
  if (!xml.isOk()) {
    error = xml.status();
  } else {
    BuildOptions options;
    options.strict = m.strict;
    auto system = buildSystem(*xml, options);
    ASSERT_FALSE(system.isOk()) << "accepted:\n" << m.text.substr(0, 2000);
    error = system.status();
  }
  EXPECT_LT(error.message().size(), 1000u) << "messages quote values, not whole documents";
  for (const std::string& fragment : m.expected)
    EXPECT_NE(error.message().find(fragment), std::string::npos) << "missing \"" << fragment << "\" in: " << error.message();
}

INSTANTIATE_TEST_SUITE_P(Inputs, TopoMalformed, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Malformed>& p) { return std::string(p.param.name); });

TEST(TopoMalformedCount, AtLeastTwentyCases) { EXPECT_GE(cases().size(), 20u); }

// At NCCL 2.28.9's limits exactly (a 253-character value, a 254-character attribute name, a
// 253-character element name) NCCL loads the file; so does weft (an unknown element and
// attribute are ignored).
TEST(TopoMalformedLimits, LongestNamesAndValuesNcclReadsAreAccepted) {
  std::string text = "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"arm64\" foo=\"" + std::string(253, 'v') + "\" " +
                     std::string(254, 'k') + "=\"1\">\n    <" + std::string(253, 'p') + "/>\n  </cpu>\n</system>\n";
  auto xml = TopoXml::parse(text, "ok.xml");
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  auto system = buildSystem(*xml);
  ASSERT_TRUE(system.isOk()) << system.status().toString();
  EXPECT_EQ(system->count(NodeType::kCpu), 1);
}

// What NCCL's loader drops (misplaced elements of its format, unknown elements) is ignored
// unless --strict, and link_width="" (written by NCCL's detection without sysfs) reads as 0.
TEST(TopoMisplaced, IgnoredAsNcclIgnoresThem) {
  test::LogCapture capture;
  auto xml = TopoXml::parse(inSwitch("      <nvlink target=\"0000:99:00.0\" count=\"2\" tclass=\"0x068000\"/>\n"
                                     "      <net name=\"eth0\" dev=\"0\"/>\n"
                                     "      <xgmi target=\"0000:12:00.0\" count=\"7\"/>\n"
                                     "      <pci busid=\"0000:11:00.0\" class=\"0x010802\" link_speed=\"\" link_width=\"\"/>\n"),
                            "ok.xml");
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  auto system = buildSystem(*xml);
  ASSERT_TRUE(system.isOk()) << system.status().toString();
  EXPECT_EQ(system->count(NodeType::kGpu), 0);
  EXPECT_EQ(system->count(NodeType::kNvs), 0);
  EXPECT_EQ(system->count(NodeType::kPci), 2);
  BuildOptions strict;
  strict.strict = true;
  EXPECT_FALSE(buildSystem(*xml, strict).isOk());
}

}  // namespace
}  // namespace weft::topo
