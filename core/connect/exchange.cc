#include "core/connect/exchange.h"

#include <algorithm>
#include <climits>

#include "core/base/strings.h"

namespace weft::connect {
namespace {

Status checkPresets(const std::vector<RankPreset>& presets) {
  int n = static_cast<int>(presets.size());
  if (n == 0) return invalidArgument("exchange: no ranks");
  for (int r = 0; r < n; ++r) {
    const RankPreset& p = presets[static_cast<size_t>(r)];
    if (p.rank != r) return invalidArgument(strprintf("exchange: preset %d belongs to rank %d", r, p.rank));
    if (p.nChannels < 1) return invalidArgument(strprintf("exchange: rank %d has no channels", r));
    int head = p.get(Slot::kRingRecv, 0);
    if (head < 0 || head >= n)
      return invalidArgument(strprintf("exchange: rank %d names ring head %d outside 0..%d", r, head, n - 1));
  }
  return Status::ok();
}

// Ranks that share a ring head in channel 0 share a node. Nodes are numbered in the order
// their first rank appears; a table by head rank keeps this linear (NCCL scans the nodes).
void identifyNodes(Exchange& ex) {
  std::vector<int> nodeOfHead(static_cast<size_t>(ex.nRanks), -1);
  ex.rankToNode.resize(static_cast<size_t>(ex.nRanks));
  ex.rankToLocalRank.resize(static_cast<size_t>(ex.nRanks));
  for (int r = 0; r < ex.nRanks; ++r) {
    const RankPreset& p = ex.ranks[static_cast<size_t>(r)];
    int& node = nodeOfHead[static_cast<size_t>(p.get(Slot::kRingRecv, 0))];
    if (node < 0) {
      node = ex.nNodes++;
      ex.nodeFirstRank.push_back(p.get(Slot::kRingRecv, 0));
      ex.nodeTreePattern.push_back(p.graphs[kSlotTree].pattern);
      ex.nodeLocalRanks.push_back(0);
    }
    ex.rankToNode[static_cast<size_t>(r)] = node;
    ex.rankToLocalRank[static_cast<size_t>(r)] = ex.nodeLocalRanks[static_cast<size_t>(node)]++;
  }
  ex.minLocalRanks = *std::min_element(ex.nodeLocalRanks.begin(), ex.nodeLocalRanks.end());
  ex.maxLocalRanks = *std::max_element(ex.nodeLocalRanks.begin(), ex.nodeLocalRanks.end());
}

void mergeInto(GraphInfo& m, const GraphInfo& g) {
  m.nChannels = std::min(m.nChannels, g.nChannels);
  m.sameChannels = std::min(m.sameChannels, g.sameChannels);
  m.bwIntra = std::min(m.bwIntra, g.bwIntra);
  m.bwInter = std::min(m.bwInter, g.bwInter);
  m.typeIntra = std::max(m.typeIntra, g.typeIntra);
  m.typeInter = std::max(m.typeInter, g.typeInter);
  m.crossNic = std::max(m.crossNic, g.crossNic);
}

void mergeGraphs(Exchange& ex) {
  ex.merged = ex.ranks[0].graphs;
  ex.minCompCap = INT_MAX;
  ex.maxCompCap = 0;
  for (const RankPreset& p : ex.ranks) {
    for (int s = 0; s < kGraphSlots; ++s) mergeInto(ex.merged[static_cast<size_t>(s)], p.graphs[static_cast<size_t>(s)]);
    ex.maxTreePattern = std::max(ex.maxTreePattern, p.graphs[kSlotTree].pattern);
    ex.minCompCap = std::min(ex.minCompCap, p.compCap);
    ex.maxCompCap = std::max(ex.maxCompCap, p.compCap);
  }
  ex.nChannels = std::min(ex.merged[kSlotTree].nChannels, ex.merged[kSlotRing].nChannels);
}

}  // namespace

Result<Exchange> exchange(std::vector<RankPreset> presets) {
  WEFT_TRY(checkPresets(presets));
  Exchange ex;
  ex.nRanks = static_cast<int>(presets.size());
  ex.ranks = std::move(presets);
  identifyNodes(ex);
  mergeGraphs(ex);
  if (ex.nChannels < 1) return invalidArgument("exchange: the merged ring and tree graphs have no channels");
  return ex;
}

}  // namespace weft::connect
