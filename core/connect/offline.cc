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
                                             bool collnet, bool nvls) {
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
  return inputs;
}

Result<Connection> connectOffline(const std::vector<topo::SearchCache>& caches, const std::vector<int>& compCaps,
                                  int gpusPerNode, const topo::OfflineOptions& o) {
  if (compCaps.empty()) return invalidArgument("connect: no domain was searched");
  WEFT_ASSIGN_OR_RETURN(std::vector<RankInput> inputs,
                        offlineInputs(caches, compCaps, gpusPerNode, o.nodes, o.collnet, o.nvls));
  ConnectOptions c = ConnectOptions::fromParams(o.params);
  c.collnet = o.collnet;
  c.nvls = o.nvls;
  c.nvlsChannels = defaultNvlsChannels(*std::min_element(compCaps.begin(), compCaps.end()), o.nodes > 1, c);
  return connectRanks(inputs, c);
}

}  // namespace weft::connect
