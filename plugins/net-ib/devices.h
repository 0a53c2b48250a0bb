// The IB plugin's devices: one per active port of every RDMA device NCCL_IB_HCA selects, found
// once per process with ibv_get_device_list, in the library's order (ports in number order).
// Each keeps its device context open and shares one protection domain among its comms.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugins/net-ib/config.h"
#include "plugins/net-ib/verbs.h"

namespace weft::ib {

// One verbs device, opened once and shared by the ports listed from it.
struct Hca {
  std::string name;  // "mlx5_0"
  ContextPtr context;
  PdPtr pd;          // declared after context: destroyed first
  std::string pciPath;  // realpath of /sys/class/infiniband/<name>/device, "" when unknown
  uint64_t guid = 0;    // node GUID, host order
  bool dmabuf = false;  // ibv_reg_dmabuf_mr is implemented by this device's provider
  int maxQpWr = 0;
};

struct Device {
  std::shared_ptr<Hca> hca;
  std::string name;  // "mlx5_0" (ports other than 1: "mlx5_0:2")
  uint8_t port = 1;
  uint8_t linkLayer = IBV_LINK_LAYER_INFINIBAND;
  uint16_t lid = 0;
  uint8_t gidIndex = 0;
  std::array<uint8_t, 16> gid{};
  ibv_mtu mtu = IBV_MTU_1024;
  int speedMbps = 0;
  uint32_t maxMessage = 0;  // the port's max_msg_sz
};

struct Discovery {
  std::vector<Device> devices;
  std::string note;  // why there is no device (or which ports were left out), for the INFO line
};

// Lists and opens devices. Never fails: no RDMA device, or none usable, gives an empty list and
// a note saying why (the verbs call and errno where one failed).
Discovery discover(const Config& config);

}  // namespace weft::ib
