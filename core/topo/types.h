// Node, link and path kinds of the topology graph, with NCCL 2.28's numeric values (they are
// compared with < and > by the path and search rules, and printed as numbers in logs).
#pragma once

#include <cstdint>
#include <string_view>

namespace weft::topo {

enum class NodeType : uint8_t { kGpu = 0, kPci = 1, kNvs = 2, kCpu = 3, kNic = 4, kNet = 5 };
inline constexpr int kNodeTypeCount = 6;
inline constexpr NodeType kAllNodeTypes[kNodeTypeCount] = {NodeType::kGpu, NodeType::kPci, NodeType::kNvs,
                                                           NodeType::kCpu, NodeType::kNic, NodeType::kNet};
constexpr int idx(NodeType t) { return static_cast<int>(t); }

// Link values share the numbering of the path types they produce.
enum class LinkType : uint8_t { kLoc = 0, kNvl = 1, kC2c = 3, kPci = 4, kSys = 9, kNet = 10 };

enum class PathType : uint8_t {
  kLoc = 0,  // self
  kNvl = 1,  // direct NVLink (also "same NIC ASIC, other port" for NIC fusion)
  kNvb = 2,  // NVLink through one intermediate GPU
  kC2c = 3,  // GPU to its CPU over C2C
  kPix = 4,  // at most one PCIe switch
  kPxb = 5,  // several PCIe switches, no host bridge
  kP2c = 6,  // GPU -C2C- CPU -PCIe- NIC
  kPxn = 7,  // GPU to NIC through an NVLink peer GPU
  kPhb = 8,  // through a CPU host bridge
  kSys = 9,  // across the inter-CPU link
  kNet = 10, // through the network
  kDis = 11, // disconnected
};
constexpr int val(PathType t) { return static_cast<int>(t); }
constexpr int val(LinkType t) { return static_cast<int>(t); }

std::string_view nodeTypeName(NodeType t);
std::string_view linkTypeName(LinkType t);  // "" for values that are never link types
std::string_view pathTypeName(PathType t);

// CPU identification, values as NCCL's NCCL_TOPO_CPU_* constants (printed in the system block).
inline constexpr int kCpuArchX86 = 1;
inline constexpr int kCpuArchPower = 2;
inline constexpr int kCpuArchArm = 3;
inline constexpr int kCpuVendorIntel = 1;
inline constexpr int kCpuVendorAmd = 2;
inline constexpr int kCpuVendorZhaoxin = 3;
inline constexpr int kCpuModelIntelBdw = 1;
inline constexpr int kCpuModelIntelSkl = 2;
inline constexpr int kCpuModelIntelSrp = 3;
inline constexpr int kCpuModelIntelErp = 4;
inline constexpr int kCpuModelYongfeng = 1;
inline constexpr int kUndef = -1;  // NCCL_TOPO_UNDEF

// Bandwidths in GB/s (NCCL 2.28 topo.h).
inline constexpr float kLocBw = 5000.0f;
inline constexpr float kSm60NvlinkBw = 18.0f;
inline constexpr float kSm70NvlinkBw = 20.0f;
inline constexpr float kSm80NvlinkBw = 20.0f;
inline constexpr float kSm86NvlinkBw = 12.0f;
inline constexpr float kSm90NvlinkBw = 20.6f;
inline constexpr float kSm100NvlinkBw = 40.1f;
inline constexpr float kPciBw = 12.0f;  // PCIe Gen3 x16
inline constexpr float kAmdBw = 16.0f;
inline constexpr float kBdwQpiBw = 6.0f;
inline constexpr float kSklQpiBw = 10.0f;
inline constexpr float kSrpQpiBw = 22.0f;
inline constexpr float kErpQpiBw = 40.0f;
inline constexpr float kZpiBw = 6.0f;
inline constexpr float kYongfengZpiBw = 9.0f;
inline constexpr float kP9Bw = 32.0f;
inline constexpr float kArmBw = 6.0f;
inline constexpr float kNetBw = 12.0f;  // 100 Gb/s

// Per-link NVLink bandwidth for a GPU of compute capability `cc` (major*10+minor).
float nvlinkBw(int cc);

// The 64-bit node id: host index in the top byte, local id (bus id, NUMA id, plugin dev) below.
inline constexpr int64_t kLocalIdMask = 0x00ffffffffffffffLL;
inline int64_t makeId(int64_t systemId, int64_t localId) {
  return static_cast<int64_t>(static_cast<uint64_t>(systemId) << 56) + (localId & kLocalIdMask);
}
inline int64_t systemIdOf(int64_t id) { return id >> 56; }
inline int64_t localIdOf(int64_t id) { return id & kLocalIdMask; }

inline constexpr int kMaxChannels = 64;  // MAXCHANNELS

}  // namespace weft::topo
