#include "core/topo/detect_net.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <memory>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::topo {
namespace {

XmlNode* findNamed(const XmlNode& node, std::string_view elem, std::string_view key, std::string_view value) {
  for (const auto& c : node.children()) {
    if (c->name() == elem && c->get(key) == value) return c.get();
    if (XmlNode* found = findNamed(*c, elem, key, value)) return found;
  }
  return nullptr;
}

XmlNode* firstCpu(XmlNode& node) {
  for (const auto& c : node.children()) {
    if (c->name() == "cpu") return c.get();
    if (XmlNode* found = firstCpu(*c)) return found;
  }
  return nullptr;
}

// The element the device's <nic> goes under.
Result<XmlNode*> nicParent(DetectContext& ctx, const NetDevice& net) {
  std::string path = net.pciPath;
  if (!path.empty()) {
    std::string subsystem = ctx.sysfs().subsystem(path);
    if (subsystem != "pci") {
      WEFT_INFO(log::kNet | log::kGraph,
                "Topology detection: network path %s is not a PCI device (%s). Attaching to first CPU", path.c_str(),
                subsystem.c_str());
      path.clear();
    }
  }
  if (!path.empty()) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return ctx.placePci(path.substr(path.rfind('/') + 1), "0x02");
  }
  if (XmlNode* cpu = firstCpu(ctx.system())) return cpu;
  // NCCL assumes a CPU exists by now; without one, use the host's first NUMA node.
  const auto& numa = ctx.host().numaCpumaps;
  XmlNode& cpu = ctx.cpu(numa.empty() ? std::string("-1") : numa.begin()->first);
  ctx.fillCpu(cpu);
  return &cpu;
}

void setAttributes(XmlNode& node, const NetDevice& net, int dev, bool markKeep) {
  if (markKeep) node.set("keep", "1");
  node.set("dev", std::to_string(dev));
  node.init("latency", std::to_string(static_cast<int>(net.latency)));
  node.init("speed", std::to_string(net.speed));
  node.init("port", std::to_string(net.port));
  node.init("guid", strprintf("0x%lx", static_cast<unsigned long>(net.guid)));
  node.init("maxconn", std::to_string(net.maxConn));
  node.init("gdr", net.gdr ? "1" : "0");
  if (net.coll != 0) node.init("coll", std::to_string(net.coll));
}

}  // namespace

Result<XmlNode*> fillNet(DetectContext& ctx, const NetDevice& net, int dev, bool markKeep) {
  if (net.name.empty()) return invalidArgument("net device " + std::to_string(dev) + " has no name");
  XmlNode* node = findNamed(ctx.system(), "net", "name", net.name);
  if (node == nullptr) {
    WEFT_ASSIGN_OR_RETURN(XmlNode * parent, nicParent(ctx, net));
    XmlNode* nic = parent->child("nic");
    if (nic == nullptr) nic = &parent->addChild("nic");
    node = &nic->addChild("net");
    node->set("name", net.name);
  } else if (const std::string* old = node->find("dev"); old && *old != std::to_string(dev)) {
    WEFT_INFO(log::kGraph, "TOPO/NET : Changing %s dev index from %s to %d", net.name.c_str(), old->c_str(), dev);
  }
  setAttributes(*node, net, dev, markKeep);
  return node;
}

Result<NetDevice> socketNetDevice(const Sysfs& sysfs, const std::string& ifname, int dev) {
  std::string dir = sysfs.root() + "/class/net/" + ifname;
  struct stat st {};
  if (ifname.empty() || ifname.find('/') != std::string::npos || ::stat(dir.c_str(), &st) != 0)
    return invalidArgument("no network interface \"" + ifname + "\" (no " + dir + ")");
  NetDevice net;
  net.name = ifname;
  net.dev = dev;
  net.guid = static_cast<uint64_t>(dev);
  std::unique_ptr<char, decltype(&::free)> real(::realpath((dir + "/device").c_str(), nullptr), &::free);
  if (real) net.pciPath = real.get();
  net.speed = static_cast<int>(parseInt(trim(sysfs.read(dir, "speed"))).value_or(0));
  return net;
}

}  // namespace weft::topo
