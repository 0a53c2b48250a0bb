// System: the topology graph NCCL builds from a fused topology XML. Nodes live in one vector per
// kind, in creation order (the order matters: NCCL's searches iterate nodes by index). Links
// name their remote node by (kind, index); paths to every GPU, CPU, NET and NVS are filled by
// core/topo/paths and point at the links they traverse so that a search can reserve bandwidth
// on them in place.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/topo/types.h"

namespace weft::topo {

struct NodeRef {
  NodeType type = NodeType::kGpu;
  int index = -1;
  bool operator==(const NodeRef&) const = default;
};

// What following a link costs in the other direction (set by finalizeLinks for the search).
enum class RevCost : uint8_t {
  kNone = 0,
  kPreAmpereGpu = 1,  // into a GPU older than sm80: 1/8 of the traffic back, unless sent by a GPU
  kPowerNvlink = 2,   // NVLink into a POWER CPU: the full traffic back
};

struct Link {
  LinkType type = LinkType::kLoc;
  float bw = 0;
  NodeRef rem;
  Link* rev = nullptr;  // the link from rem back to this node, same type (finalizeLinks)
  RevCost revCost = RevCost::kNone;
};

// A path from a node to one node of a given kind: the links to follow, starting at the node
// that owns the path. An empty list with type kLoc is the path to oneself; with type kDis,
// there is no path.
struct Path {
  std::vector<Link*> hops;
  float bw = 0;
  PathType type = PathType::kDis;
  bool viaIntelCpu = false;  // crosses an x86 Intel CPU (its root complex splits P2P into 64B TLPs)
  int count() const { return static_cast<int>(hops.size()); }
};

struct GpuInfo {
  int dev = kUndef;  // NVML index
  int rank = kUndef;
  int cudaCompCap = kUndef;
  int gdrSupport = 0;
};

struct NetInfo {
  int dev = 0;          // plugin device index
  uint64_t pciId = 0;   // hash of the nearest PCI bus id (or of the GUID)
  uint64_t asic = 0;    // GUID: same value on the ports of one NIC
  int port = kUndef;
  float bw = 0;         // GB/s
  float latency = 0;    // µs
  int gdrSupport = 0;
  int collSupport = 0;
  int maxChannels = 0;
  int localGpu = -1;    // GPU index whose channel-0 NIC this is (set by paths)
};

struct CpuInfo {
  int arch = kUndef;
  int vendor = kUndef;
  int model = kUndef;
  std::string affinity;  // sysfs cpumap text, as in the XML
};

struct PciInfo {
  uint64_t device = 0;  // vendor<<48 | device<<32 | subsystem_vendor<<16 | subsystem_device
};

struct Node {
  NodeType type = NodeType::kGpu;
  int64_t id = 0;
  GpuInfo gpu;
  NetInfo net;
  CpuInfo cpu;
  PciInfo pci;
  std::vector<Link> links;  // NVLink first, then PCI down, PCI up, SYS (after sortLinks)
  std::array<std::vector<Path>, kNodeTypeCount> paths;  // paths[kind][index of the target]
  uint64_t used = 0;  // search scratch: one bit per channel

  const Path& pathTo(NodeType t, int index) const { return paths[idx(t)][static_cast<size_t>(index)]; }
  Path& pathTo(NodeType t, int index) { return paths[idx(t)][static_cast<size_t>(index)]; }
};

class System {
 public:
  System() = default;
  // Paths hold pointers into the links of nodes: a System is moved, never copied.
  System(const System&) = delete;
  System& operator=(const System&) = delete;
  System(System&&) noexcept = default;
  System& operator=(System&&) noexcept = default;

  std::vector<Node>& nodes(NodeType t) { return nodes_[idx(t)]; }
  const std::vector<Node>& nodes(NodeType t) const { return nodes_[idx(t)]; }
  int count(NodeType t) const { return static_cast<int>(nodes_[idx(t)].size()); }
  Node& node(NodeRef r) { return nodes_[idx(r.type)][static_cast<size_t>(r.index)]; }
  const Node& node(NodeRef r) const { return nodes_[idx(r.type)][static_cast<size_t>(r.index)]; }
  Node& node(NodeType t, int i) { return nodes_[idx(t)][static_cast<size_t>(i)]; }
  const Node& node(NodeType t, int i) const { return nodes_[idx(t)][static_cast<size_t>(i)]; }

  // Index of the node of kind `t` with this id, or -1.
  int find(NodeType t, int64_t id) const;
  int gpuIndexOfRank(int rank) const;

  // Appends a node with NCCL's initial values for its kind; returns its index.
  int addNode(NodeType t, int64_t id);
  // Adds `bw` to the link node -> rem of this type, creating it if needed, and keeps the
  // node's links sorted by descending bandwidth (a grown link moves up past smaller ones).
  void connect(NodeRef node, NodeRef rem, LinkType type, float bw);
  // Removes a node and every link to it, and renumbers references to later nodes of its kind.
  // Paths are dropped: recompute them afterwards.
  void removeNode(NodeType t, int index);
  // Fills Link::rev and Link::revCost for every link; call once links no longer change.
  void finalizeLinks();

  // Host identification: hostHashes()[systemId].
  std::vector<uint64_t>& hostHashes() { return hostHashes_; }
  const std::vector<uint64_t>& hostHashes() const { return hostHashes_; }
  int systemId() const { return systemId_; }
  void setSystemId(int id) { systemId_ = id; }

  // Filled by the search setup.
  float maxBw = 0;
  float totalBw = 0;
  // Set by trimming: the communicator spans more GPUs than this system holds.
  bool inter = false;

 private:
  std::array<std::vector<Node>, kNodeTypeCount> nodes_;
  std::vector<uint64_t> hostHashes_;
  int systemId_ = 0;
};

}  // namespace weft::topo
