// A GPU's elements in a topology XML, as NCCL's ncclTopoFillGpu writes them: the PCI device and
// its ancestors, then <gpu dev sm>, its NVLinks and C2C links, and the class of each NVLink's far
// end. What the document already says (NCCL_TOPO_FILE) is kept.
#pragma once

#include "core/base/status.h"
#include "core/topo/detect_nvml.h"
#include "core/topo/detect_pci.h"

namespace weft::topo {

// The <gpu> element, or nullptr when the document marks the device as no GPU (dev="-1").
Result<XmlNode*> fillGpu(DetectContext& ctx, const NvmlGpu& gpu);

// NVLinks NCCL asks NVML about for a compute capability: 0 before sm60, then 4, 6, 12, 18.
unsigned maxNvLinks(int sm);

}  // namespace weft::topo
