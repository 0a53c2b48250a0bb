// Topology detection on a machine described by a fake sysfs tree and given GPUs, NICs and hwloc
// inventory: the XML must be what NCCL's detection rules produce, element for element and
// attribute for attribute.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/config/settings.h"
#include "core/topo/detect.h"
#include "core/topo/detect_cpu.h"
#include "core/topo/detect_host.h"
#include "core/topo/system_build.h"
#include "core/topo/xml_fuse.h"
#include "tests/support/log_capture.h"

namespace weft::topo {
namespace {

namespace fs = std::filesystem;

// A sysfs tree in a temporary directory, laid out as the kernel lays it out: devices nest under
// their bridges, class/pci_bus/<bus> links to the bridge's pci_bus/<bus>, and each device's
// `subsystem` links to bus/pci.
class FakeSysfs {
 public:
  FakeSysfs() {
    char tmpl[] = "/tmp/weft-sysfs-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    fs::create_directories(root_ / "bus/pci");
    fs::create_directories(root_ / "class/pci_bus");
  }
  ~FakeSysfs() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  std::string root() const { return root_.string(); }

  // `path`: from devices/, e.g. "pci0000:00/0000:00:01.0/0000:01:00.0".
  std::string device(const std::string& path, const std::map<std::string, std::string>& attrs) {
    fs::path dir = root_ / "devices" / path;
    fs::create_directories(dir);
    for (const auto& [k, v] : attrs) write(dir / k, v + "\n");
    std::string bdf = dir.filename().string();
    std::string bus = bdf.substr(0, 7);
    fs::path busDir = dir.parent_path() / "pci_bus" / bus;
    fs::create_directories(busDir);
    if (!fs::exists(fs::symlink_status(root_ / "class/pci_bus" / bus))) fs::create_directory_symlink(busDir, root_ / "class/pci_bus" / bus);
    fs::create_directory_symlink(root_ / "bus/pci", dir / "subsystem");
    return dir.string();
  }

  void file(const std::string& path, const std::string& content) {
    fs::create_directories((root_ / path).parent_path());
    write(root_ / path, content);
  }
  void link(const std::string& path, const std::string& target) {
    fs::create_directories((root_ / path).parent_path());
    fs::create_directory_symlink(target, root_ / path);
  }
  void dir(const std::string& path) { fs::create_directories(root_ / path); }

 private:
  static void write(const fs::path& p, const std::string& content) { std::ofstream(p) << content; }
  fs::path root_;
};

std::map<std::string, std::string> ids(const std::string& cls, const std::string& vendor, const std::string& device,
                                       const std::string& subDevice) {
  return {{"class", cls}, {"vendor", vendor}, {"device", device}, {"subsystem_vendor", vendor}, {"subsystem_device", subDevice}};
}

std::map<std::string, std::string> with(std::map<std::string, std::string> m, const std::string& speed,
                                        const std::string& width, const std::string& numa) {
  if (!speed.empty()) m["max_link_speed"] = speed;
  if (!width.empty()) m["max_link_width"] = width;
  m["numa_node"] = numa;
  return m;
}

// Two sockets. Socket 0: a Broadcom switch with a GPU and a NIC (whose port is slower than the
// NIC), an integrated SATA controller, and a virtio NIC. Socket 1: an NVMe drive.
class TopoDetect : public test::WeftTest {
 protected:
  void SetUp() override {
    test::WeftTest::SetUp();
    const std::string gen5 = "32.0 GT/s PCIe", gen4 = "16.0 GT/s PCIe", gen3 = "8.0 GT/s PCIe";
    const std::string rp = "pci0000:00/0000:00:01.0";
    sys_.device(rp, with(ids("0x060400", "0x8086", "0x347a", "0x0000"), gen5, "16", "0"));
    sys_.device(rp + "/0000:01:00.0", with(ids("0x060400", "0x1000", "0xc030", "0x100b"), gen5, "16", "0"));
    sys_.device(rp + "/0000:01:00.0/0000:02:00.0", with(ids("0x060400", "0x1000", "0xc030", "0x100b"), gen5, "16", "0"));
    sys_.device(rp + "/0000:01:00.0/0000:02:00.0/0000:03:00.0", with(ids("0x030200", "0x10de", "0x2330", "0x16c1"), gen5, "16", "0"));
    sys_.device(rp + "/0000:01:00.0/0000:02:01.0", with(ids("0x060400", "0x1000", "0xc030", "0x100b"), gen4, "8", "0"));
    nicPath_ = sys_.device(rp + "/0000:01:00.0/0000:02:01.0/0000:04:00.0", with(ids("0x020700", "0x15b3", "0x1021", "0x0023"), gen5, "16", "0"));
    std::string sata = sys_.device("pci0000:00/0000:00:1f.2", with(ids("0x010601", "0x8086", "0xa352", "0x7270"), "", "", "0"));
    sys_.device("pci0000:80/0000:80:01.0", with(ids("0x060400", "0x8086", "0x347a", "0x0000"), gen4, "16", "1"));
    sys_.device("pci0000:80/0000:80:01.0/0000:81:00.0", with(ids("0x010802", "0x144d", "0xa80a", "0xa801"), gen3, "4", "1"));
    sys_.file("devices/system/node/node0/cpumap", "ffff\n");
    sys_.file("devices/system/node/node1/cpumap", "ffff0000\n");
    sys_.dir("kernel/pci_switch_link/virtual_switch_links/0000:01:00.0/0000:81:00.0");
    sys_.dir("kernel/pci_switch_link/virtual_switch_links/0000:01:00.0/0000:ee:00.0");  // not present: skipped
    sys_.dir("bus/virtio");
    sys_.dir("devices/pci0000:00/0000:00:1f.2/virtio0");
    sys_.link("devices/pci0000:00/0000:00:1f.2/virtio0/subsystem", sys_.root() + "/bus/virtio");
    sys_.link("class/net/ib0/device", nicPath_);
    sys_.link("class/net/eth0/device", sata + "/virtio0");
    sys_.file("class/net/eth0/speed", "25000\n");
  }

  DetectOptions options() const {
    DetectOptions o;
    o.sysfsRoot = sys_.root();
    o.nvmlLibrary.clear();
    o.defaultTopoFile.clear();
    o.gpus = std::vector<NvmlGpu>{};
    o.inventory = HwlocInventory{};
    o.cpu = CpuIdentity{"x86_64", "GenuineIntel", 6, 143};
    o.hostHash = 0x1234;
    return o;
  }

  // GPU 0 in the switch: three links to an NVSwitch (invisible to sysfs), one to the NIC, C2C.
  // GPU 1 is not in sysfs; its third link is beyond what sm80 has.
  static std::vector<NvmlGpu> gpus() {
    NvmlGpu g0{0, "0000:03:00.0", 90, {{0, "fffffff:ffff:ff"}, {1, "fffffff:ffff:ff"}, {2, "fffffff:ffff:ff"}, {3, "0000:04:00.0"}}, 2, 40000};
    NvmlGpu g1{1, "0000:07:00.0", 80, {{0, "0000:03:00.0"}, {1, "0000:03:00.0"}, {13, "0000:03:00.0"}}, 1, 40000};
    return {g0, g1};
  }

  std::vector<NetDevice> nets() const {
    NetDevice ib;
    ib.name = "ib0";
    ib.pciPath = nicPath_;
    ib.speed = 400000;
    ib.port = 1;
    ib.guid = 0xabc;
    ib.maxConn = 131072;
    ib.gdr = true;
    auto eth = socketNetDevice(Sysfs(sys_.root()), "eth0", 1);
    EXPECT_TRUE(eth.isOk()) << eth.status().toString();
    return {ib, *eth};
  }

  static HwlocInventory inventory() {
    return {{{"0", "000000ff"}, {"1", "0000ff00"}, {"2", "ff000000"}},
            {{"0000:03:00.0", 0x0302}, {"0000:00:1f.2", 0x0106}, {"0000:81:00.0", 0x0108}, {"0000:c0:00.0", 0x0200}}};
  }

  // Detection of the first GPU only, starting from NCCL_TOPO_FILE=base.
  Result<TopoXml> detectWithBase(const std::string& base) const {
    config::Settings settings;
    WEFT_TRY(settings.set("NCCL_TOPO_FILE", base));
    DetectOptions o = options();
    o.settings = &settings;
    o.gpus = std::vector<NvmlGpu>{gpus()[0]};
    return detectTopology(o);
  }

  FakeSysfs sys_;
  std::string nicPath_;
};

const char* kExpected =
    "<system version=\"1\">\n"
    "  <cpu host_hash=\"0x1234\" numaid=\"0\" affinity=\"ffff\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:00:1f.2\" class=\"0x010601\" vendor=\"0x8086\" device=\"0xa352\" subsystem_vendor=\"0x8086\" subsystem_device=\"0x7270\" link_speed=\"\" link_width=\"0\"/>\n"
    "    <pci busid=\"0000:01:00.0\" class=\"0x060400\" vendor=\"0x1000\" device=\"0xc030\" subsystem_vendor=\"0x1000\" subsystem_device=\"0x100b\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <pci busid=\"0000:03:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\" subsystem_vendor=\"0x10de\" subsystem_device=\"0x16c1\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "        <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"0\">\n"
    "          <nvlink target=\"fffffff:ffff:ff\" count=\"3\" tclass=\"0x068000\"/>\n"
    "          <nvlink target=\"0000:04:00.0\" count=\"1\" tclass=\"0x020700\"/>\n"
    "          <c2c bw=\"40000\" count=\"2\"/>\n"
    "        </gpu>\n"
    "      </pci>\n"
    "      <pcilink target=\"0000:81:00.0\"/>\n"
    "      <pci busid=\"0000:04:00.0\" class=\"0x020700\" vendor=\"0x15b3\" device=\"0x1021\" subsystem_vendor=\"0x15b3\" subsystem_device=\"0x0023\" link_speed=\"16.0 GT/s PCIe\" link_width=\"8\">\n"
    "        <nic>\n"
    "          <net name=\"ib0\" dev=\"0\" latency=\"0\" speed=\"400000\" port=\"1\" guid=\"0xabc\" maxconn=\"131072\" gdr=\"1\"/>\n"
    "        </nic>\n"
    "      </pci>\n"
    "    </pci>\n"
    "    <nic>\n"
    "      <net name=\"eth0\" dev=\"1\" latency=\"0\" speed=\"25000\" port=\"0\" guid=\"0x1\" maxconn=\"65536\" gdr=\"0\"/>\n"
    "    </nic>\n"
    "  </cpu>\n"
    "  <cpu host_hash=\"0x1234\" numaid=\"-1\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:07:00.0\" class=\"0x03\" link_speed=\"\" link_width=\"\">\n"
    "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"0\">\n"
    "        <nvlink target=\"0000:03:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
    "      </gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:c0:00.0\" class=\"0x020000\" link_speed=\"\" link_width=\"\"/>\n"
    "  </cpu>\n"
    "  <cpu host_hash=\"0x1234\" numaid=\"1\" affinity=\"ffff0000\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:81:00.0\" class=\"0x010802\" vendor=\"0x144d\" device=\"0xa80a\" subsystem_vendor=\"0x144d\" subsystem_device=\"0xa801\" link_speed=\"8.0 GT/s PCIe\" link_width=\"4\"/>\n"
    "  </cpu>\n"
    "  <cpu host_hash=\"0x1234\" numaid=\"2\" affinity=\"ff000000\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\"/>\n"
    "</system>\n";

TEST_F(TopoDetect, BuildsNcclsTreeWithNcclsAttributesInNcclsOrder) {
  DetectOptions o = options();
  o.gpus = gpus();
  o.nets = nets();
  o.inventory = inventory();
  auto xml = detectTopology(o);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  EXPECT_EQ(xml->toString(), kExpected);
  // And the result is a topology NCCL (and weft) can build a system from.
  auto system = buildSystem(*xml);
  ASSERT_TRUE(system.isOk()) << system.status().toString();
  EXPECT_EQ(system->count(NodeType::kGpu), 2);
  EXPECT_EQ(system->count(NodeType::kNet), 2);
  EXPECT_EQ(system->count(NodeType::kCpu), 4);
}

TEST_F(TopoDetect, MarkKeepAndTrimLeaveOnlyGpuAndNetBranches) {
  DetectOptions o = options();
  o.gpus = gpus();
  o.nets = nets();
  o.inventory = inventory();
  o.markKeep = true;
  auto xml = detectTopology(o);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  EXPECT_EQ(trimXml(*xml), 4);
  std::string text = xml->toString();
  EXPECT_EQ(text.find("keep="), std::string::npos);
  for (const char* gone : {"0000:00:1f.2", "busid=\"0000:81:00.0\"", "0000:c0:00.0", "numaid=\"1\"", "numaid=\"2\""})
    EXPECT_EQ(text.find(gone), std::string::npos) << gone << " should be trimmed:\n" << text;
  for (const char* kept : {"0000:03:00.0\" class", "0000:07:00.0", "name=\"ib0\"", "name=\"eth0\"", "<pcilink"})
    EXPECT_NE(text.find(kept), std::string::npos) << kept << " should stay:\n" << text;
}

TEST_F(TopoDetect, TopoFileIsTheBaseThatDetectionCompletes) {
  const std::string base = sys_.root() + "/base.xml";
  std::ofstream(base) << "<system version=\"1\">\n"
                         "  <cpu host_hash=\"0xdead\" numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"143\" modelid=\"49\">\n"
                         "    <pci busid=\"0000:03:00.0\" class=\"0x0302ff\" link_speed=\"16.0 GT/s PCIe\">\n"
                         "      <gpu dev=\"5\" sm=\"80\" rank=\"9\" gdr=\"1\">\n"
                         "        <nvlink target=\"0000:99:00.0\" count=\"12\" tclass=\"0x068000\"/>\n"
                         "      </gpu>\n"
                         "    </pci>\n"
                         "  </cpu>\n"
                         "</system>\n";
  auto xml = detectWithBase(base);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  EXPECT_EQ(xml->toString(),
            "<system version=\"1\">\n"
            "  <cpu host_hash=\"0x1234\" numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"143\" modelid=\"49\" affinity=\"ffff\">\n"
            "    <pci busid=\"0000:03:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" vendor=\"0x10de\" device=\"0x2330\" subsystem_vendor=\"0x10de\" subsystem_device=\"0x16c1\" link_width=\"16\">\n"
            "      <gpu dev=\"5\" sm=\"80\" rank=\"0\" gdr=\"1\">\n"
            "        <nvlink target=\"0000:99:00.0\" count=\"12\" tclass=\"0x068000\"/>\n"
            "      </gpu>\n"
            "    </pci>\n"
            "  </cpu>\n"
            "</system>\n");
}

TEST_F(TopoDetect, GpuMarkedDevMinusOneIsNoGpu) {
  const std::string base = sys_.root() + "/base.xml";
  std::ofstream(base) << "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:03:00.0\" class=\"0x030200\"><gpu dev=\"-1\"/></pci></cpu></system>";
  auto xml = detectWithBase(base);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  EXPECT_EQ(xml->toString().find("rank="), std::string::npos) << xml->toString();
}

TEST_F(TopoDetect, UnreadableTopoFileIsSkippedAndMalformedOneIsAnError) {
  config::Settings settings;
  ASSERT_TRUE(settings.set("NCCL_TOPO_FILE", sys_.root() + "/missing.xml").isOk());
  DetectOptions o = options();
  o.settings = &settings;
  auto xml = detectTopology(o);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  EXPECT_EQ(xml->toString(), "<system version=\"1\"/>\n");

  const std::string bad = sys_.root() + "/bad.xml";
  std::ofstream(bad) << "<system version=\"1\">\n  <cpu numaid=\"0\">\n";
  ASSERT_TRUE(settings.set("NCCL_TOPO_FILE", bad).isOk());
  auto err = detectTopology(o);
  ASSERT_FALSE(err.isOk());
  EXPECT_NE(err.status().message().find(bad + ":2:"), std::string::npos) << err.status().message();

  std::ofstream(bad, std::ios::trunc) << "<graphs version=\"1\"/>\n";
  err = detectTopology(o);
  ASSERT_FALSE(err.isOk());
  EXPECT_NE(err.status().message().find("root element is <graphs>"), std::string::npos) << err.status().message();
}

TEST_F(TopoDetect, NetAlreadyInTheDocumentKeepsItsPlaceAndAttributes) {
  DetectOptions o = options();
  o.nets = nets();
  o.nets[0].pciPath.clear();  // virtual this time: first CPU
  o.nets.push_back(o.nets[0]);
  o.nets[2].speed = 1;  // same name again: found, only dev changes
  auto xml = detectTopology(o);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  EXPECT_EQ(xml->toString(),
            "<system version=\"1\">\n"
            "  <cpu host_hash=\"0x1234\" numaid=\"-1\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
            "    <nic>\n"
            "      <net name=\"ib0\" dev=\"2\" latency=\"0\" speed=\"400000\" port=\"1\" guid=\"0xabc\" maxconn=\"131072\" gdr=\"1\"/>\n"
            "      <net name=\"eth0\" dev=\"1\" latency=\"0\" speed=\"25000\" port=\"0\" guid=\"0x1\" maxconn=\"65536\" gdr=\"0\"/>\n"
            "    </nic>\n"
            "  </cpu>\n"
            "</system>\n");
}

TEST_F(TopoDetect, UnknownInterfaceIsAnError) {
  auto net = socketNetDevice(Sysfs(sys_.root()), "eth9", 0);
  ASSERT_FALSE(net.isOk());
  EXPECT_NE(net.status().message().find("no network interface \"eth9\""), std::string::npos) << net.status().message();
}

TEST(TopoDetectHost, HashIsNcclsDjb2aOfTheIdentity) {
  EXPECT_EQ(ncclStringHash(""), 5381u);
  EXPECT_EQ(ncclStringHash("a"), (5381u * 33u) ^ 'a');
  EXPECT_EQ(ncclStringHash("ab"), (((5381u * 33u) ^ 'a') * 33u) ^ 'b');
  // A byte above 0x7f is a negative char on x86: NCCL xors its sign-extended value.
  uint64_t high = (5381u * 33u) ^ static_cast<uint64_t>(static_cast<int64_t>(static_cast<char>(0xe9)));
  EXPECT_EQ(ncclStringHash("\xe9"), high);
  EXPECT_EQ(formatHostHash(0), "0");
  EXPECT_EQ(formatHostHash(0x1a2b), "0x1a2b");
}

TEST(TopoDetectHost, IdentityIsHostIdOrHostNameAndBootId) {
  std::string id = "rack7-node3";
  EXPECT_EQ(hostIdentity(&id, "/nonexistent"), "rack7-node3");
  char name[1024] = {};
  ASSERT_EQ(gethostname(name, sizeof(name) - 1), 0);
  EXPECT_EQ(hostIdentity(nullptr, "/nonexistent"), std::string(name));
  char tmpl[] = "/tmp/weft-bootid-XXXXXX";
  int fd = ::mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(tmpl) << "6f1c2e0a-1b2c-4d5e-8f90-123456789abc\n";
  EXPECT_EQ(hostIdentity(nullptr, tmpl), std::string(name) + "6f1c2e0a-1b2c-4d5e-8f90-123456789abc");
  EXPECT_EQ(hostHash(nullptr, tmpl), ncclStringHash(std::string(name) + "6f1c2e0a-1b2c-4d5e-8f90-123456789abc"));
  ::unlink(tmpl);
}

TEST(TopoDetectCpu, CpuidDecodingMatchesNcclsDumps) {
  // AMD EPYC 7003 (family 19h): base 0xf + extended 0xa, NCCL writes familyid="175".
  EXPECT_EQ(cpuidFamilyModel(0x00a00f11), (std::pair<int, int>{175, 1}));
  // AMD EPYC 7002 (family 17h, model 31h): familyid="143" modelid="49", as in the corpus.
  EXPECT_EQ(cpuidFamilyModel(0x00830f10), (std::pair<int, int>{143, 49}));
  // Intel Sapphire Rapids: family 6, model 0x8f.
  EXPECT_EQ(cpuidFamilyModel(0x000806f8), (std::pair<int, int>{6, 143}));
}

TEST(TopoDetectCpu, CpumapIsTheKernelsFormat) {
  EXPECT_EQ(cpumapString({0, 1}, 2), "3");
  std::vector<unsigned> low32;
  for (unsigned i = 0; i < 32; ++i) low32.push_back(i);
  EXPECT_EQ(cpumapString(low32, 64), "00000000,ffffffff");
  std::vector<unsigned> all48;
  for (unsigned i = 0; i < 48; ++i) all48.push_back(i);
  EXPECT_EQ(cpumapString(all48, 48), "ffff,ffffffff");
  // 56 CPUs, two NUMA nodes of 14 cores and their hyperthreads (a corpus machine).
  std::vector<unsigned> node0;
  for (unsigned i = 0; i < 14; ++i) node0.push_back(i);
  for (unsigned i = 28; i < 42; ++i) node0.push_back(i);
  EXPECT_EQ(cpumapString(node0, 56), "0003ff,f0003fff");
  EXPECT_EQ(cpumapString({}, 8), "00");
}

// NVML through dlopen, with a stand-in library (topo_fake_nvml.cc).
TEST(TopoDetectNvml, ReadsGpusLinksAndC2cFromTheLibrary) {
  test::LogCapture capture;
  std::vector<NvmlGpu> gpus = readNvmlGpus(WEFT_FAKE_NVML);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, 0u);
  EXPECT_EQ(gpus[0].busId, "0000:8d:00.0");
  EXPECT_EQ(gpus[0].sm, 90);
  ASSERT_EQ(gpus[0].links.size(), 16u) << "links 0-15; 16 is down and 17 cannot do P2P";
  EXPECT_EQ(gpus[0].links[0].target, "0000:9d:00.0") << "lower case, as NCCL writes targets";
  EXPECT_EQ(gpus[0].links[2].target, "fffffff:ffff:ff");
  EXPECT_EQ(gpus[0].c2cCount, 1);
  EXPECT_EQ(gpus[0].c2cBw, 50000);
  EXPECT_EQ(gpus[1].busId, "0000:9d:00.0");
  EXPECT_EQ(gpus[1].sm, 80);
  ASSERT_EQ(gpus[1].links.size(), 2u);
  EXPECT_EQ(gpus[1].links[1].link, 1u);
  EXPECT_EQ(gpus[1].c2cCount, 0);
  bool skipped = false;
  for (const std::string& l : capture.lines()) skipped |= l.find("could not query GPU 2") != std::string::npos;
  EXPECT_TRUE(skipped);
  EXPECT_TRUE(capture.warnings().empty());
}

TEST(TopoDetectNvml, NoLibraryNoSymbolsOrNoDriverIsOneInfoLineAndNoGpu) {
  struct Case {
    std::string library;
    const char* initError;
    const char* expected;
  };
  const Case cases[] = {{"libweft-no-such-nvml.so.1", nullptr, "No GPU detected: cannot load NVML"},
                        {"libm.so.6", nullptr, "No GPU detected: libm.so.6 has no nvmlInit_v2"},
                        {WEFT_FAKE_NVML, "9", "No GPU detected: NVML initialisation failed (error 9)"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.library);
    if (c.initError) ::setenv("WEFT_FAKE_NVML_INIT_ERROR", c.initError, 1);
    test::LogCapture capture;
    EXPECT_TRUE(readNvmlGpus(c.library).empty());
    ::unsetenv("WEFT_FAKE_NVML_INIT_ERROR");
    std::vector<std::string> lines = capture.lines();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find(c.expected), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("NCCL INFO"), std::string::npos) << lines[0];
  }
}

TEST_F(TopoDetect, GpusFromNvmlGetRanksInNvmlOrder) {
  DetectOptions o = options();
  o.gpus.reset();
  o.nvmlLibrary = WEFT_FAKE_NVML;
  auto xml = detectTopology(o);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  std::string text = xml->toString();
  EXPECT_NE(text.find("<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"0\">"), std::string::npos) << text;
  EXPECT_NE(text.find("<gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"0\">"), std::string::npos) << text;
  EXPECT_NE(text.find("<nvlink target=\"0000:9d:00.0\" count=\"2\" tclass=\"0x068000\"/>"), std::string::npos)
      << "not in sysfs: taken for an NVSwitch\n" << text;
  EXPECT_NE(text.find("<nvlink target=\"fffffff:ffff:ff\" count=\"14\" tclass=\"0x068000\"/>"), std::string::npos) << text;
  EXPECT_NE(text.find("<c2c bw=\"50000\" count=\"1\"/>"), std::string::npos) << text;
}

// A virtual machine whose devices report NUMA node -1, recorded from a KVM guest (virtio SCSI
// and network at 00:02.0 and 00:03.0, no PCIe link attributes, one NUMA node with CPUs 0-1),
// with a GPU passed through at 00:05.0. NCCL puts every device under one <cpu numaid="-1">
// without affinity (its sysfs has no node-1) and writes no other <cpu>.
TEST(TopoDetectVm, DevicesOnNumaMinusOneMakeTheOnlyCpuAsInNccl) {
  test::LogCapture quiet(log::Level::kWarn);
  FakeSysfs sys;
  sys.device("pci0000:00/0000:00:02.0", with(ids("0x018000", "0x1af4", "0x1042", "0x1042"), "", "", "-1"));
  sys.device("pci0000:00/0000:00:03.0", with(ids("0x020000", "0x1af4", "0x1041", "0x1041"), "", "", "-1"));
  sys.device("pci0000:00/0000:00:05.0", with(ids("0x030200", "0x10de", "0x2330", "0x16c1"), "", "", "-1"));
  sys.file("devices/system/node/node0/cpumap", "3\n");
  DetectOptions o;
  o.sysfsRoot = sys.root();
  o.nvmlLibrary.clear();
  o.defaultTopoFile.clear();
  o.gpus = std::vector<NvmlGpu>{{0, "0000:00:05.0", 90, {}, 0, 0}};
  o.inventory = HwlocInventory{{{"0", "3"}}, {{"0000:00:02.0", 0x0180}, {"0000:00:03.0", 0x0200}}};
  o.cpu = CpuIdentity{"x86_64", "GenuineIntel", 6, 167};
  o.hostHash = 0x1234;
  auto xml = detectTopology(o);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  EXPECT_EQ(xml->toString(),
            "<system version=\"1\">\n"
            "  <cpu host_hash=\"0x1234\" numaid=\"-1\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"167\">\n"
            "    <pci busid=\"0000:00:02.0\" class=\"0x018000\" vendor=\"0x1af4\" device=\"0x1042\" subsystem_vendor=\"0x1af4\" subsystem_device=\"0x1042\" link_speed=\"\" link_width=\"0\"/>\n"
            "    <pci busid=\"0000:00:03.0\" class=\"0x020000\" vendor=\"0x1af4\" device=\"0x1041\" subsystem_vendor=\"0x1af4\" subsystem_device=\"0x1041\" link_speed=\"\" link_width=\"0\"/>\n"
            "    <pci busid=\"0000:00:05.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\" subsystem_vendor=\"0x10de\" subsystem_device=\"0x16c1\" link_speed=\"\" link_width=\"0\">\n"
            "      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"0\"/>\n"
            "    </pci>\n"
            "  </cpu>\n"
            "</system>\n");
  auto system = buildSystem(*xml);
  ASSERT_TRUE(system.isOk()) << system.status().toString();
  EXPECT_EQ(system->count(NodeType::kCpu), 1);

  // Once a device has a NUMA node, the NUMA nodes without devices are written again.
  sys.file("devices/pci0000:00/0000:00:03.0/numa_node", "0\n");
  o.inventory->numaNodes.push_back({"1", "c"});
  xml = detectTopology(o);
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  std::string text = xml->toString();
  EXPECT_NE(text.find("numaid=\"0\" affinity=\"3\""), std::string::npos) << text;
  EXPECT_NE(text.find("numaid=\"1\" affinity=\"c\""), std::string::npos) << text;
}

}  // namespace
}  // namespace weft::topo
