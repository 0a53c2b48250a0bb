#include "core/connect/offline.h"

#include <algorithm>

#include "core/base/strings.h"

namespace weft::connect {

GraphSet graphSet(const topo::NodeGraphs& g, bool collnet, bool nvls) {
  GraphSet s;
  s.ring = &g.ring;
  s.tree = &g.tree;
  if (collnet) {
    s.collnetChain = &g.collnetChain;
    s.collnetDirect = &g.collnetDirect;
  }
  if (nvls) s.nvls = &g.nvls;
  return s;
}

Result<std::vector<RankInput>> offlineInputs(const std::vector<topo::SearchCache>& caches,
                                             const std::vector<int>& compCaps, int gpusPerNode, int nodes,
                                             bool collnet, bool nvls, const std::vector<int>& rankCompCaps) {
  if (compCaps.size() != caches.size())
    return invalidArgument(strprintf("connect: %zu domains but %zu compute capabilities", caches.size(), compCaps.size()));
  std::vector<RankInput> inputs;
  inputs.reserve(static_cast<size_t>(gpusPerNode) * static_cast<size_t>(nodes));
  for (int k = 0; k < nodes; ++k) {
    for (size_t d = 0; d < caches.size(); ++d) {
      if (!caches[d].valid) return internalError(strprintf("connect: domain %zu was not searched", d));
      GraphSet gs = graphSet(caches[d].graphs, collnet, nvls);
      gs.rankShift = k * gpusPerNode - caches[d].rankOffset;
      WEFT_TRY(addRanks(inputs, gs, compCaps[d]));
    }
  }
  if (gpusPerNode > 0 && rankCompCaps.size() == static_cast<size_t>(gpusPerNode))
    for (size_t r = 0; r < inputs.size(); ++r) inputs[r].compCap = rankCompCaps[r % rankCompCaps.size()];
  return inputs;
}

std::vector<int> rankCompCaps(const std::vector<topo::SimulatedNode>& domains) {
  if (domains.empty()) return {};
  auto forEachGpu = [&](auto&& fn) {
    for (const topo::SimulatedNode& d : domains)
      for (int i = 0; i < d.system.count(topo::NodeType::kGpu); ++i) fn(d.system.node(topo::NodeType::kGpu, i).gpu);
  };
  int first = domains.front().firstRank;
  forEachGpu([&](const topo::GpuInfo& gpu) {
    if (gpu.rank >= 0) first = std::min(first, gpu.rank);
  });
  std::vector<int> out(static_cast<size_t>(domains.front().gpusPerNode), -1);
  forEachGpu([&](const topo::GpuInfo& gpu) {
    int local = gpu.rank - first;
    if (local >= 0 && static_cast<size_t>(local) < out.size()) out[static_cast<size_t>(local)] = gpu.cudaCompCap;
  });
  for (int cc : out)
    if (cc < 0) return {};
  return out;
}

Result<Connection> connectOffline(const std::vector<topo::SearchCache>& caches, const std::vector<int>& compCaps,
                                  int gpusPerNode, const topo::OfflineOptions& o,
                                  const std::vector<int>& rankCompCaps) {
  if (compCaps.empty()) return invalidArgument("connect: no domain was searched");
  WEFT_ASSIGN_OR_RETURN(std::vector<RankInput> inputs,
                        offlineInputs(caches, compCaps, gpusPerNode, o.nodes, o.collnet, o.nvls, rankCompCaps));
  ConnectOptions c = ConnectOptions::fromParams(o.params);
  c.collnet = o.collnet;
  c.nvls = o.nvls;
  // ncclNvlsInit counts NVLS channels from each rank's own GPU; the connection holds one count:
  // rank 0's (the rank the tuning models) when known, else the smallest domain's.
  int nvlsCompCap = rankCompCaps.empty() ? *std::min_element(compCaps.begin(), compCaps.end()) : rankCompCaps.front();
  c.nvlsChannels = defaultNvlsChannels(nvlsCompCap, o.nodes > 1, c);
  return connectRanks(inputs, c);
}

}  // namespace weft::connect
