// What hwloc knows about this machine that detection uses: the NUMA nodes with their CPU sets,
// and the PCI devices hwloc considers important (the ones `lstopo` shows by default: GPUs,
// network, storage, accelerators).
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace weft::topo {

struct HwlocNuma {
  std::string numaId;  // OS index
  std::string cpumap;  // its CPU set in the kernel's cpumap format
};

struct HwlocPciDevice {
  std::string busId;     // "0000:8d:00.0"
  unsigned classId = 0;  // 16-bit PCI class (0x0302); sysfs has the full 24 bits
};

struct HwlocInventory {
  std::vector<HwlocNuma> numaNodes;
  std::vector<HwlocPciDevice> pciDevices;
};

// Loads this machine's topology with hwloc. Fails only when hwloc itself fails.
Result<HwlocInventory> readHwloc();

}  // namespace weft::topo
