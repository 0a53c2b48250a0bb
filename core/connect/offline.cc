#include "core/connect/offline.h"

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

}  // namespace weft::connect
