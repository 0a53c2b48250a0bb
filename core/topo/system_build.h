// Builds the System from a fused topology XML with NCCL 2.28's rules (ncclTopoGetSystemFromXml):
// CPUs and their PCI trees in document order, NVLink, C2C and pcilink passes, Broadcom switch
// flattening, inter-CPU links and link sorting.
#pragma once

#include <cstdint>
#include <optional>

#include "core/base/status.h"
#include "core/topo/system.h"
#include "core/topo/xml.h"

namespace weft::topo {

struct BuildOptions {
  // The host whose view this is (NCCL's localHostHash). Unset: the host of the first <cpu>.
  std::optional<uint64_t> localHostHash;
  // Also reject what NCCL silently ignores: NVLink targets that name no GPU of the file.
  bool strict = false;
};

// Never yields a half-built system: on error, the Status names the file, line and element.
Result<System> buildSystem(const TopoXml& xml, const BuildOptions& options = {});

// NCCL's bus id number: the hex digits of "dddd:bb:dd.f" concatenated ("0000:8d:00.0" ->
// 0x8d000). Unlike NCCL, which stops at the first stray character, anything but hex digits,
// ':' and '.' is an error here.
Result<int64_t> parseBusId(std::string_view text);

// NCCL's PCIe per-lane rate (100 Mb/s units) for a sysfs link_speed string; unknown -> 60.
int pciLaneSpeed(std::string_view text);

}  // namespace weft::topo
