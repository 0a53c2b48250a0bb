#include "core/tune/inputs.h"

#include <algorithm>
#include <optional>

#include "core/base/strings.h"
#include "core/config/settings.h"

namespace weft::tune {

namespace {

using topo::NodeType;

int pow2Up(int v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

int pow2Down(int v) {
  int p = 1;
  while (p * 2 <= v) p <<= 1;
  return p;
}

// getLocalNetCountByBw: how many of the GPU's nearest NICs (best bandwidth, then best path
// type) it takes to reach the GPU's own bandwidth to its CPU.
int localNetCountByBw(const topo::System& system, int g) {
  const topo::Node& gpu = system.node(NodeType::kGpu, g);
  float gpuBw = 0;
  for (const topo::Link& l : gpu.links)
    if (l.rem.type == NodeType::kCpu) gpuBw = l.bw;
  const std::vector<topo::Path>& paths = gpu.paths[topo::idx(NodeType::kNet)];
  float maxBw = 0;
  int minType = topo::val(topo::PathType::kDis);
  std::vector<int> locals;
  for (size_t i = 0; i < paths.size(); ++i) {
    int type = topo::val(paths[i].type);
    if (paths[i].bw > maxBw || (paths[i].bw == maxBw && type < minType)) {
      maxBw = paths[i].bw;
      minType = type;
      locals.clear();
    }
    if (paths[i].bw == maxBw && type == minType) locals.push_back(static_cast<int>(i));
  }
  float total = 0;
  int count = 0;
  for (size_t l = 0; l < locals.size() && total < gpuBw; ++l, ++count) total += paths[static_cast<size_t>(locals[l])].bw;
  return count;
}

// ncclTopoGetNchannels for a peer rank that is not in the system: channels per network peer.
int netPeerChannels(const topo::System& system, int g, int nRanks, int p2pnChannels, const P2pSettings& p2p) {
  if (p2p.channelsPerNetPeer > 0) return p2p.channelsPerNetPeer;
  int byBw = localNetCountByBw(system, g);
  int most = 2;  // two per NIC, fewer at scale: 8+ operations per channel lose the sync warp
  while (most * nRanks > p2pnChannels * 4 && most > 1) most /= 2;
  return std::max(byBw, most);
}

}  // namespace

P2pSettings P2pSettings::fromSettings(const config::Settings& settings) {
  P2pSettings p;
  p.minP2pChannels = static_cast<int>(settings.integer("NCCL_MIN_P2P_NCHANNELS"));
  p.maxP2pChannels = static_cast<int>(settings.integer("NCCL_MAX_P2P_NCHANNELS"));
  std::optional<int64_t> perPeer = settings.integerIfSet("NCCL_NCHANNELS_PER_NET_PEER");
  if (perPeer && *perPeer > 0) p.channelsPerNetPeer = static_cast<int>(std::min<int64_t>(*perPeer, 1 << 20));
  return p;
}

void computeP2pChannels(const topo::System& system, const P2pSettings& p2p, CommInputs& comm) {
  int p2pn = std::max(std::min(comm.nChannels, p2p.maxP2pChannels), p2p.minP2pChannels);
  int minChannels = p2pn;
  int gpus = system.count(NodeType::kGpu);
  int localPeers = 0;
  for (int g = 0; g < gpus; ++g)
    if (system.node(NodeType::kGpu, g).gpu.rank >= 0) ++localPeers;
  bool remotePeers = comm.nRanks > localPeers;
  for (int g = 0; g < gpus; ++g) {
    const topo::Node& me = system.node(NodeType::kGpu, g);
    for (int peer = 0; peer < gpus; ++peer) {
      if (peer == g) continue;
      const topo::Path& path = system.node(NodeType::kGpu, peer).pathTo(NodeType::kGpu, g);
      int n = 2;
      if (path.type == topo::PathType::kNvl) {
        float nvlBw = topo::nvlinkBw(me.gpu.cudaCompCap);
        n = 2 * std::max(1, static_cast<int>(path.bw / nvlBw));
      }
      minChannels = std::min(minChannels, n);
    }
    if (remotePeers) minChannels = std::min(minChannels, netPeerChannels(system, g, comm.nRanks, p2pn, p2p));
  }
  // Powers of two: p2p peers map onto channels by bit tricks.
  comm.p2pnChannelsPerPeer = pow2Up(minChannels);
  comm.p2pnChannels = std::min(pow2Up(p2pn), pow2Down(topo::kMaxChannels));
  comm.p2pnChannelsPerPeer = std::min(comm.p2pnChannelsPerPeer, comm.p2pnChannels);
}

Result<CommInputs> commInputs(const topo::System& system, const topo::NodeGraphs& graphs,
                              const connect::Connection& conn, const P2pSettings& p2p) {
  if (conn.nRanks < 1 || conn.nNodes < 1 || conn.rankToNode.empty())
    return invalidArgument("tune: the communicator has no ranks");
  if (system.count(NodeType::kCpu) == 0) return invalidArgument("tune: the topology has no CPU node");
  CommInputs c;
  c.rank = 0;
  c.nRanks = conn.nRanks;
  c.nNodes = conn.nNodes;
  c.nodeLocalRanks = conn.nodeLocalRanks;
  c.localRanks = conn.nodeLocalRanks[static_cast<size_t>(conn.rankToNode[0])];
  c.minLocalRanks = conn.minLocalRanks;
  c.maxLocalRanks = conn.maxLocalRanks;
  c.minCompCap = conn.minCompCap;
  c.maxCompCap = conn.maxCompCap;
  const topo::CpuInfo& cpu = system.node(NodeType::kCpu, 0).cpu;
  c.cpuArch = cpu.arch;
  c.cpuVendor = cpu.vendor;
  c.maxTreePattern = conn.maxTreePattern;
  c.nChannels = conn.nChannels;
  c.nvlsSupport = conn.nvlsChannels > 0 ? 1 : 0;
  c.nvlsChannels = conn.nvlsChannels;
  c.collnetEnable = conn.collnet ? 1 : 0;
  if (conn.collnet) {
    connect::CollnetDirect d = connect::collnetDirectOf(conn, 0);
    c.collnetDirectHeads = static_cast<int>(d.heads.size());
    c.collNetHeadsNum = c.collnetDirectHeads;
  }
  c.nvsCount = system.count(NodeType::kNvs);
  // Graph slots by algorithm, from the merged infos; the pattern (set before any search, so
  // also on graphs never searched) and latencyInter are rank 0's own.
  const std::pair<int, connect::GraphSlot> slots[] = {{kTree, connect::kSlotTree},
                                                      {kRing, connect::kSlotRing},
                                                      {kCollnetDirect, connect::kSlotCollnetDirect},
                                                      {kCollnetChain, connect::kSlotCollnetChain},
                                                      {kNvls, connect::kSlotNvls}};
  const topo::Graph* own[kNumGraphs] = {&graphs.tree, &graphs.ring, &graphs.collnetDirect, &graphs.collnetChain,
                                        &graphs.nvls};
  for (const auto& [algo, slot] : slots) {
    const connect::GraphInfo& gi = conn.graphs[static_cast<size_t>(slot)];
    GraphInputs& g = c.graphs[static_cast<size_t>(algo)];
    g.pattern = static_cast<int>(own[algo]->pattern);
    g.nChannels = gi.nChannels;
    g.sameChannels = gi.sameChannels;
    g.bwIntra = gi.bwIntra;
    g.bwInter = gi.bwInter;
    g.typeIntra = gi.typeIntra;
    g.typeInter = gi.typeInter;
    g.crossNic = gi.crossNic;
    g.latencyInter = own[algo]->latencyInter;
  }
  // Init gives tree and ring the smaller channel count of the two.
  int both = std::min(c.graphs[kTree].nChannels, c.graphs[kRing].nChannels);
  c.graphs[kTree].nChannels = c.graphs[kRing].nChannels = both;
  computeP2pChannels(system, p2p, c);
  return c;
}

}  // namespace weft::tune
