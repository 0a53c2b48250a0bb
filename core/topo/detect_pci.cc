#include "core/topo/detect_pci.h"

#include <cfloat>
#include <cstdio>
#include <cstdlib>

#include "core/topo/detect_host.h"

namespace weft::topo {
namespace {

XmlNode* findPciIn(const XmlNode& node, std::string_view busId) {
  for (const auto& c : node.children()) {
    if (c->name() == "pci" && c->get("busid") == busId) return c.get();
    if (XmlNode* found = findPciIn(*c, busId)) return found;
  }
  return nullptr;
}

// NCCL's sscanf("%f GT/s"): the leading number of a link speed, or FLT_MAX when there is none.
float speedValue(const std::string& text) {
  float v = FLT_MAX;
  if (std::sscanf(text.c_str(), "%f GT/s", &v) != 1) v = FLT_MAX;
  return v;
}

}  // namespace

XmlNode& DetectContext::cpu(std::string_view numaId, bool* created) {
  if (created) *created = false;
  XmlNode* found = system().childWith("cpu", "numaid", numaId);
  if (found) return *found;
  XmlNode& cpu = system().addChild("cpu");
  cpu.set("host_hash", formatHostHash(host_.hostHash));
  cpu.set("numaid", std::string(numaId));
  if (created) *created = true;
  return cpu;
}

void DetectContext::fillCpu(XmlNode& cpu) {
  if (!cpu.has("affinity")) {
    std::string numaId = cpu.get("numaid");
    std::string mask = sysfs_.numaCpumap(numaId);
    if (mask.empty()) {
      auto it = host_.numaCpumaps.find(numaId);
      if (it != host_.numaCpumaps.end()) mask = it->second;
    }
    if (!mask.empty()) cpu.set("affinity", mask);
  }
  const CpuIdentity& id = host_.cpu;
  if (!cpu.has("arch") && !id.arch.empty()) cpu.set("arch", id.arch);
  if (id.vendor && !cpu.has("vendor")) cpu.set("vendor", *id.vendor);
  if (id.familyId && !cpu.has("familyid")) {
    // NCCL sets both when the family is missing, overwriting a model that was there.
    cpu.set("familyid", std::to_string(*id.familyId));
    cpu.set("modelid", std::to_string(id.modelId.value_or(0)));
  }
}

XmlNode* DetectContext::findPci(std::string_view busId) const {
  return xml_.root() ? findPciIn(*xml_.root(), busId) : nullptr;
}

Result<XmlNode*> DetectContext::placePci(std::string_view busId, std::string_view defaultClass) {
  XmlNode* node = findPci(busId);
  std::unique_ptr<XmlNode> owned;
  if (node == nullptr) {
    owned = std::make_unique<XmlNode>("pci");
    owned->set("busid", std::string(busId));
    node = owned.get();
  }
  node->init("class", std::string(defaultClass));
  WEFT_TRY(fillFromSys(*node, std::move(owned)));
  return node;
}

// One step of NCCL's ncclTopoGetXmlFromSys: fill `node`, attach it if it is new (`owned`), then
// do the same for its parent, up to the <cpu>.
Status DetectContext::fillFromSys(XmlNode& node, std::unique_ptr<XmlNode> owned) {
  std::optional<std::string> path = sysfs_.pciPath(node.get("busid"));
  readIds(node, path);
  readLink(node, path);
  if (node.get("vendor") == "0x1000") addBcmLinks(node);  // Broadcom switch: P2P peer links
  XmlNode* parent = node.parent();
  std::unique_ptr<XmlNode> parentOwned;
  if (owned) {
    Parent p = parentOf(path);
    parent = p.node;
    parentOwned = std::move(p.owned);
    insertSorted(*parent, std::move(owned));
  }
  if (parent == nullptr) return Status::ok();
  if (parent->name() == "pci") return fillFromSys(*parent, std::move(parentOwned));
  if (parent->name() == "cpu") fillCpu(*parent);
  return Status::ok();
}

void DetectContext::readIds(XmlNode& node, const std::optional<std::string>& path) {
  if (!path) return;
  // The class is always refreshed from sysfs; the ids only when missing.
  if (std::string cls = sysfs_.read(*path, "class"); !cls.empty()) node.set("class", cls);
  for (const char* key : {"vendor", "device", "subsystem_vendor", "subsystem_device"}) {
    if (node.has(key)) continue;
    if (std::string v = sysfs_.read(*path, key); !v.empty()) node.set(key, v);
  }
}

// The link is as fast as the slower of the device and the port above it.
void DetectContext::readLink(XmlNode& node, const std::optional<std::string>& path) {
  if (!node.has("link_speed")) {
    std::string value;
    if (path) {
      std::string device = sysfs_.read(*path, "max_link_speed");
      std::string port = sysfs_.read(*path, "../max_link_speed");
      value = speedValue(port) < speedValue(device) ? port : device;
    }
    node.set("link_speed", value);
  }
  if (!node.has("link_width")) {
    std::string value;
    if (path) {
      long device = std::strtol(sysfs_.read(*path, "max_link_width").c_str(), nullptr, 0);
      long port = std::strtol(sysfs_.read(*path, "../max_link_width").c_str(), nullptr, 0);
      value = std::to_string(std::min(device, port));
    }
    node.set("link_width", value);
  }
}

void DetectContext::addBcmLinks(XmlNode& node) {
  for (const std::string& target : sysfs_.bcmLinks(node.get("busid"))) {
    if (node.childWith("pcilink", "target", target) == nullptr) node.addChild("pcilink").set("target", target);
  }
}

// Where a new element goes: walking up the sysfs path, the first component that is not a bus
// id is the root complex (the device's NUMA node's <cpu>); otherwise the bus id two levels up is
// the parent switch. Without sysfs, the unknown CPU (numaid -1).
DetectContext::Parent DetectContext::parentOf(const std::optional<std::string>& path) {
  Parent p;
  if (!path) {
    bool created = false;
    p.node = &cpu("-1", &created);
    if (created) fillCpu(*p.node);
    return p;
  }
  std::string numaId = sysfs_.read(*path, "numa_node");
  if (numaId.empty()) numaId = "-1";  // NCCL would write "" here, which reads back as 0
  std::string dir = *path;
  for (int levels = 1; !dir.empty(); ++levels) {
    dir.resize(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
    std::string component = dir.substr(dir.rfind('/') + 1);
    if (!isBdf(component)) {
      p.node = &cpu(numaId);
      return p;
    }
    if (levels == 2) {
      p.node = findPci(component);
      if (p.node == nullptr) {
        p.owned = std::make_unique<XmlNode>("pci");
        p.owned->set("busid", component);
        p.node = p.owned.get();
      }
      return p;
    }
  }
  p.node = &cpu(numaId);
  return p;
}

// NCCL keeps the PCI children of an element ordered by bus id (NCCL issue #820).
void DetectContext::insertSorted(XmlNode& parent, std::unique_ptr<XmlNode> child) {
  const std::string busId = child->get("busid");
  size_t pos = parent.children().size();
  for (size_t i = 0; i < parent.children().size(); ++i) {
    const std::string* other = parent.children()[i]->find("busid");
    if (other != nullptr && busId < *other) {
      pos = i;
      break;
    }
  }
  parent.insert(pos, std::move(child));
}

}  // namespace weft::topo
