#include "core/topo/system_build.h"

#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/topo/xml_attr.h"

namespace weft::topo {

Result<int64_t> parseBusId(std::string_view text) {
  std::string hex;
  for (char c : text) {
    if (c == ':' || c == '.') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      return invalidArgument("bad bus id \"" + std::string(text) + "\": expected hex digits like 0000:8d:00.0");
    hex += c;
  }
  if (hex.empty() || hex.size() > 16)
    return invalidArgument("bad bus id \"" + std::string(text) + "\": expected hex digits like 0000:8d:00.0");
  return static_cast<int64_t>(std::strtoull(hex.c_str(), nullptr, 16));
}

namespace {

// NCCL's dictionaries match by prefix and fall back to the last entry's value.
struct KvEntry {
  const char* key;
  int value;
};

int kvLookup(std::string_view text, const KvEntry* dict, int fallback, const char* what) {
  for (const KvEntry* e = dict; e->key != nullptr; ++e)
    if (startsWith(text, e->key)) return e->value;
  WEFT_INFO(log::kGraph, "KV Convert to int : could not find value of '%.*s' in dictionary, falling back to %d",
            static_cast<int>(text.size()), text.data(), fallback);
  (void)what;
  return fallback;
}

constexpr KvEntry kPciClass[] = {{"0x060400", idx(NodeType::kPci)}, {"0x080100", idx(NodeType::kPci)},
                                 {"0x068000", idx(NodeType::kNvs)},  {"0x068001", idx(NodeType::kCpu)},
                                 {"0x03", idx(NodeType::kGpu)},      {"0x02", idx(NodeType::kNic)},
                                 {nullptr, 0}};
constexpr KvEntry kPciGen[] = {{"2.5 GT/s", 15},       {"5 GT/s", 30},          {"8 GT/s", 60},
                               {"16 GT/s", 120},       {"32 GT/s", 240},        {"2.5 GT/s PCIe", 15},
                               {"5.0 GT/s PCIe", 30},  {"8.0 GT/s PCIe", 60},   {"16.0 GT/s PCIe", 120},
                               {"32.0 GT/s PCIe", 240}, {"64.0 GT/s PCIe", 480}, {nullptr, 0}};
constexpr KvEntry kCpuArch[] = {{"x86_64", kCpuArchX86}, {"arm64", kCpuArchArm}, {"ppc64", kCpuArchPower}, {nullptr, 0}};
constexpr KvEntry kCpuVendor[] = {{"GenuineIntel", kCpuVendorIntel},
                                  {"AuthenticAMD", kCpuVendorAmd},
                                  {"CentaurHauls", kCpuVendorZhaoxin},
                                  {"  Shanghai  ", kCpuVendorZhaoxin},
                                  {nullptr, 0}};

NodeType pciClassType(std::string_view cls) {
  return static_cast<NodeType>(kvLookup(cls, kPciClass, idx(NodeType::kPci), "class"));
}

uint64_t fnv1a(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// Broadcom PEX switches that present two levels: Gen4 at both levels, Gen5 by level.
int bcmGen(uint64_t device, int level) {
  if ((device & 0xfffffffffffff000ull) == 0x1000c0101000a000ull) return 4;
  if ((device & 0xfffffffffffff000ull) == (0x1000c03010000000ull | static_cast<uint64_t>(level) * 0x1000)) return 5;
  return 0;
}

// The children NCCL's loader keeps under each element (its xmlLoadSub handlers). Anything else is
// dropped with its subtree when NCCL reads a file, so the builder never looks at it.
bool ncclKeeps(std::string_view parent, std::string_view child) {
  if (parent == "system") return child == "cpu";
  if (parent == "cpu") return child == "pci" || child == "nic";
  if (parent == "pci") return child == "pci" || child == "gpu" || child == "nic" || child == "pcilink";
  if (parent == "gpu") return child == "nvlink" || child == "c2c";
  if (parent == "nic") return child == "net";
  return false;
}

// Where each element of NCCL's format belongs, for --strict's messages; unknown names are free.
const char* expectedParent(std::string_view name) {
  if (name == "cpu") return "<system>";
  if (name == "pci") return "<cpu> or a <pci> switch";
  if (name == "gpu" || name == "pcilink") return "<pci>";
  if (name == "nic") return "<cpu> or <pci>";
  if (name == "net") return "<nic>";
  if (name == "nvlink" || name == "c2c") return "<gpu>";
  return nullptr;
}

// --strict: an element of NCCL's format in a place where NCCL's loader would silently drop it.
Status checkPlacement(const TopoXml& xml, const XmlNode& n) {
  for (const auto& sub : n.children()) {
    const char* parent = expectedParent(sub->name());
    if (parent != nullptr && !ncclKeeps(n.name(), sub->name())) {
      return invalidArgument(xml.where(*sub) + "<" + sub->name() + "> inside <" + n.name() + ">: expected it inside " + parent +
                             " (NCCL ignores it here)");
    }
    WEFT_TRY(checkPlacement(xml, *sub));
  }
  return Status::ok();
}

class Builder {
 public:
  Builder(const TopoXml& xml, const BuildOptions& options) : xml_(xml), attrs_(xml), options_(options) {}
  Result<System> run();

 private:
  Status addCpu(const XmlNode& xcpu);
  Status addCpuNic(const XmlNode& xnic, int cpu, int systemId, int numaId);
  Status addPci(const XmlNode& xpci, NodeRef parent, int systemId, int numaId);
  Result<std::optional<NodeRef>> addPciNode(const XmlNode& xpci, int systemId, int numaId, int64_t busId);
  Status addPciLink(const XmlNode& xpci, NodeRef node, NodeRef parent);
  Status addNic(const XmlNode& xnic, int nic, int systemId);
  Status addNet(const XmlNode& xnet, int nic, int systemId);
  Status addGpu(const XmlNode& xgpu, int gpu);
  Status walkLinks(const XmlNode& n, std::string_view kind, const std::string* parentBusId, int systemId);
  Status addNvLink(const XmlNode& xlink, const std::string& gpuBusId, int systemId);
  Status addC2c(const XmlNode& xlink, const std::string& gpuBusId, int systemId);
  Status addPcilink(const XmlNode& xlink, const std::string& switchBusId, int systemId);
  Result<int> gpuAt(const XmlNode& xlink, const std::string& busId, int systemId);
  int hostIndexOf(const XmlNode& xcpu);
  int findLocalCpu(NodeRef node, NodeRef from) const;
  void flattenBcmSwitches();
  void mergeSubSwitch(int parent, int64_t subId);
  void connectCpus();
  void sortPciTree(NodeRef node, std::optional<NodeRef> up);

  const TopoXml& xml_;
  XmlAttrs attrs_;
  const BuildOptions& options_;
  System sys_;
  std::set<std::pair<int, int64_t>> seenIds_;  // (kind, id) of nodes made from elements
};

Status checkUnique(std::set<std::pair<int, int64_t>>& seen, NodeType t, int64_t id, const TopoXml& xml,
                   const XmlNode& elem) {
  if (!seen.insert({idx(t), id}).second) {
    return invalidArgument(xml.where(elem) + "duplicate " + std::string(nodeTypeName(t)) + " id " +
                           strprintf("%lx", static_cast<unsigned long>(localIdOf(id))) +
                           " (each bus id and NUMA id may appear once)");
  }
  return Status::ok();
}

Result<System> Builder::run() {
  WEFT_TRY(xml_.expectRoot("system"));
  const XmlNode& root = *xml_.root();
  if (options_.strict) WEFT_TRY(checkPlacement(xml_, root));
  for (const auto& c : root.children())
    if (c->name() == "cpu") WEFT_TRY(addCpu(*c));

  const auto& hashes = sys_.hostHashes();
  uint64_t local = options_.localHostHash.value_or(hashes.empty() ? 0 : hashes[0]);
  size_t systemId = 0;
  while (systemId < hashes.size() && hashes[systemId] != local) ++systemId;
  if (systemId == hashes.size()) {
    return invalidArgument(xml_.source() + ": local host hash " + strprintf("0x%lx", static_cast<unsigned long>(local)) +
                           " is not the host_hash of any <cpu>");
  }
  sys_.setSystemId(static_cast<int>(systemId));

  // Three passes, as NCCL does: the order in which links are added decides ties in link order.
  for (std::string_view kind : {"nvlink", "c2c", "pcilink"}) WEFT_TRY(walkLinks(root, kind, nullptr, 0));
  flattenBcmSwitches();
  connectCpus();
  for (int c = 0; c < sys_.count(NodeType::kCpu); ++c) sortPciTree({NodeType::kCpu, c}, std::nullopt);
  return std::move(sys_);
}

int Builder::hostIndexOf(const XmlNode& xcpu) {
  uint64_t hash = 0;
  if (const std::string* s = xcpu.find("host_hash")) hash = std::strtoull(s->c_str(), nullptr, 16);
  auto& hashes = sys_.hostHashes();
  for (size_t i = 0; i < hashes.size(); ++i)
    if (hashes[i] == hash) return static_cast<int>(i);
  hashes.push_back(hash);
  return static_cast<int>(hashes.size()) - 1;
}

Status Builder::addCpu(const XmlNode& xcpu) {
  WEFT_ASSIGN_OR_RETURN(int64_t numaId, attrs_.integer(xcpu, "numaid"));
  int systemId = hostIndexOf(xcpu);
  int64_t id = makeId(systemId, numaId);
  WEFT_TRY(checkUnique(seenIds_, NodeType::kCpu, id, xml_, xcpu));
  int c = sys_.addNode(NodeType::kCpu, id);
  CpuInfo& cpu = sys_.node(NodeType::kCpu, c).cpu;
  cpu.affinity = xcpu.get("affinity");
  WEFT_ASSIGN_OR_RETURN(std::string arch, attrs_.string(xcpu, "arch"));
  cpu.arch = kvLookup(arch, kCpuArch, 0, "arch");
  if (cpu.arch == kCpuArchX86) {
    WEFT_ASSIGN_OR_RETURN(std::string vendor, attrs_.string(xcpu, "vendor"));
    cpu.vendor = kvLookup(vendor, kCpuVendor, 0, "vendor");
    if (cpu.vendor == kCpuVendorIntel || cpu.vendor == kCpuVendorZhaoxin) {
      WEFT_ASSIGN_OR_RETURN(int64_t family, attrs_.integer(xcpu, "familyid"));
      WEFT_ASSIGN_OR_RETURN(int64_t model, attrs_.integer(xcpu, "modelid"));
      if (cpu.vendor == kCpuVendorIntel) {
        cpu.model = (family == 6 && model >= 0xCF)   ? kCpuModelIntelErp
                    : (family == 6 && model >= 0x8F) ? kCpuModelIntelSrp
                    : (family == 6 && model >= 0x55) ? kCpuModelIntelSkl
                                                     : kCpuModelIntelBdw;
      } else if (family == 7 && model == 0x5B) {
        cpu.model = kCpuModelYongfeng;
      }
    }
  }
  for (const auto& sub : xcpu.children()) {
    if (sub->name() == "pci") WEFT_TRY(addPci(*sub, {NodeType::kCpu, c}, systemId, static_cast<int>(numaId)));
    if (sub->name() == "nic") WEFT_TRY(addCpuNic(*sub, c, systemId, static_cast<int>(numaId)));
  }
  return Status::ok();
}

// A <nic> directly under a <cpu>: a NIC with no PCI position, attached to the CPU.
Status Builder::addCpuNic(const XmlNode& xnic, int cpu, int systemId, int numaId) {
  // NCCL builds the local id as (numaId << 56) + 0, which the id mask reduces to 0: every
  // CPU-attached NIC of a host is the same node.
  int64_t id = makeId(systemId, static_cast<int64_t>(static_cast<uint64_t>(numaId) << 56));
  int nic = sys_.find(NodeType::kNic, id);
  if (nic < 0) {
    nic = sys_.addNode(NodeType::kNic, id);
    sys_.connect({NodeType::kCpu, cpu}, {NodeType::kNic, nic}, LinkType::kPci, kLocBw);
    sys_.connect({NodeType::kNic, nic}, {NodeType::kCpu, cpu}, LinkType::kPci, kLocBw);
  }
  return addNic(xnic, nic, systemId);
}

Status Builder::addPci(const XmlNode& xpci, NodeRef parent, int systemId, int numaId) {
  WEFT_ASSIGN_OR_RETURN(std::string busText, attrs_.string(xpci, "busid"));
  auto busId = parseBusId(busText);
  if (!busId.isOk()) return invalidArgument(xml_.where(xpci) + busId.status().message());
  WEFT_ASSIGN_OR_RETURN(std::optional<NodeRef> node, addPciNode(xpci, systemId, numaId, *busId));
  if (node) WEFT_TRY(addPciLink(xpci, *node, parent));
  return Status::ok();
}

// Creates the node for one <pci> element (GPU, NIC or switch) and, for switches, its subtree.
// Returns the node to link to the parent, or nothing (element ignored, or NIC port merged).
Result<std::optional<NodeRef>> Builder::addPciNode(const XmlNode& xpci, int systemId, int numaId, int64_t busId) {
  WEFT_ASSIGN_OR_RETURN(std::string cls, attrs_.string(xpci, "class"));
  NodeType type = pciClassType(cls);
  std::optional<NodeRef> node;
  if (const XmlNode* xgpu = xpci.child("gpu")) {
    type = NodeType::kGpu;
    if (!xgpu->has("rank")) return node;  // a GPU of no rank of ours: NCCL skips the element
    int64_t id = makeId(systemId, busId);
    WEFT_TRY(checkUnique(seenIds_, NodeType::kGpu, id, xml_, xpci));
    int g = sys_.addNode(NodeType::kGpu, id);
    WEFT_TRY(addGpu(*xgpu, g));
    node = NodeRef{NodeType::kGpu, g};
  }
  if (const XmlNode* xnic = xpci.child("nic")) {
    // Ports of one NIC share a PCI device: they merge into one NIC node.
    int64_t id = makeId(systemId, static_cast<int64_t>(static_cast<uint64_t>(numaId) << 56) + busId);
    int nic = sys_.find(NodeType::kNic, id);
    if (nic < 0) {
      nic = sys_.addNode(NodeType::kNic, id);
      node = NodeRef{NodeType::kNic, nic};
    }
    WEFT_TRY(addNic(*xnic, nic, systemId));
  } else if (type == NodeType::kPci) {
    int64_t id = makeId(systemId, busId);
    WEFT_TRY(checkUnique(seenIds_, NodeType::kPci, id, xml_, xpci));
    int p = sys_.addNode(NodeType::kPci, id);
    uint64_t device = 0;
    const std::pair<const char*, int> fields[] = {
        {"vendor", 48}, {"device", 32}, {"subsystem_vendor", 16}, {"subsystem_device", 0}};
    for (const auto& [key, shift] : fields) {
      if (!xpci.has(key)) continue;
      WEFT_ASSIGN_OR_RETURN(int64_t v, attrs_.integer(xpci, key));
      device += static_cast<uint64_t>(v) << shift;
    }
    sys_.node(NodeType::kPci, p).pci.device = device;
    node = NodeRef{NodeType::kPci, p};
    // Only <pci> children: NCCL's loader drops what else a switch may hold (<pcilink> aside,
    // which the link pass reads).
    for (const auto& sub : xpci.children())
      if (sub->name() == "pci") WEFT_TRY(addPci(*sub, *node, systemId, numaId));
  }
  return node;
}

Status Builder::addPciLink(const XmlNode& xpci, NodeRef node, NodeRef parent) {
  // NCCL's detection writes link_width="" for a device sysfs does not show; it reads as 0.
  int64_t width = 0;
  if (xpci.get("link_width", "-") != "") {
    WEFT_ASSIGN_OR_RETURN(width, attrs_.integer(xpci, "link_width"));
  }
  WEFT_ASSIGN_OR_RETURN(std::string speedText, attrs_.string(xpci, "link_speed"));
  // 32: the widest PCIe link there is.
  if (width < 0 || width > 32)
    return invalidArgument(xml_.where(xpci) + "link_width=\"" + xpci.get("link_width") + "\": expected a lane count from 0 to 32");
  if (width == 0) width = 16;  // not reported by sysfs
  int speed = pciLaneSpeed(speedText);
  float bw = static_cast<float>(static_cast<double>(width * speed) / 80.0);
  sys_.connect(node, parent, LinkType::kPci, bw);
  sys_.connect(parent, node, LinkType::kPci, bw);
  return Status::ok();
}

Status Builder::addGpu(const XmlNode& xgpu, int g) {
  GpuInfo& gpu = sys_.node(NodeType::kGpu, g).gpu;
  WEFT_ASSIGN_OR_RETURN(int64_t sm, attrs_.integer(xgpu, "sm"));
  WEFT_ASSIGN_OR_RETURN(int64_t rank, attrs_.integer(xgpu, "rank"));
  WEFT_ASSIGN_OR_RETURN(int64_t dev, attrs_.integer(xgpu, "dev"));
  WEFT_ASSIGN_OR_RETURN(int64_t gdr, attrs_.integer(xgpu, "gdr"));
  if (rank < 0) return invalidArgument(xml_.where(xgpu) + "rank=\"" + xgpu.get("rank") + "\": expected a rank >= 0");
  gpu.cudaCompCap = static_cast<int>(sm);
  gpu.rank = static_cast<int>(rank);
  gpu.dev = static_cast<int>(dev);
  gpu.gdrSupport = static_cast<int>(gdr);
  for (int o = 0; o < g; ++o) {
    if (sys_.node(NodeType::kGpu, o).gpu.rank == gpu.rank)
      return invalidArgument(xml_.where(xgpu) + "duplicate rank " + std::to_string(rank));
  }
  return Status::ok();
}

Status Builder::addNic(const XmlNode& xnic, int nic, int systemId) {
  for (const auto& sub : xnic.children()) {
    if (sub->name() != "net" || !sub->has("dev")) continue;  // no dev: not one of the plugin's devices
    WEFT_TRY(addNet(*sub, nic, systemId));
  }
  return Status::ok();
}

Status Builder::addNet(const XmlNode& xnet, int nic, int systemId) {
  WEFT_ASSIGN_OR_RETURN(int64_t dev, attrs_.integer(xnet, "dev"));
  // Repeated net devs are not rejected: NCCL's own dumps repeat the CPU-attached virtual NICs
  // under every NUMA node, and NCCL builds one NET node per element.
  int64_t id = makeId(systemId, dev);
  int n = sys_.addNode(NodeType::kNet, id);
  NetInfo& net = sys_.node(NodeType::kNet, n).net;
  net.dev = static_cast<int>(dev);
  if (const std::string* guid = xnet.find("guid")) {
    WEFT_ASSIGN_OR_RETURN(uint64_t g, attrs_.hex(xnet, "guid"));
    net.asic = g;
    (void)guid;
  } else {
    net.asic = static_cast<uint64_t>(id);
  }
  WEFT_ASSIGN_OR_RETURN(int64_t mbps, attrs_.integerOr(xnet, "speed", 0));
  if (mbps <= 0) mbps = 10000;  // some NICs report -1
  net.bw = static_cast<float>(static_cast<double>(mbps) / 8000.0);
  WEFT_ASSIGN_OR_RETURN(double latency, attrs_.realOr(xnet, "latency", 0.0));
  net.latency = static_cast<float>(latency);
  WEFT_ASSIGN_OR_RETURN(int64_t port, attrs_.integerOr(xnet, "port", 0));
  WEFT_ASSIGN_OR_RETURN(int64_t gdr, attrs_.integerOr(xnet, "gdr", 0));
  WEFT_ASSIGN_OR_RETURN(int64_t maxconn, attrs_.integerOr(xnet, "maxconn", kMaxChannels));
  WEFT_ASSIGN_OR_RETURN(int64_t coll, attrs_.integerOr(xnet, "coll", 0));
  net.port = static_cast<int>(port);
  net.gdrSupport = static_cast<int>(gdr);
  net.maxChannels = static_cast<int>(maxconn);
  net.collSupport = static_cast<int>(coll);
  // Identifies the physical NIC for rail matching: its PCI bus id, else its GUID.
  const XmlNode* p = xnet.parent();
  while (p != nullptr && p->name() != "pci") p = p->parent();
  net.pciId = p && p->has("busid") ? fnv1a(p->get("busid")) : fnv1a(strprintf("%lx", static_cast<unsigned long>(net.asic)));
  sys_.connect({NodeType::kNic, nic}, {NodeType::kNet, n}, LinkType::kNet, net.bw);
  sys_.connect({NodeType::kNet, n}, {NodeType::kNic, nic}, LinkType::kNet, net.bw);
  return Status::ok();
}

// One pass over the whole document for the link elements named `kind` (<nvlink>, <c2c> or
// <pcilink>), in document order, each resolved against the nearest enclosing bus id. Only the
// elements NCCL's loader keeps are visited.
Status Builder::walkLinks(const XmlNode& n, std::string_view kind, const std::string* parentBusId, int systemId) {
  if (n.name() == "cpu") systemId = hostIndexOf(n);
  const std::string* busId = n.find("busid");
  if (busId == nullptr) busId = parentBusId;
  for (const auto& sub : n.children()) {
    const std::string& name = sub->name();
    if (!ncclKeeps(n.name(), name)) continue;
    if (name != kind) {
      if (name != "nvlink" && name != "c2c" && name != "pcilink") WEFT_TRY(walkLinks(*sub, kind, busId, systemId));
      continue;
    }
    if (busId == nullptr) return invalidArgument(xml_.where(*sub) + "<" + name + "> outside any <pci busid=...>");
    if (name == "nvlink") WEFT_TRY(addNvLink(*sub, *busId, systemId));
    else if (name == "c2c") WEFT_TRY(addC2c(*sub, *busId, systemId));
    else WEFT_TRY(addPcilink(*sub, *busId, systemId));
  }
  return Status::ok();
}

Result<int> Builder::gpuAt(const XmlNode& xlink, const std::string& busText, int systemId) {
  auto busId = parseBusId(busText);
  if (!busId.isOk()) return invalidArgument(xml_.where(xlink) + busId.status().message());
  int g = sys_.find(NodeType::kGpu, makeId(systemId, *busId));
  if (g < 0) {
    return invalidArgument(xml_.where(xlink) + "<" + xlink.name() + "> belongs to no GPU (no <gpu rank=...> at " +
                           busText + ")");
  }
  return g;
}

Status Builder::addNvLink(const XmlNode& xlink, const std::string& gpuBusId, int systemId) {
  WEFT_ASSIGN_OR_RETURN(int g, gpuAt(xlink, gpuBusId, systemId));
  WEFT_ASSIGN_OR_RETURN(int64_t count, attrs_.integer(xlink, "count"));
  WEFT_ASSIGN_OR_RETURN(std::string tclass, attrs_.string(xlink, "tclass"));
  NodeType targetType = pciClassType(tclass);
  std::optional<NodeRef> remote;
  if (targetType == NodeType::kGpu) {
    WEFT_ASSIGN_OR_RETURN(std::string target, attrs_.string(xlink, "target"));
    auto busId = parseBusId(target);
    if (!busId.isOk()) return invalidArgument(xml_.where(xlink) + busId.status().message());
    int peer = sys_.find(NodeType::kGpu, makeId(systemId, *busId));
    if (peer >= 0) {
      remote = NodeRef{NodeType::kGpu, peer};
    } else if (options_.strict) {
      return invalidArgument(xml_.where(xlink) + "NVLink target " + target + " is not a GPU of this topology");
    }
  } else if (targetType == NodeType::kCpu) {
    int cpu = findLocalCpu({NodeType::kGpu, g}, {NodeType::kGpu, -1});
    if (cpu >= 0) remote = NodeRef{NodeType::kCpu, cpu};
  } else {
    // Anything else is the NVSwitch fabric, one node for the whole system.
    if (sys_.count(NodeType::kNvs) == 0) sys_.addNode(NodeType::kNvs, 0);
    remote = NodeRef{NodeType::kNvs, 0};
  }
  if (!remote) return Status::ok();
  float bw = static_cast<float>(count) * nvlinkBw(sys_.node(NodeType::kGpu, g).gpu.cudaCompCap);
  sys_.connect({NodeType::kGpu, g}, *remote, LinkType::kNvl, bw);
  // GPU-GPU links are added per direction by each GPU's own element.
  if (remote->type != NodeType::kGpu) sys_.connect(*remote, {NodeType::kGpu, g}, LinkType::kNvl, bw);
  return Status::ok();
}

Status Builder::addC2c(const XmlNode& xlink, const std::string& gpuBusId, int systemId) {
  WEFT_ASSIGN_OR_RETURN(int g, gpuAt(xlink, gpuBusId, systemId));
  WEFT_ASSIGN_OR_RETURN(int64_t count, attrs_.integer(xlink, "count"));
  WEFT_ASSIGN_OR_RETURN(int64_t bw, attrs_.integer(xlink, "bw"));
  // bw is MB/s per link (NVML's C2C max bandwidth); NCCL computes in double, stores float.
  double c2cBw = static_cast<double>(bw * count) / 1000.0;
  int cpu = findLocalCpu({NodeType::kGpu, g}, {NodeType::kGpu, -1});
  if (cpu < 0) return Status::ok();
  sys_.connect({NodeType::kGpu, g}, {NodeType::kCpu, cpu}, LinkType::kC2c, static_cast<float>(c2cBw));
  sys_.connect({NodeType::kCpu, cpu}, {NodeType::kGpu, g}, LinkType::kC2c, static_cast<float>(c2cBw));
  return Status::ok();
}

Status Builder::addPcilink(const XmlNode& xlink, const std::string& switchBusId, int systemId) {
  auto busId = parseBusId(switchBusId);
  if (!busId.isOk()) return invalidArgument(xml_.where(xlink) + busId.status().message());
  int pci = sys_.find(NodeType::kPci, makeId(systemId, *busId));
  if (pci < 0) return invalidArgument(xml_.where(xlink) + "<pcilink> is not inside a PCI switch");
  WEFT_ASSIGN_OR_RETURN(std::string target, attrs_.string(xlink, "target"));
  auto targetId = parseBusId(target);
  if (!targetId.isOk()) return invalidArgument(xml_.where(xlink) + targetId.status().message());
  int remote = sys_.find(NodeType::kPci, makeId(systemId, *targetId));
  if (remote >= 0) sys_.connect({NodeType::kPci, pci}, {NodeType::kPci, remote}, LinkType::kLoc, kLocBw);
  return Status::ok();
}

// The CPU at the root of a node's PCI tree (depth-first along PCI links to switches and CPUs).
int Builder::findLocalCpu(NodeRef node, NodeRef from) const {
  if (node.type == NodeType::kCpu) return node.index;
  for (const Link& l : sys_.node(node).links) {
    if (l.type != LinkType::kPci || l.rem == from) continue;
    if (l.rem.type != NodeType::kPci && l.rem.type != NodeType::kCpu) continue;
    int cpu = findLocalCpu(l.rem, node);
    if (cpu >= 0) return cpu;
  }
  return -1;
}

void Builder::flattenBcmSwitches() {
  for (int s = 0; s < sys_.count(NodeType::kPci); ++s) {
    Node& sw = sys_.node(NodeType::kPci, s);
    int gen = bcmGen(sw.pci.device, 0);
    if (gen == 0) continue;
    std::vector<int64_t> subIds;
    std::vector<Link> kept;
    for (const Link& l : sw.links) {
      bool sub = l.rem.type == NodeType::kPci && bcmGen(sys_.node(l.rem).pci.device, 1) == gen;
      if (sub) subIds.push_back(sys_.node(l.rem).id);
      else kept.push_back(l);
    }
    sw.links = std::move(kept);
    int64_t swId = sw.id;
    for (int64_t subId : subIds) mergeSubSwitch(sys_.find(NodeType::kPci, swId), subId);
    // Mark it so that it is not merged again, and start over: indices have moved.
    sys_.node(NodeType::kPci, sys_.find(NodeType::kPci, swId)).pci.device |= 0xffff;
    s = -1;
  }
}

// Moves the children of a lower-level switch to its parent and deletes it.
void Builder::mergeSubSwitch(int parent, int64_t subId) {
  int sub = sys_.find(NodeType::kPci, subId);
  NodeRef parentRef{NodeType::kPci, parent};
  NodeRef subRef{NodeType::kPci, sub};
  std::vector<Link> moved = sys_.node(subRef).links;
  for (const Link& l : moved) {
    if (l.rem == parentRef) continue;
    sys_.node(parentRef).links.push_back(l);
    for (Link& back : sys_.node(l.rem).links) {
      if (back.rem == subRef) {
        back.rem = parentRef;
        break;
      }
    }
  }
  sys_.removeNode(NodeType::kPci, sub);
}

void Builder::connectCpus() {
  int n = sys_.count(NodeType::kCpu);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const Node& ca = sys_.node(NodeType::kCpu, a);
      const Node& cb = sys_.node(NodeType::kCpu, b);
      if (a == b || systemIdOf(ca.id) != systemIdOf(cb.id)) continue;
      float bw = kLocBw;
      const CpuInfo& cpu = ca.cpu;
      if (cpu.arch == kCpuArchPower) bw = kP9Bw;
      else if (cpu.arch == kCpuArchArm) bw = kArmBw;
      else if (cpu.arch == kCpuArchX86 && cpu.vendor == kCpuVendorIntel)
        bw = cpu.model == kCpuModelIntelErp ? kErpQpiBw
             : cpu.model == kCpuModelIntelSrp ? kSrpQpiBw
             : cpu.model == kCpuModelIntelSkl ? kSklQpiBw
                                              : kBdwQpiBw;
      else if (cpu.arch == kCpuArchX86 && cpu.vendor == kCpuVendorAmd) bw = kAmdBw;
      else if (cpu.arch == kCpuArchX86 && cpu.vendor == kCpuVendorZhaoxin)
        bw = cpu.model == kCpuModelYongfeng ? kYongfengZpiBw : kZpiBw;
      sys_.connect({NodeType::kCpu, a}, {NodeType::kCpu, b}, LinkType::kSys, bw);
    }
  }
}

// Orders each node's links as NVLink, PCI down, PCI up, SYS: the uplink moves to the end.
void Builder::sortPciTree(NodeRef node, std::optional<NodeRef> up) {
  std::vector<Link>& links = sys_.node(node).links;
  if (up) {
    auto it = std::find_if(links.begin(), links.end(), [&](const Link& l) { return l.rem == *up; });
    if (it != links.end()) std::rotate(it, it + 1, links.end());
  }
  for (size_t l = 0; l < sys_.node(node).links.size(); ++l) {
    const Link link = sys_.node(node).links[l];
    if (link.type == LinkType::kPci && !(up && link.rem == *up)) sortPciTree(link.rem, node);
  }
}

}  // namespace

int pciLaneSpeed(std::string_view text) { return kvLookup(text, kPciGen, 60, "link_speed"); }

Result<System> buildSystem(const TopoXml& xml, const BuildOptions& options) {
  Builder b(xml, options);
  return b.run();
}

}  // namespace weft::topo
