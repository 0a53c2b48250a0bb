#include "core/topo/paths.h"

#include <algorithm>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::topo {
namespace {

// Paths to nodes of kind `t` exist on a node once a search from such a node has touched it
// (NCCL allocates them lazily; the set of nodes that have them decides what gets printed).
void ensurePaths(const System& s, Node& n, NodeType t) {
  auto& v = n.paths[idx(t)];
  if (v.empty()) v.assign(static_cast<size_t>(s.count(t)), Path{});
}

bool hasPaths(const Node& n, NodeType t) { return !n.paths[idx(t)].empty(); }

PathType hopType(const Node& node, const Node& rem, const Link& link, const Path& path, int newCount) {
  // Path and link types share values; a NET link counts as local (only NIC->GPU matters).
  PathType type = link.type == LinkType::kNet ? PathType::kLoc : static_cast<PathType>(val(link.type));
  if (node.type == NodeType::kPci && rem.type == NodeType::kPci) type = PathType::kPxb;
  if (link.type == LinkType::kPci && (node.type == NodeType::kCpu || rem.type == NodeType::kCpu)) type = PathType::kPhb;
  if (node.type == NodeType::kGpu && path.type == PathType::kNvl && type == PathType::kNvl && newCount > 1)
    type = PathType::kNvb;
  return std::max(path.type, type);
}

// Breadth-first search from `base`, keeping for every node the widest path to base among the
// shortest ones found so far (NCCL 2.28's rule: a longer path never replaces a shorter one).
Status setPaths(System& s, NodeRef base, bool nvbDisable) {
  const NodeType bt = base.type;
  // Paths to a node are filed under the first node with its id, as NCCL finds them by id: nodes
  // sharing an id (a file listing one NIC's ports under several CPUs) share one slot, which
  // every one of them updates, and the others' slots stay DIS.
  const int bi = s.find(bt, s.node(base).id);
  ensurePaths(s, s.node(base), bt);
  Path& basePath = s.node(base).pathTo(bt, bi);
  basePath.hops.clear();
  basePath.bw = kLocBw;
  basePath.type = PathType::kLoc;

  std::vector<NodeRef> level{base}, next;
  while (!level.empty()) {
    next.clear();
    for (NodeRef nr : level) {
      Node& node = s.node(nr);
      for (Link& link : node.links) {
        Node& rem = s.node(link.rem);
        ensurePaths(s, rem, bt);
        const Path& path = node.pathTo(bt, bi);
        Path& remPath = rem.pathTo(bt, bi);
        // Through a GPU, only one more NVLink hop to another GPU (NVB), and only next to base.
        if (!(nr == base) && node.type == NodeType::kGpu &&
            (nvbDisable || link.type != LinkType::kNvl || rem.type != NodeType::kGpu || path.count() > 1))
          continue;
        float bw = std::min(path.bw, link.bw);
        if (!((remPath.bw == 0 || remPath.count() > path.count()) && remPath.bw < bw)) continue;
        auto rev = std::find_if(rem.links.begin(), rem.links.end(),
                                [&](const Link& l) { return l.rem == nr && l.type == link.type; });
        if (rev == rem.links.end()) {
          return internalError(strprintf("no reverse link from %s/%lx to %s/%lx: links must be symmetric "
                                         "(an NVLink listed by one GPU only?)",
                                         std::string(nodeTypeName(rem.type)).c_str(), static_cast<unsigned long>(rem.id),
                                         std::string(nodeTypeName(node.type)).c_str(), static_cast<unsigned long>(node.id)));
        }
        PathType type = hopType(node, rem, link, path, path.count() + 1);
        std::vector<Link*> hops;
        hops.reserve(path.hops.size() + 1);
        hops.push_back(&*rev);
        hops.insert(hops.end(), path.hops.begin(), path.hops.end());
        remPath.hops = std::move(hops);
        remPath.bw = bw;
        remPath.type = type;
        if (std::find(next.begin(), next.end(), link.rem) == next.end()) next.push_back(link.rem);
      }
    }
    std::swap(level, next);
  }
  return Status::ok();
}

PathType mergePathType(PathType a, PathType b) {
  PathType hi = std::max(a, b), lo = std::min(a, b);
  if (hi == PathType::kPhb && lo == PathType::kC2c) return PathType::kP2c;
  return hi;
}

// Replaces the path (t1,i1) -> (t2,i2) by (t1,i1) -> (tx,ix) -> (t2,i2). Through a GPU, the
// result is a PXN path.
void addInterStep(System& s, NodeType tx, int ix, NodeType t1, int i1, NodeType t2, int i2) {
  Node& src = s.node(t1, i1);
  const Node& mid = s.node(tx, ix);
  if (!hasPaths(src, tx) || !hasPaths(mid, t2) || !hasPaths(src, t2)) return;
  const Path& first = src.pathTo(tx, ix);
  const Path& second = mid.pathTo(t2, i2);
  Path merged;
  merged.hops = first.hops;
  merged.hops.insert(merged.hops.end(), second.hops.begin(), second.hops.end());
  merged.type = tx == NodeType::kGpu ? PathType::kPxn : mergePathType(first.type, second.type);
  merged.bw = std::min(first.bw, second.bw);
  src.pathTo(t2, i2) = std::move(merged);
}

bool isPow2(int v) { return (v & (v - 1)) == 0; }

int mirrorBits(int v, int pow2) {
  int mirror = 0;
  for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
    if (v & b) mirror |= mb;
  return mirror;
}

void rerouteP2p(System& s, const Params& params) {
  int n = s.count(NodeType::kGpu);
  for (int g = 0; g < n; ++g) {
    for (int p = 0; p < n; ++p) {
      P2pCheck c = checkP2p(s, params, s.node(NodeType::kGpu, p).gpu.rank, s.node(NodeType::kGpu, g).gpu.rank);
      if (c.p2p) continue;
      int cpu = localCpu(s, g);
      if (cpu >= 0) addInterStep(s, NodeType::kCpu, cpu, NodeType::kGpu, p, NodeType::kGpu, g);
    }
  }
}

// GPUs that can use neither P2P nor shared memory with each other get a NET path, so that
// trimming separates them (what NCCL's transports answer in canConnect).
void markUnreachablePeers(System& s, const Params& params) {
  int n = s.count(NodeType::kGpu);
  for (int g = 0; g < n; ++g) {
    int dst = s.node(NodeType::kGpu, g).gpu.rank;
    for (int p = 0; p < n; ++p) {
      if (p == g) continue;
      int src = s.node(NodeType::kGpu, p).gpu.rank;
      P2pCheck c = checkP2p(s, params, src, dst);
      bool p2p = c.p2p && (c.intermediateRank != -1 || !checkNet(s, params, src, dst));
      bool shm = !params.shmDisable && !checkNet(s, params, src, dst);
      if (!p2p && !shm) s.node(NodeType::kGpu, p).pathTo(NodeType::kGpu, g).type = PathType::kNet;
    }
  }
}

// GPU -C2C- CPU -PCI- NIC is a P2C path, better than the PHB the search found.
void applyC2cNicPaths(System& s) {
  for (int n = 0; n < s.count(NodeType::kNet); ++n) {
    for (int g = 0; g < s.count(NodeType::kGpu); ++g) {
      int c = localCpu(s, g);
      if (c < 0) continue;
      Node& gpu = s.node(NodeType::kGpu, g);
      Node& net = s.node(NodeType::kNet, n);
      if (!hasPaths(net, NodeType::kCpu) || !hasPaths(gpu, NodeType::kNet) || !hasPaths(net, NodeType::kGpu)) continue;
      if (mergePathType(gpu.pathTo(NodeType::kCpu, c).type, net.pathTo(NodeType::kCpu, c).type) != PathType::kP2c)
        continue;
      Path& up = gpu.pathTo(NodeType::kNet, n);
      Path& down = net.pathTo(NodeType::kGpu, g);
      up.type = std::min(PathType::kP2c, up.type);
      down.type = std::min(PathType::kP2c, down.type);
    }
  }
}

// PXN: reach NIC n through the NVLink peer that owns it. GDR: without GPU Direct RDMA, NIC
// traffic goes through the GPU's CPU.
Status applyNicPaths(System& s, const Params& params) {
  for (int n = 0; n < s.count(NodeType::kNet); ++n) {
    // NCCL asks for the NIC's local GPU again for every GPU; the answer depends only on paths,
    // so it is asked again only after a step below changed one.
    int peer = -1;
    bool peerKnown = false;
    for (int g = 0; g < s.count(NodeType::kGpu); ++g) {
      if (!params.pxnDisable) {
        if (!peerKnown) {
          peer = localGpu(s, params, n);
          peerKnown = true;
        }
        if (peer != g && peer != -1) {
          const Node& peerNode = s.node(NodeType::kGpu, peer);
          const Node& gpu = s.node(NodeType::kGpu, g);
          PathType pxnType = params.pxnC2c ? PathType::kP2c : PathType::kPxb;
          const Path& peerToNet = peerNode.pathTo(NodeType::kNet, n);
          const Path& gpuToNet = gpu.pathTo(NodeType::kNet, n);
          if (peerToNet.type <= pxnType && peerNode.pathTo(NodeType::kGpu, g).type <= PathType::kNvl &&
              systemIdOf(peerNode.id) == systemIdOf(gpu.id) &&
              (peerToNet.bw > gpuToNet.bw || gpuToNet.type > PathType::kPxn)) {
            addInterStep(s, NodeType::kGpu, peer, NodeType::kGpu, g, NodeType::kNet, n);
            peerKnown = false;
          }
        }
      }
      if (s.node(NodeType::kGpu, g).pathTo(NodeType::kNet, n).type < PathType::kPhb) {
        WEFT_ASSIGN_OR_RETURN(GdrMode gdr, checkGdr(s, params, s.node(NodeType::kGpu, g).gpu.rank,
                                                    s.node(NodeType::kNet, n).id, false));
        if (gdr == GdrMode::kDisable) {
          int cpu = localCpu(s, g);
          if (cpu < 0) continue;
          addInterStep(s, NodeType::kCpu, cpu, NodeType::kNet, n, NodeType::kGpu, g);
          addInterStep(s, NodeType::kCpu, cpu, NodeType::kGpu, g, NodeType::kNet, n);
          peerKnown = false;
        }
      }
    }
  }
  return Status::ok();
}

void markIntelPaths(System& s) {
  for (NodeType t : kAllNodeTypes) {
    for (Node& n : s.nodes(t)) {
      for (auto& paths : n.paths) {
        for (Path& p : paths) {
          p.viaIntelCpu = false;
          for (const Link* hop : p.hops) {
            const Node& h = s.node(hop->rem);
            if (h.type == NodeType::kCpu && h.cpu.arch == kCpuArchX86 && h.cpu.vendor == kCpuVendorIntel)
              p.viaIntelCpu = true;
          }
        }
      }
    }
  }
}

}  // namespace

Status computePaths(System& s, const Params& params, const CommView* comm) {
  for (NodeType t : kAllNodeTypes)
    for (Node& n : s.nodes(t))
      for (auto& p : n.paths) p.clear();
  for (NodeType t : {NodeType::kCpu, NodeType::kGpu, NodeType::kNet, NodeType::kNvs})
    for (int i = 0; i < s.count(t); ++i) WEFT_TRY(setPaths(s, {t, i}, params.nvbDisable));
  rerouteP2p(s, params);
  if (comm != nullptr) markUnreachablePeers(s, params);
  applyC2cNicPaths(s);
  WEFT_TRY(applyNicPaths(s, params));
  for (int n = 0; n < s.count(NodeType::kNet); ++n) s.node(NodeType::kNet, n).net.localGpu = localGpu(s, params, n);
  markIntelPaths(s);
  s.finalizeLinks();
  return Status::ok();
}

Status trimSystem(System& s, const CommView& comm) {
  int ngpus = s.count(NodeType::kGpu);
  std::vector<int> domains(static_cast<size_t>(ngpus));
  std::vector<int64_t> ids(static_cast<size_t>(ngpus));
  int myDomain = 0;
  for (int g = 0; g < ngpus; ++g) {
    const Node& gpu = s.node(NodeType::kGpu, g);
    domains[g] = g;
    ids[g] = gpu.id;
    for (int p = 0; p < g; ++p)
      if (gpu.pathTo(NodeType::kGpu, p).type < PathType::kNet) domains[g] = std::min(domains[g], domains[p]);
    if (gpu.gpu.rank == comm.rank) myDomain = domains[g];
  }
  for (int i = 0; i < ngpus; ++i) {
    if (domains[i] == myDomain) continue;
    int g = s.find(NodeType::kGpu, ids[i]);
    if (g < 0) return internalError(strprintf("trim: GPU %lx vanished", static_cast<unsigned long>(ids[i])));
    s.removeNode(NodeType::kGpu, g);
  }
  s.inter = s.count(NodeType::kGpu) != comm.nRanks;
  return Status::ok();
}

P2pCheck checkP2p(const System& s, const Params& params, int rank1, int rank2) {
  P2pCheck out;
  int g1 = s.gpuIndexOfRank(rank1);
  int g2 = s.gpuIndexOfRank(rank2);
  if (g1 < 0 || g2 < 0) return out;
  const Path& path = s.node(NodeType::kGpu, g1).pathTo(NodeType::kGpu, g2);
  if (path.count() == 2) {
    const Node& mid = s.node(path.hops[0]->rem);
    if (mid.type == NodeType::kGpu) out.intermediateRank = mid.gpu.rank;
  }
  // P2P stops at PCIe switches by default; AMD CPUs with at most two GPUs allow any path.
  int level = val(PathType::kPxb);
  if (s.count(NodeType::kCpu) > 0) {
    const CpuInfo& cpu = s.node(NodeType::kCpu, 0).cpu;  // NCCL judges the CPU type by the first one
    if (cpu.arch == kCpuArchX86 && cpu.vendor == kCpuVendorAmd && s.count(NodeType::kGpu) <= 2) level = val(PathType::kSys);
  }
  if (params.userP2pLevel) level = *params.userP2pLevel;
  out.p2p = val(path.type) <= level;
  if (path.type == PathType::kNvl) {
    const GpuInfo& a = s.node(NodeType::kGpu, g1).gpu;
    const GpuInfo& b = s.node(NodeType::kGpu, g2).gpu;
    out.read = a.cudaCompCap == b.cudaCompCap && a.cudaCompCap == 80;
  }
  return out;
}

Result<GdrMode> checkGdr(const System& s, const Params& params, int rank, int64_t netId, bool read) {
  int n = s.find(NodeType::kNet, netId);
  int g = s.gpuIndexOfRank(rank);
  if (n < 0 || g < 0) return internalError(strprintf("checkGdr: no GPU rank %d or NET %lx", rank, static_cast<unsigned long>(netId)));
  const Node* gpu = &s.node(NodeType::kGpu, g);
  if (s.node(NodeType::kNet, n).net.gdrSupport == 0 || gpu->gpu.gdrSupport == 0) return GdrMode::kDisable;
  if (read) {
    if (params.netGdrRead == 0) return GdrMode::kDisable;
    // Before Ampere, GDR reads compete with other PCI flows: only with NVLink, or a lone GPU.
    if (params.netGdrRead < 0 && gpu->gpu.cudaCompCap < 80) {
      bool nvlink = s.count(NodeType::kGpu) == 1;
      for (int i = 0; i < s.count(NodeType::kGpu) && !nvlink; ++i)
        if (i != g && gpu->pathTo(NodeType::kGpu, i).type == PathType::kNvl) nvlink = true;
      if (!nvlink) return GdrMode::kDisable;
    }
  }
  int level = params.userGdrLevel.value_or(val(PathType::kPxb));
  int distance = val(gpu->pathTo(NodeType::kNet, n).type);
  if (distance == val(PathType::kPxn)) {
    WEFT_ASSIGN_OR_RETURN(int proxy, intermediateRank(s, rank, n));
    g = s.gpuIndexOfRank(proxy);
    gpu = &s.node(NodeType::kGpu, g);
    distance = val(gpu->pathTo(NodeType::kNet, n).type);
  }
  if (params.netGdrC2c && distance == val(PathType::kP2c)) {
    WEFT_INFO(log::kGraph | log::kNet, "GPU %d / HCA %lx connected via C2C link", rank, static_cast<unsigned long>(netId));
    distance = val(PathType::kC2c);
  }
  if (distance > level) {
    WEFT_INFO(log::kGraph | log::kNet, "GPU Direct RDMA Disabled for GPU %d / HCA %lx (distance %d > %d)", rank,
              static_cast<unsigned long>(netId), distance, level);
    return GdrMode::kDisable;
  }
  int c = localCpu(s, g);
  GdrMode mode = c >= 0 && gpu->pathTo(NodeType::kCpu, c).type == PathType::kC2c && distance != val(PathType::kC2c)
                     ? GdrMode::kPci
                     : GdrMode::kDefault;
  WEFT_INFO(log::kGraph | log::kNet, "GPU Direct RDMA Enabled for GPU %d / HCA %lx (distance %d <= %d), read %d mode %s",
            rank, static_cast<unsigned long>(netId), distance, level, read ? 1 : 0,
            mode == GdrMode::kPci ? "PCI" : "Default");
  return mode;
}

bool checkNet(const System& s, const Params& params, int rank1, int rank2) {
  if (params.netDisableIntra) return false;
  int g1 = s.gpuIndexOfRank(rank1);
  int g2 = s.gpuIndexOfRank(rank2);
  if (g1 < 0 || g2 < 0) return true;
  const Node& a = s.node(NodeType::kGpu, g1);
  const Node& b = s.node(NodeType::kGpu, g2);
  float speed = a.pathTo(NodeType::kGpu, g2).bw;
  float net1 = 0, net2 = 0;
  for (int n = 0; n < s.count(NodeType::kNet); ++n) {
    const Path& p1 = a.pathTo(NodeType::kNet, n);
    const Path& p2 = b.pathTo(NodeType::kNet, n);
    if (p1.type <= PathType::kPxb && p1.bw > net1) net1 = p1.bw;
    if (p2.type <= PathType::kPxb && p2.bw > net2) net2 = p2.bw;
  }
  return net1 > speed && net2 > speed;
}

int localCpu(const System& s, int gpu) {
  const Node& g = s.node(NodeType::kGpu, gpu);
  if (!hasPaths(g, NodeType::kCpu)) return -1;
  int best = -1, minHops = 0;
  for (int c = 0; c < s.count(NodeType::kCpu); ++c) {
    int hops = g.pathTo(NodeType::kCpu, c).count();
    if (hops > 0 && (minHops == 0 || hops < minHops)) {
      best = c;
      minHops = hops;
    }
  }
  return best;
}

namespace {

// localNodes into a reused buffer: the search setup calls it tens of thousands of times.
void localNodesInto(const System& s, NodeType type, int index, NodeType resultType, PathType* pathType,
                    std::vector<int>& out) {
  out.clear();
  const auto& paths = s.node(type, index).paths[idx(resultType)];
  PathType minType = PathType::kDis;
  float maxBw = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].bw > maxBw || (paths[i].bw == maxBw && paths[i].type < minType)) {
      maxBw = paths[i].bw;
      minType = paths[i].type;
      if (pathType) *pathType = minType;
      out.clear();
    }
    if (paths[i].bw == maxBw && paths[i].type == minType) out.push_back(static_cast<int>(i));
  }
}

}  // namespace

std::vector<int> localNodes(const System& s, NodeType type, int index, NodeType resultType, PathType* pathType) {
  std::vector<int> out;
  localNodesInto(s, type, index, resultType, pathType, out);
  return out;
}

namespace {

// localNet for one GPU, channel by channel: its NICs, where it starts among them and how many
// channels it takes to come back (NICs per GPU).
struct LocalNetPlan {
  std::vector<int> nets;
  int start = 0;
  int period = 1;
  int at(int channelId) const {
    if (nets.empty()) return -1;
    return nets[static_cast<size_t>((start + channelId % period) % static_cast<int>(nets.size()))];
  }
};

void planLocalNet(const System& s, const Params& params, int gpu, LocalNetPlan& plan) {
  thread_local std::vector<int> gpus;
  localNodesInto(s, NodeType::kGpu, gpu, NodeType::kNet, nullptr, plan.nets);
  if (plan.nets.empty()) return;
  int count = static_cast<int>(plan.nets.size());
  int netsPerGpu = 1;
  switch (params.netDevsPolicy) {
    case NetDevsPolicy::kAuto: {
      localNodesInto(s, NodeType::kNet, plan.nets[0], NodeType::kGpu, nullptr, gpus);
      int n = static_cast<int>(gpus.size());
      netsPerGpu = n > 0 ? (count + n - 1) / n : 1;
      break;
    }
    case NetDevsPolicy::kAll: netsPerGpu = count; break;
    case NetDevsPolicy::kMax: netsPerGpu = std::min(params.netDevsMax, count); break;
  }
  int net = s.node(NodeType::kGpu, gpu).gpu.dev;
  // Spread GPUs over the NICs they share: GPU dev bits mirrored across the power-of-two count.
  if (isPow2(count)) net = mirrorBits(net, count);
  plan.start = net;
  plan.period = std::max(1, netsPerGpu);
}

}  // namespace

int localNet(const System& s, const Params& params, int rank, int channelId) {
  int gpu = s.gpuIndexOfRank(rank);
  if (gpu < 0) return -1;
  thread_local LocalNetPlan plan;
  planLocalNet(s, params, gpu, plan);
  return plan.at(channelId);
}

int localGpu(const System& s, const Params& params, int net) {
  // NCCL asks by id: the first NET with that id, and any NET with that id matches.
  const int64_t id = s.node(NodeType::kNet, net).id;
  std::vector<int> gpus = localNodes(s, NodeType::kNet, s.find(NodeType::kNet, id), NodeType::kGpu);
  std::vector<LocalNetPlan> plans(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) planLocalNet(s, params, gpus[i], plans[i]);
  // localNet repeats with the channel: its period (NICs per GPU) is at most the NIC count, so
  // channels past that find nothing new. NCCL tries all kMaxChannels; the answer is the same.
  const int channels = std::min(kMaxChannels, std::max(1, s.count(NodeType::kNet)));
  for (int c = 0; c < channels; ++c)
    for (size_t i = 0; i < gpus.size(); ++i)
      if (plans[i].at(c) >= 0 && s.node(NodeType::kNet, plans[i].at(c)).id == id) return gpus[i];
  return -1;
}

Result<int> intermediateRank(const System& s, int rank, int net) {
  int g = s.gpuIndexOfRank(rank);
  if (g < 0) return internalError(strprintf("no GPU of rank %d", rank));
  const Path& path = s.node(NodeType::kGpu, g).pathTo(NodeType::kNet, net);
  if (path.type != PathType::kPxn) return rank;
  const Node* node = nullptr;
  NodeType type = NodeType::kNvs;
  for (int i = 0; i < path.count() && type == NodeType::kNvs; ++i) {
    node = &s.node(path.hops[static_cast<size_t>(i)]->rem);
    type = node->type;
  }
  if (node == nullptr || type != NodeType::kGpu)
    return internalError(strprintf("no intermediate GPU between GPU rank %d and NET %d", rank, net));
  return node->gpu.rank;
}

int gpuMinPath(const System& s, NodeType type) {
  int minPath = val(PathType::kSys);
  for (int i = 0; i < s.count(NodeType::kGpu); ++i) {
    const auto& paths = s.node(NodeType::kGpu, i).paths[idx(type)];
    for (size_t j = 0; j < paths.size(); ++j) {
      if (type == NodeType::kGpu && static_cast<int>(j) == i) continue;
      minPath = std::min(minPath, val(paths[j].type));
    }
  }
  return minPath;
}

int gpuMaxPath(const System& s, NodeType type) {
  int maxPath = val(PathType::kLoc);
  for (int i = 0; i < s.count(NodeType::kGpu); ++i) {
    const auto& paths = s.node(NodeType::kGpu, i).paths[idx(type)];
    for (size_t j = 0; j < paths.size(); ++j) {
      if (type == NodeType::kGpu && static_cast<int>(j) == i) continue;
      maxPath = std::max(maxPath, val(paths[j].type));
    }
  }
  return maxPath;
}

bool splitNvLink(const System& s) {
  int n = s.count(NodeType::kGpu);
  std::vector<int> domain(static_cast<size_t>(n)), size(static_cast<size_t>(n), 0);
  for (int g = 0; g < n; ++g) domain[g] = g;
  for (int g = 0; g < n; ++g)
    for (int p = g + 1; p < n; ++p)
      if (s.node(NodeType::kGpu, g).pathTo(NodeType::kGpu, p).type == PathType::kNvl) domain[p] = domain[g];
  for (int g = 0; g < n; ++g) size[domain[g]]++;
  int domains = 0;
  for (int g = 0; g < n; ++g)
    if (size[g] > 1) ++domains;
  return domains == 2;
}

int minCompCap(const System& s) {
  int m = 0;
  for (int i = 0; i < s.count(NodeType::kGpu); ++i) {
    int cc = s.node(NodeType::kGpu, i).gpu.cudaCompCap;
    m = i == 0 ? cc : std::min(m, cc);
  }
  return m;
}

int maxCompCap(const System& s) {
  int m = 0;
  for (int i = 0; i < s.count(NodeType::kGpu); ++i) m = std::max(m, s.node(NodeType::kGpu, i).gpu.cudaCompCap);
  return m;
}

}  // namespace weft::topo
