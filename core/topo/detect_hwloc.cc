#include "core/topo/detect_hwloc.h"

#include <hwloc.h>

#include <cerrno>

#include "core/base/strings.h"
#include "core/topo/detect_cpu.h"

namespace weft::topo {
namespace {

class HwlocTopology {
 public:
  HwlocTopology() { ok_ = hwloc_topology_init(&topo_) == 0; }
  ~HwlocTopology() {
    if (ok_) hwloc_topology_destroy(topo_);
  }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;

  Status load() {
    if (!ok_) return errnoError("hwloc_topology_init", errno);
    if (hwloc_topology_set_io_types_filter(topo_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0)
      return errnoError("hwloc_topology_set_io_types_filter", errno);
    // hwloc's Linux backend reads the PCI devices from sysfs by itself; its libpciaccess backend
    // only adds device names (and leaks the pci.ids strings it reads).
    (void)hwloc_topology_set_components(topo_, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
    if (hwloc_topology_load(topo_) != 0) return errnoError("hwloc_topology_load", errno);
    return Status::ok();
  }
  hwloc_topology_t get() const { return topo_; }

 private:
  hwloc_topology_t topo_ = nullptr;
  bool ok_ = false;
};

std::vector<unsigned> setBits(hwloc_const_bitmap_t set) {
  std::vector<unsigned> bits;
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) bits.push_back(static_cast<unsigned>(i));
  return bits;
}

}  // namespace

Result<HwlocInventory> readHwloc() {
  HwlocTopology topo;
  WEFT_TRY(topo.load().withContext("reading the machine's topology with hwloc"));
  HwlocInventory inv;
  int last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo.get()));
  unsigned nbits = last < 0 ? 1u : static_cast<unsigned>(last) + 1;
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo.get(), HWLOC_OBJ_NUMANODE, o)) != nullptr;) {
    inv.numaNodes.push_back({std::to_string(o->os_index), cpumapString(setBits(o->cpuset), nbits)});
  }
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_pcidev(topo.get(), o)) != nullptr;) {
    const auto& p = o->attr->pcidev;
    inv.pciDevices.push_back({strprintf("%04x:%02x:%02x.%01x", p.domain, p.bus, p.dev, p.func), p.class_id});
  }
  return inv;
}

}  // namespace weft::topo
