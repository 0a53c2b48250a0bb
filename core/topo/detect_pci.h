// Places PCI devices in a topology XML the way NCCL's detection does (ncclTopoGetPciNode,
// ncclTopoGetXmlFromSys, ncclTopoGetXmlFromCpu): a device's element gets its ids and link
// speed/width from sysfs, then hangs under the element of its parent switch, two sysfs levels up
// (the switch's downstream port is skipped), or under the <cpu> of its NUMA node at the root
// complex; missing ancestors are created and filled the same way.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/topo/detect_cpu.h"
#include "core/topo/detect_sysfs.h"
#include "core/topo/xml.h"

namespace weft::topo {

// What detection knows about the host, shared by every step.
struct HostFacts {
  uint64_t hostHash = 0;
  CpuIdentity cpu;
  // NUMA node id -> cpumap, from hwloc: used when sysfs has no cpumap for the node.
  std::map<std::string, std::string, std::less<>> numaCpumaps;
};

class DetectContext {
 public:
  DetectContext(TopoXml& xml, const Sysfs& sysfs, const HostFacts& host) : xml_(xml), sysfs_(sysfs), host_(host) {}

  TopoXml& xml() { return xml_; }
  const Sysfs& sysfs() const { return sysfs_; }
  const HostFacts& host() const { return host_; }

  // The <system> element (the root).
  XmlNode& system() { return *xml_.root(); }

  // The <cpu numaid=…> under <system>, created (host_hash, numaid) when missing.
  XmlNode& cpu(std::string_view numaId, bool* created = nullptr);

  // Fills what a <cpu> lacks: affinity, arch, and on x86 vendor, familyid and modelid.
  void fillCpu(XmlNode& cpu);

  // The <pci busid=…> element of a device, anywhere in the document; nullptr when absent.
  XmlNode* findPci(std::string_view busId) const;

  // NCCL's ncclTopoGetPciNode + class default + ncclTopoGetXmlFromSys: the device's element
  // (found or created), filled from sysfs and placed in the tree with its ancestors.
  Result<XmlNode*> placePci(std::string_view busId, std::string_view defaultClass);

 private:
  struct Parent {
    XmlNode* node = nullptr;
    std::unique_ptr<XmlNode> owned;  // a new <pci> that is not in the document yet
  };

  Status fillFromSys(XmlNode& node, std::unique_ptr<XmlNode> owned);
  void readIds(XmlNode& node, const std::optional<std::string>& path);
  void readLink(XmlNode& node, const std::optional<std::string>& path);
  void addBcmLinks(XmlNode& node);
  Parent parentOf(const std::optional<std::string>& path);
  static void insertSorted(XmlNode& parent, std::unique_ptr<XmlNode> child);

  TopoXml& xml_;
  const Sysfs& sysfs_;
  const HostFacts& host_;
};

}  // namespace weft::topo
