#include "core/connect/preset.h"

#include <algorithm>

#include "core/base/strings.h"

namespace weft::connect {

using topo::Graph;
using topo::Pattern;

GraphInfo graphInfo(const Graph& g) {
  GraphInfo i;
  i.pattern = static_cast<int>(g.pattern);
  i.nChannels = g.nChannels;
  i.sameChannels = g.sameChannels;
  i.bwIntra = g.bwIntra;
  i.bwInter = g.bwInter;
  i.typeIntra = g.typeIntra;
  i.typeInter = g.typeInter;
  i.crossNic = g.crossNic;
  return i;
}

namespace {

// Where `rank` sits in channel `c` of `g`, or -1: the first step that holds it, as NCCL scans.
int scanStep(const GraphSet& gs, const Graph& g, int c, int rank) {
  for (int i = 0; i < g.ngpus; ++i)
    if (gs.rank(g, c, i) == rank) return i;
  return -1;
}

// Entry `flat` of the channel-major rank list. NCCL indexes the flat array, so a tree child
// index past a one-GPU channel reads the next channel's first rank; keep that behaviour.
Result<int> flatRank(const GraphSet& gs, const Graph& g, size_t flat) {
  if (flat >= g.intra.size()) return internalError(strprintf("preset: graph %d has no rank at %zu", g.id, flat));
  return g.intra[flat] + gs.rankShift;
}

Status missing(const char* graph, int rank, int c) {
  return invalidArgument(strprintf("preset: rank %d is not in channel %d of its node's %s graph", rank, c, graph));
}

Status presetRing(const GraphSet& gs, ChannelPositions& pos, RankPreset& p) {
  const Graph& g = *gs.ring;
  int last = g.ngpus - 1;
  for (int c = 0; c < p.nChannels; ++c) {
    int i = pos.stepOf(gs, g, c, p.rank);
    if (i < 0) return missing("ring", p.rank, c);
    p.at(Slot::kRingRecv, c) = gs.rank(g, c, 0);
    p.at(Slot::kRingSend, c) = gs.rank(g, c, last);
    p.at(Slot::kRingPrev, c) = i == 0 ? -1 : gs.rank(g, c, i - 1);
    p.at(Slot::kRingNext, c) = i == last ? -1 : gs.rank(g, c, i + 1);
  }
  return Status::ok();
}

// Tree patterns say which GPUs of the node carry the NIC traffic: TREE puts parent and both
// children on the first GPU, SPLIT_TREE the children on the second, BALANCED_TREE the parent
// and the second child on the first and the first child on the second.
Status presetTree(const GraphSet& gs, ChannelPositions& pos, RankPreset& p) {
  const Graph& g = *gs.tree;
  int last = g.ngpus - 1;
  size_t child0 = g.pattern == Pattern::kTree ? 0 : 1;
  size_t child1 = g.pattern == Pattern::kSplitTree ? 1 : 0;
  for (int c = 0; c < p.nChannels; ++c) {
    int i = pos.stepOf(gs, g, c, p.rank);
    if (i < 0) return missing("tree", p.rank, c);
    size_t base = static_cast<size_t>(c) * static_cast<size_t>(g.ngpus);
    WEFT_ASSIGN_OR_RETURN(p.at(Slot::kTreeToParent, c), flatRank(gs, g, base));
    WEFT_ASSIGN_OR_RETURN(p.at(Slot::kTreeToChild0, c), flatRank(gs, g, base + child0));
    WEFT_ASSIGN_OR_RETURN(p.at(Slot::kTreeToChild1, c), flatRank(gs, g, base + child1));
    p.at(Slot::kTreeUp, c) = i == 0 ? -1 : gs.rank(g, c, i - 1);
    p.at(Slot::kTreeDown, c) = i == last ? -1 : gs.rank(g, c, i + 1);
  }
  return Status::ok();
}

// The chain's head talks to the CollNet root, which NCCL numbers nRanks.
void presetChain(const GraphSet& gs, ChannelPositions& pos, int nRanks, RankPreset& p) {
  if (gs.collnetChain == nullptr || gs.collnetChain->nChannels == 0) return;
  const Graph& g = *gs.collnetChain;
  int last = g.ngpus - 1;
  for (int c = 0; c < p.nChannels; ++c) {
    int i = pos.stepOf(gs, g, c, p.rank);
    if (i < 0) continue;
    p.at(Slot::kChainUp, c) = i == 0 ? nRanks : gs.rank(g, c, i - 1);
    p.at(Slot::kChainDown, c) = i == last ? -1 : gs.rank(g, c, i + 1);
  }
}

void presetNvlsHeads(const GraphSet& gs, RankPreset& p) {
  p.nvlsHeads.clear();
  if (gs.nvls == nullptr) return;
  for (int c = 0; c < gs.nvls->nChannels; ++c) {
    int head = gs.rank(*gs.nvls, c, 0);
    if (std::find(p.nvlsHeads.begin(), p.nvlsHeads.end(), head) == p.nvlsHeads.end()) p.nvlsHeads.push_back(head);
  }
}

// Beyond this many ranks between a graph's lowest and highest, a table would cost more than scans.
constexpr int kMaxTableSpan = 4096;

}  // namespace

const ChannelPositions::Table& ChannelPositions::tableOf(const Graph& g) {
  if (&g == last_) return *lastTable_;
  auto [it, added] = tables_.try_emplace(&g);
  Table& t = it->second;
  if (added && g.ngpus > 0 && g.nChannels > 0) {
    size_t used = std::min(g.intra.size(), static_cast<size_t>(g.nChannels) * static_cast<size_t>(g.ngpus));
    auto [lo, hi] = std::minmax_element(g.intra.begin(), g.intra.begin() + static_cast<std::ptrdiff_t>(used));
    if (used > 0 && static_cast<int64_t>(*hi) - *lo < kMaxTableSpan) {
      t.lowest = *lo;
      t.span = *hi - *lo + 1;
      t.steps.assign(static_cast<size_t>(g.nChannels) * static_cast<size_t>(t.span), -1);
      for (size_t f = used; f-- > 0;)  // backwards: the first step of a rank is written last
        t.steps[f / static_cast<size_t>(g.ngpus) * static_cast<size_t>(t.span) + static_cast<size_t>(g.intra[f] - t.lowest)] =
            static_cast<int>(f % static_cast<size_t>(g.ngpus));
    }
  }
  last_ = &g;
  lastTable_ = &t;
  return t;
}

int ChannelPositions::stepOf(const GraphSet& gs, const Graph& g, int c, int rank) {
  const Table& t = tableOf(g);
  int local = rank - gs.rankShift - t.lowest;
  if (t.span == 0 || c >= g.nChannels) return scanStep(gs, g, c, rank);
  if (local < 0 || local >= t.span) return -1;  // no rank of the channel is that far
  return t.steps[static_cast<size_t>(c) * static_cast<size_t>(t.span) + static_cast<size_t>(local)];
}

Status presetInto(const GraphSet& gs, int rank, int nRanks, int compCap, ChannelPositions& positions, bool nvlsHeads,
                  RankPreset& p) {
  if (gs.ring == nullptr || gs.tree == nullptr) return invalidArgument("preset: the ring and tree graphs are required");
  if (rank < 0 || rank >= nRanks) return invalidArgument(strprintf("preset: rank %d out of 0..%d", rank, nRanks - 1));
  p.rank = rank;
  p.compCap = compCap;
  p.nChannels = std::min(gs.ring->nChannels, gs.tree->nChannels);
  p.crossNicRing = gs.ring->crossNic;
  p.graphs = GraphInfos{};
  p.graphs[kSlotRing] = graphInfo(*gs.ring);
  p.graphs[kSlotTree] = graphInfo(*gs.tree);
  if (gs.collnetChain != nullptr) p.graphs[kSlotCollnetChain] = graphInfo(*gs.collnetChain);
  if (gs.collnetDirect != nullptr) p.graphs[kSlotCollnetDirect] = graphInfo(*gs.collnetDirect);
  if (gs.nvls != nullptr) p.graphs[kSlotNvls] = graphInfo(*gs.nvls);
  // Ring and tree slots are all written below; the CollNet chain's stay -1 where the chain has
  // no such rank. (Filling every slot with -1 first was most of a million presets' memset.)
  p.values.resize(static_cast<size_t>(static_cast<int>(Slot::kCount) * std::max(0, p.nChannels)));
  for (Slot s : {Slot::kChainUp, Slot::kChainDown})
    for (int c = 0; c < p.nChannels; ++c) p.at(s, c) = -1;
  WEFT_TRY(presetRing(gs, positions, p));
  WEFT_TRY(presetTree(gs, positions, p));
  presetChain(gs, positions, nRanks, p);
  if (nvlsHeads) presetNvlsHeads(gs, p);
  else p.nvlsHeads.clear();
  return Status::ok();
}

Result<RankPreset> preset(const GraphSet& gs, int rank, int nRanks, int compCap) {
  ChannelPositions positions;
  RankPreset p;
  WEFT_TRY(presetInto(gs, rank, nRanks, compCap, positions, true, p));
  return p;
}

}  // namespace weft::connect
