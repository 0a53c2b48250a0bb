// Topology detection: this machine's topology XML, built as NCCL builds a rank's (ncclTopoGetSystem
// up to fusion), but for the whole machine: every GPU NVML sees, the network devices the caller
// hands in, every PCI device hwloc considers important and every NUMA node.
//
// The document starts from NCCL_TOPO_FILE when it is set (else NCCL's default
// /var/run/nvidia-topologyd/virtualTopology.xml, when it exists): every <cpu host_hash> is
// overwritten with this host's hash and detection only adds what is missing, as NCCL does.
// Elements carry NCCL's attributes in NCCL's order, so the result can be saved and used as
// NCCL_TOPO_FILE by NCCL itself.
//
// Touches the OS (sysfs, hwloc, NVML through dlopen); never needs CUDA. Blocks for as long as
// hwloc takes to read the machine (tens of milliseconds).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/config/settings.h"
#include "core/topo/detect_cpu.h"
#include "core/topo/detect_hwloc.h"
#include "core/topo/detect_net.h"
#include "core/topo/detect_nvml.h"
#include "core/topo/xml.h"

namespace weft::topo {

struct DetectOptions {
  // NCCL_TOPO_FILE and NCCL_HOSTID come from here; nullptr: neither is set.
  const config::Settings* settings = nullptr;
  // The net plugin's devices, in plugin index order.
  std::vector<NetDevice> nets;
  // Each GPU's <gpu gdr> when the document has none (NCCL: the rank's GPU Direct RDMA support).
  bool gpuGdr = false;
  // keep="1" on every GPU and net, so that trimXml() leaves NCCL's per-rank view.
  bool markKeep = false;
  // Where the OS is read. Tests give their own view of a machine instead.
  std::string sysfsRoot = "/sys";
  std::string nvmlLibrary = "libnvidia-ml.so.1";  // empty: no GPU
  std::string defaultTopoFile = "/var/run/nvidia-topologyd/virtualTopology.xml";
  std::optional<std::vector<NvmlGpu>> gpus;  // unset: ask NVML
  std::optional<HwlocInventory> inventory;   // unset: ask hwloc
  std::optional<CpuIdentity> cpu;            // unset: this CPU (CPUID)
  // This host's hash; unset: NCCL's getHostHash (host name and boot id, or NCCL_HOSTID).
  std::optional<uint64_t> hostHash;
};

// This machine's topology. Errors name the file (NCCL_TOPO_FILE that does not parse) or the
// OS facility (hwloc) that failed; a machine without GPU or NVML is not an error.
Result<TopoXml> detectTopology(const DetectOptions& options);

}  // namespace weft::topo
