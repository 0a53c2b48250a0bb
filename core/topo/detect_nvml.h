// GPUs as NVML reports them, with NVML loaded at run time (dlopen): weft never needs CUDA or
// NVML to build, and a machine without them simply has no GPUs.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace weft::topo {

// One NVLink that NCCL would record: P2P-capable and active, with its far end.
struct NvmlLink {
  unsigned link = 0;   // NVML link index
  std::string target;  // remote PCI bus id in lower case (NCCL's nvlink target)
};

struct NvmlGpu {
  unsigned index = 0;   // NVML device index (NCCL's gpu dev)
  std::string busId;    // "0000:8d:00.0"
  int sm = 0;           // compute capability major*10+minor
  std::vector<NvmlLink> links;
  // Active C2C links and the bandwidth NVML reports for the last one (MB/s), as NCCL records.
  int c2cCount = 0;
  int c2cBw = 0;
};

// Every GPU NVML sees, in NVML index order. When the library cannot be loaded or initialised,
// or reports no GPU, the list is empty and one INFO line says why: that is not an error.
std::vector<NvmlGpu> readNvmlGpus(const std::string& library = "libnvidia-ml.so.1");

}  // namespace weft::topo
