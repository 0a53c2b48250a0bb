#include "core/connect/exchange.h"

#include <algorithm>
#include <climits>

#include "core/base/strings.h"

namespace weft::connect {
namespace {

// What AllGather3 reads of a rank before its preset: its channel count and the head of its
// ring in channel 0 (or -1 when it has no channel). Both come from the rank's graphs alone.
int channelsOf(const RankInput& in) { return std::min(in.graphs.ring->nChannels, in.graphs.tree->nChannels); }
int ringHeadOf(const RankInput& in) { return channelsOf(in) < 1 ? -1 : in.graphs.rank(*in.graphs.ring, 0, 0); }

GraphInfos graphInfos(const GraphSet& gs) {
  GraphInfos g{};
  g[kSlotRing] = graphInfo(*gs.ring);
  g[kSlotTree] = graphInfo(*gs.tree);
  if (gs.collnetChain != nullptr) g[kSlotCollnetChain] = graphInfo(*gs.collnetChain);
  if (gs.collnetDirect != nullptr) g[kSlotCollnetDirect] = graphInfo(*gs.collnetDirect);
  if (gs.nvls != nullptr) g[kSlotNvls] = graphInfo(*gs.nvls);
  return g;
}

// AllGather3's checks, which come after every rank's preset: when one fails, the first preset
// that fails is the error, as when all presets ran first.
Status checkHeads(const std::vector<RankInput>& ranks) {
  int n = static_cast<int>(ranks.size());
  if (n == 0) return invalidArgument("exchange: no ranks");
  for (int r = 0; r < n; ++r) {
    const RankInput& in = ranks[static_cast<size_t>(r)];
    if (in.graphs.ring == nullptr || in.graphs.tree == nullptr)
      return invalidArgument(strprintf("connect: rank %d has no graphs (no node has it)", r));
  }
  for (int r = 0; r < n; ++r) {
    const RankInput& in = ranks[static_cast<size_t>(r)];
    int head = ringHeadOf(in);
    if (channelsOf(in) >= 1 && head >= 0 && head < n) continue;
    for (int q = 0; q < n; ++q) WEFT_TRY(preset(ranks[static_cast<size_t>(q)].graphs, q, n, ranks[static_cast<size_t>(q)].compCap).status());
    if (channelsOf(in) < 1) return invalidArgument(strprintf("exchange: rank %d has no channels", r));
    return invalidArgument(strprintf("exchange: rank %d names ring head %d outside 0..%d", r, head, n - 1));
  }
  return Status::ok();
}

// Ranks that share a ring head in channel 0 share a node. Nodes are numbered in the order
// their first rank appears; a table by head rank keeps this linear (NCCL scans the nodes).
void identifyNodes(const std::vector<RankInput>& ranks, Exchange& ex) {
  std::vector<int> nodeOfHead(static_cast<size_t>(ex.nRanks), -1);
  ex.rankToNode.resize(static_cast<size_t>(ex.nRanks));
  ex.rankToLocalRank.resize(static_cast<size_t>(ex.nRanks));
  for (int r = 0; r < ex.nRanks; ++r) {
    const RankInput& in = ranks[static_cast<size_t>(r)];
    int head = ringHeadOf(in);
    int& node = nodeOfHead[static_cast<size_t>(head)];
    if (node < 0) {
      node = ex.nNodes++;
      ex.nodeFirstRank.push_back(head);
      ex.nodeTreePattern.push_back(static_cast<int>(in.graphs.tree->pattern));
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

// Ranks with the same graphs contribute the same infos: merge each distinct set once.
void mergeGraphs(const std::vector<RankInput>& ranks, Exchange& ex) {
  ex.merged = graphInfos(ranks[0].graphs);
  ex.minCompCap = INT_MAX;
  ex.maxCompCap = 0;
  const GraphSet* last = nullptr;
  for (const RankInput& in : ranks) {
    ex.minCompCap = std::min(ex.minCompCap, in.compCap);
    ex.maxCompCap = std::max(ex.maxCompCap, in.compCap);
    const GraphSet& gs = in.graphs;
    if (last != nullptr && gs.ring == last->ring && gs.tree == last->tree && gs.collnetChain == last->collnetChain &&
        gs.collnetDirect == last->collnetDirect && gs.nvls == last->nvls)
      continue;
    last = &gs;
    GraphInfos g = graphInfos(gs);
    for (int s = 0; s < kGraphSlots; ++s) mergeInto(ex.merged[static_cast<size_t>(s)], g[static_cast<size_t>(s)]);
    ex.maxTreePattern = std::max(ex.maxTreePattern, g[kSlotTree].pattern);
  }
  ex.nChannels = std::min(ex.merged[kSlotTree].nChannels, ex.merged[kSlotRing].nChannels);
}

constexpr Slot kRingSlots[] = {Slot::kRingRecv, Slot::kRingSend, Slot::kRingPrev, Slot::kRingNext};

// Odd nodes swap channel pairs so that consecutive nodes do not enter and leave on the same
// rail (only ranks whose own ring search settled on crossNic 2, with an even channel count).
void alternateCrossNicRings(const Exchange& ex, RankPreset& p) {
  if (ex.nChannels % 2 != 0) return;
  if (p.crossNicRing != 2 || ex.rankToNode[static_cast<size_t>(p.rank)] % 2 != 1) return;
  for (int c = 0; c < ex.nChannels; c += 2)
    for (Slot s : kRingSlots) std::swap(p.at(s, c), p.at(s, c ^ 1));
}

// The rows the postset reads, sized for every rank.
void allocateRows(Exchange& ex, bool keepChains) {
  size_t n = static_cast<size_t>(ex.nRanks), base = static_cast<size_t>(ex.nChannels);
  size_t nodes = base * static_cast<size_t>(ex.nNodes);
  for (std::vector<int>* v : {&ex.nodeRingRecv, &ex.nodeRingSend, &ex.nodeTreeToParent, &ex.nodeTreeToChild0,
                              &ex.nodeTreeToChild1})
    v->resize(nodes);
  ex.nodeNvlsHeads.resize(static_cast<size_t>(ex.nNodes));
  ex.ringPrev.resize(base * n);
  ex.ringNext.resize(base * n);
  ex.treeUp.resize(base * n);
  ex.treeDown.resize(base * n);
  if (keepChains) {
    ex.chainUp.resize(base * n);
    ex.chainDown.resize(base * n);
  }
}

// Rank r's rows; and when r is the first rank of its node (the head the node's ranks name),
// the node's ends and NVLS heads.
void fold(const RankPreset& p, int node, bool nodeEnds, Exchange& ex) {
  size_t n = static_cast<size_t>(ex.nRanks), r = static_cast<size_t>(p.rank);
  size_t nodes = static_cast<size_t>(ex.nNodes), k = static_cast<size_t>(node);
  for (int c = 0; c < ex.nChannels; ++c) {
    size_t row = static_cast<size_t>(c) * n + r;
    ex.ringPrev[row] = p.get(Slot::kRingPrev, c);
    ex.ringNext[row] = p.get(Slot::kRingNext, c);
    ex.treeUp[row] = p.get(Slot::kTreeUp, c);
    ex.treeDown[row] = p.get(Slot::kTreeDown, c);
    if (!ex.chainUp.empty()) {
      ex.chainUp[row] = p.get(Slot::kChainUp, c);
      ex.chainDown[row] = p.get(Slot::kChainDown, c);
    }
    if (!nodeEnds) continue;
    size_t at = static_cast<size_t>(c) * nodes + k;
    ex.nodeRingRecv[at] = p.get(Slot::kRingRecv, c);
    ex.nodeRingSend[at] = p.get(Slot::kRingSend, c);
    ex.nodeTreeToParent[at] = p.get(Slot::kTreeToParent, c);
    ex.nodeTreeToChild0[at] = p.get(Slot::kTreeToChild0, c);
    ex.nodeTreeToChild1[at] = p.get(Slot::kTreeToChild1, c);
  }
  if (nodeEnds) ex.nodeNvlsHeads[k] = p.nvlsHeads;
}

}  // namespace

Result<Exchange> exchange(const std::vector<RankInput>& ranks, bool keepChains) {
  WEFT_TRY(checkHeads(ranks));
  Exchange ex;
  ex.nRanks = static_cast<int>(ranks.size());
  identifyNodes(ranks, ex);
  mergeGraphs(ranks, ex);
  // A node's first rank is the head its ranks name; it says what the node's ends are.
  std::vector<uint8_t> firstOfNode(static_cast<size_t>(ex.nRanks), 0);
  for (int first : ex.nodeFirstRank) firstOfNode[static_cast<size_t>(first)] = 1;
  if (ex.nChannels >= 1) allocateRows(ex, keepChains);
  ChannelPositions positions;
  RankPreset p;
  for (int r = 0; r < ex.nRanks; ++r) {
    const RankInput& in = ranks[static_cast<size_t>(r)];
    bool nodeEnds = firstOfNode[static_cast<size_t>(r)] != 0;
    WEFT_TRY(presetInto(in.graphs, r, ex.nRanks, in.compCap, positions, nodeEnds, p));
    if (ex.nChannels < 1) continue;
    alternateCrossNicRings(ex, p);
    fold(p, ex.rankToNode[static_cast<size_t>(r)], nodeEnds, ex);
  }
  if (ex.nChannels < 1) return invalidArgument("exchange: the merged ring and tree graphs have no channels");
  return ex;
}

}  // namespace weft::connect
