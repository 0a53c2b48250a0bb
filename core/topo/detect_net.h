// Network devices in a topology XML, as NCCL places a net plugin's devices (ncclTopoFillNet and
// ncclTopoPopulateNics): under their PCI device's <nic>, or under the first <cpu> when they have
// no PCI device, with the plugin's properties as attributes.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/status.h"
#include "core/topo/detect_pci.h"

namespace weft::topo {

// One device of a net plugin, from its getProperties (ncclNetProperties_t).
struct NetDevice {
  std::string name;     // "mlx5_0", "eth0": identifies the device across ranks (fusion)
  std::string pciPath;  // its sysfs directory; empty or not a PCI device: attached to the first CPU
  int dev = -1;         // plugin device index; -1: its position in DetectOptions::nets
  int speed = 0;        // Mbps (<= 0 reads back as 10000)
  int port = 0;
  uint64_t guid = 0;    // NIC chip id: ports of one NIC share it
  float latency = 0;    // µs; NCCL writes it as an integer
  int maxConn = 65536;  // maxComms
  bool gdr = false;     // GPU Direct RDMA: (ptrSupport & CUDA) or (dma-buf and ptrSupport & DMABUF)
  int coll = 0;         // 1 for a CollNet device
};

// Adds or completes the <net name=…> element of `net` with plugin index `dev`. Attributes come in
// NCCL's order (name [keep] dev latency speed port guid maxconn gdr [coll]); only `dev` and `keep`
// overwrite what the document already has.
Result<XmlNode*> fillNet(DetectContext& ctx, const NetDevice& net, int dev, bool markKeep);

// A socket-plugin device for a network interface, as NCCL's socket transport describes it: its
// PCI path from <sysfs>/class/net/<ifname>/device, its speed from .../speed, guid = dev.
Result<NetDevice> socketNetDevice(const Sysfs& sysfs, const std::string& ifname, int dev);

}  // namespace weft::topo
