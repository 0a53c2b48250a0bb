#include "core/topo/detect.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/topo/detect_gpu.h"
#include "core/topo/detect_host.h"

namespace weft::topo {
namespace {

std::optional<std::string> setting(const DetectOptions& o, std::string_view name) {
  if (o.settings == nullptr || !o.settings->isSet(name)) return std::nullopt;
  return o.settings->string(name);
}

// NCCL_TOPO_FILE, or NCCL's default file, or an empty document. A file that cannot be opened is
// skipped as NCCL skips it; one that does not parse is an error.
Result<TopoXml> loadBase(const DetectOptions& o) {
  std::optional<std::string> file = setting(o, "NCCL_TOPO_FILE");
  if (file) WEFT_INFO(log::kEnv, "NCCL_TOPO_FILE set by environment to %s", file->c_str());
  const std::string path = file ? *file : o.defaultTopoFile;
  if (path.empty()) return TopoXml();
  if (::access(path.c_str(), R_OK) != 0) {
    if (file) WEFT_INFO(log::kGraph | log::kEnv, "Could not open XML topology file %s : %s", path.c_str(), std::strerror(errno));
    return TopoXml();
  }
  WEFT_INFO(log::kGraph, "Loading topology file %s", path.c_str());
  WEFT_ASSIGN_OR_RETURN(TopoXml xml, TopoXml::load(path));
  WEFT_TRY(xml.expectRoot("system"));
  return xml;
}

void setHostHash(XmlNode& node, const std::string& hash) {
  if (node.name() == "cpu") node.set("host_hash", hash);
  for (const auto& c : node.children()) setHostHash(*c, hash);
}

void forEachCpu(XmlNode& node, DetectContext& ctx) {
  for (const auto& c : node.children()) {
    if (c->name() == "cpu") ctx.fillCpu(*c);
    else forEachCpu(*c, ctx);
  }
}

Status addGpus(DetectContext& ctx, const DetectOptions& o) {
  std::vector<NvmlGpu> gpus;
  if (o.gpus) gpus = *o.gpus;
  else if (!o.nvmlLibrary.empty()) gpus = readNvmlGpus(o.nvmlLibrary);
  int rank = 0;
  for (const NvmlGpu& gpu : gpus) {
    WEFT_ASSIGN_OR_RETURN(XmlNode * node, fillGpu(ctx, gpu));
    if (node == nullptr) continue;
    if (o.markKeep) node->set("keep", "1");
    // One rank per GPU, in NVML order, as the dump of a one-process-per-GPU job shows them.
    node->set("rank", std::to_string(rank++));
    node->init("gdr", o.gpuGdr ? "1" : "0");
  }
  return Status::ok();
}

Status addNets(DetectContext& ctx, const DetectOptions& o) {
  for (size_t i = 0; i < o.nets.size(); ++i) {
    const NetDevice& net = o.nets[i];
    WEFT_TRY(fillNet(ctx, net, net.dev >= 0 ? net.dev : static_cast<int>(i), o.markKeep).takeStatus());
  }
  return Status::ok();
}

// Whether the document places devices under CPUs only through NUMA node -1: the kernel gave no
// device a NUMA node (numa_node -1 everywhere, as on virtual machines without NUMA information).
bool devicesOnlyOnUnknownNuma(const XmlNode& system) {
  bool unknown = false;
  for (const auto& c : system.children()) {
    if (c->name() != "cpu" || c->children().empty()) continue;
    if (c->get("numaid") != "-1") return false;
    unknown = true;
  }
  return unknown;
}

// The devices and NUMA nodes nobody asked for, so that the document describes the machine.
// NCCL writes a <cpu> only for the NUMA node of a device it detected. weft also writes the NUMA
// nodes without devices, except when no device has a NUMA node: NCCL then holds every device
// under one <cpu numaid="-1"> (without affinity: there is no node-1 in sysfs), which stands for
// the whole machine, and a NUMA node beside it would be a second CPU, joined by an inter-CPU
// link, that NCCL's system does not have.
Status addInventory(DetectContext& ctx, const HwlocInventory& inv, const XmlNode& system) {
  for (const HwlocPciDevice& dev : inv.pciDevices) {
    // hwloc knows 16 bits of the class; sysfs, when present, gives all 24.
    WEFT_TRY(ctx.placePci(dev.busId, strprintf("0x%04x00", dev.classId)).takeStatus());
  }
  if (devicesOnlyOnUnknownNuma(system)) return Status::ok();
  for (const HwlocNuma& numa : inv.numaNodes) ctx.fillCpu(ctx.cpu(numa.numaId));
  return Status::ok();
}

}  // namespace

Result<TopoXml> detectTopology(const DetectOptions& o) {
  WEFT_ASSIGN_OR_RETURN(TopoXml xml, loadBase(o));
  std::optional<std::string> hostId = setting(o, "NCCL_HOSTID");
  if (hostId) WEFT_INFO(log::kEnv, "NCCL_HOSTID set by environment to %s", hostId->c_str());
  HostFacts host;
  host.hostHash = o.hostHash.value_or(hostHash(hostId ? &*hostId : nullptr));
  host.cpu = o.cpu ? *o.cpu : thisCpu();
  if (xml.empty()) {
    xml = TopoXml::withRoot("system");
    xml.setSource("detected topology");
  }
  setHostHash(*xml.root(), formatHostHash(host.hostHash));
  HwlocInventory inv;
  if (o.inventory) {
    inv = *o.inventory;
  } else {
    WEFT_ASSIGN_OR_RETURN(inv, readHwloc());
  }
  for (const HwlocNuma& n : inv.numaNodes) host.numaCpumaps[n.numaId] = n.cpumap;
  Sysfs sysfs(o.sysfsRoot);
  DetectContext ctx(xml, sysfs, host);
  WEFT_TRY(addGpus(ctx, o));
  WEFT_TRY(addNets(ctx, o));
  WEFT_TRY(addInventory(ctx, inv, *xml.root()));
  forEachCpu(*xml.root(), ctx);
  return xml;
}

}  // namespace weft::topo
