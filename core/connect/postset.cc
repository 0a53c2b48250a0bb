#include "core/connect/postset.h"

#include <algorithm>
#include <utility>

#include "core/base/strings.h"
#include "core/connect/collnet.h"
#include "core/connect/nvls.h"
#include "core/connect/rings.h"
#include "core/connect/trees.h"

namespace weft::connect {

ConnectOptions ConnectOptions::fromParams(const topo::Params& params) {
  ConnectOptions o;
  o.minChannels = params.minChannels;
  o.maxChannels = params.maxChannels;
  o.minCTAs = params.minCTAs;
  o.maxCTAs = params.maxCTAs;
  o.collnetNodeThreshold = params.collnetNodeThreshold;
  o.nvlsCTAs = params.nvlsCTAs;
  return o;
}

int defaultNvlsChannels(int compCap, bool multiNode, const ConnectOptions& o) {
  int channels = compCap >= 100 ? (multiNode ? 32 : 24) : 16;  // NVLS_NCHANNELS_SM100, _SM100_NVL, _SM90
  if (o.nvlsCTAs > 0) channels = o.nvlsCTAs;
  return std::max(o.minCTAs, std::min(o.maxCTAs, channels));
}

namespace {

constexpr Slot kRingSlots[] = {Slot::kRingRecv, Slot::kRingSend, Slot::kRingPrev, Slot::kRingNext};

// Odd nodes swap channel pairs so that consecutive nodes do not enter and leave on the same
// rail (only ranks whose own ring search settled on crossNic 2, with an even channel count).
void alternateCrossNicRings(Exchange& ex) {
  if (ex.nChannels % 2 != 0) return;
  for (RankPreset& p : ex.ranks) {
    if (p.crossNicRing != 2 || ex.rankToNode[static_cast<size_t>(p.rank)] % 2 != 1) continue;
    for (int c = 0; c < ex.nChannels; c += 2)
      for (Slot s : kRingSlots) std::swap(p.at(s, c), p.at(s, c ^ 1));
  }
}

// Row-major [nChannels][nNodes] of `slot`, read from each node's first rank.
Result<std::vector<int>> nodeRows(const Exchange& ex, Slot slot) {
  std::vector<int> out(static_cast<size_t>(ex.nChannels) * static_cast<size_t>(ex.nNodes));
  for (int c = 0; c < ex.nChannels; ++c) {
    for (int n = 0; n < ex.nNodes; ++n) {
      int v = ex.ranks[static_cast<size_t>(ex.nodeFirstRank[static_cast<size_t>(n)])].get(slot, c);
      if (v < 0 || v >= ex.nRanks)
        return invalidArgument(strprintf("postset: node %d names rank %d in channel %d, outside 0..%d", n, v, c, ex.nRanks - 1));
      out[static_cast<size_t>(c) * static_cast<size_t>(ex.nNodes) + static_cast<size_t>(n)] = v;
    }
  }
  return out;
}

// The per-rank rows the postset starts from, [channel][nRanks]: ring neighbours for the
// exchanged channels, tree links inside the node for both stored copies of each channel (the
// preset's channel copy). One pass over the ranks reads each preset once.
void gatherRankRows(const Exchange& ex, Connection& conn, std::vector<int>& treeDown0) {
  size_t n = static_cast<size_t>(ex.nRanks);
  size_t base = static_cast<size_t>(ex.nChannels);
  conn.ringPrev.resize(base * n);
  conn.ringNext.resize(base * n);
  conn.treeUp.resize(2 * base * n);
  treeDown0.resize(2 * base * n);
  for (size_t r = 0; r < n; ++r) {
    const RankPreset& p = ex.ranks[r];
    for (size_t c = 0; c < base; ++c) {
      int ch = static_cast<int>(c);
      conn.ringPrev[c * n + r] = p.get(Slot::kRingPrev, ch);
      conn.ringNext[c * n + r] = p.get(Slot::kRingNext, ch);
      conn.treeUp[c * n + r] = conn.treeUp[(c + base) * n + r] = p.get(Slot::kTreeUp, ch);
      treeDown0[c * n + r] = treeDown0[(c + base) * n + r] = p.get(Slot::kTreeDown, ch);
    }
  }
}

void describe(const Exchange& ex, Connection& conn) {
  conn.nRanks = ex.nRanks;
  conn.nNodes = ex.nNodes;
  conn.baseChannels = ex.nChannels;
  conn.minCompCap = ex.minCompCap;
  conn.maxCompCap = ex.maxCompCap;
  conn.maxTreePattern = ex.maxTreePattern;
  conn.minLocalRanks = ex.minLocalRanks;
  conn.maxLocalRanks = ex.maxLocalRanks;
  conn.graphs = ex.merged;
  conn.rankToNode = ex.rankToNode;
  conn.rankToLocalRank = ex.rankToLocalRank;
  conn.nodeFirstRank = ex.nodeFirstRank;
  conn.nodeLocalRanks = ex.nodeLocalRanks;
  conn.treeDepth = ex.nRanks / ex.nNodes - 1 + log2i(ex.nNodes);
}

Status gatherRingsAndTrees(const Exchange& ex, Connection& conn) {
  WEFT_ASSIGN_OR_RETURN(std::vector<int> recv, nodeRows(ex, Slot::kRingRecv));
  WEFT_ASSIGN_OR_RETURN(std::vector<int> send, nodeRows(ex, Slot::kRingSend));
  WEFT_ASSIGN_OR_RETURN(conn.treeToParent, nodeRows(ex, Slot::kTreeToParent));
  WEFT_ASSIGN_OR_RETURN(conn.treeToChild0, nodeRows(ex, Slot::kTreeToChild0));
  WEFT_ASSIGN_OR_RETURN(conn.treeToChild1, nodeRows(ex, Slot::kTreeToChild1));
  std::vector<int> down0;
  gatherRankRows(ex, conn, down0);
  connectRings(recv, send, ex.nNodes, ex.nRanks, ex.nChannels, conn.ringPrev, conn.ringNext);
  conn.treeDown.assign(down0.size() * kMaxTreeArity, -1);
  for (size_t i = 0; i < down0.size(); ++i) conn.treeDown[i * kMaxTreeArity] = down0[i];
  return Status::ok();
}

Status addTreeDown(Connection& conn, int stored, int rank, int child) {
  if (child < 0) return Status::ok();
  int* down = &conn.treeDown[conn.flat(stored, rank) * kMaxTreeArity];
  int x = 0;
  while (x < kMaxTreeArity && down[x] >= 0) ++x;
  if (x == kMaxTreeArity)
    return internalError(strprintf("Internal error : tree already has %d children (%d %d %d) (rank %d, channel %d)", x,
                                   down[0], down[1], down[2], rank, stored));
  down[x] = child;
  return Status::ok();
}

// Channel c carries tree 0 of the double binary tree and channel c + base carries tree 1. The
// node's parent-side rank goes up to the child-side rank of the parent node it hangs under;
// its child-side ranks go down to the parent-side rank of each child node.
Status connectNodeTrees(Connection& conn, const DoubleTree& dt, int node, int c) {
  size_t row = static_cast<size_t>(c) * static_cast<size_t>(conn.nNodes);
  const int* ttp = conn.treeToParent.data() + row;
  const int* ttc0 = conn.treeToChild0.data() + row;
  const int* ttc1 = conn.treeToChild1.data() + row;
  const std::pair<const TreeLinks*, int> trees[2] = {{&dt.tree0, c}, {&dt.tree1, c + conn.baseChannels}};
  for (const auto& [t, stored] : trees) {
    if (t->up != -1) conn.treeUp[conn.flat(stored, ttp[node])] = (t->childType == 0 ? ttc0 : ttc1)[t->up];
    WEFT_TRY(addTreeDown(conn, stored, ttc0[node], t->down0 == -1 ? -1 : ttp[t->down0]));
    WEFT_TRY(addTreeDown(conn, stored, ttc1[node], t->down1 == -1 ? -1 : ttp[t->down1]));
  }
  return Status::ok();
}

Status connectTrees(Connection& conn) {
  for (int node = 0; node < conn.nNodes; ++node) {
    DoubleTree dt = dtree(conn.nNodes, node);
    for (int c = 0; c < conn.baseChannels; ++c) WEFT_TRY(connectNodeTrees(conn, dt, node, c));
  }
  return Status::ok();
}

// sm90 doubling, the unpack-net doubling, then NCCL_MAX_NCHANNELS/NCCL_MIN_NCHANNELS: max keeps
// the first channels, min repeats them.
void applyChannelLimits(Connection& conn, const ConnectOptions& o) {
  int n = conn.nChannels;
  if (conn.minCompCap >= 90 && conn.nNodes > 1 && conn.graphs[kSlotRing].bwIntra > 45.0f && n < 16)
    n = copyChannels(conn, n, 2 * n);
  if (o.netDeviceUnpack && conn.nNodes > 1 && n < 16 && o.unpackDoubleChannels) n = copyChannels(conn, n, 2 * n);
  truncateChannels(conn, std::min({o.maxChannels, n, o.maxCTAs}));
  copyChannels(conn, conn.nChannels, std::max(o.minChannels, o.minCTAs));
}

// ncclBuildRings checks the rings of the channels the communicator uses.
Status checkRings(const Connection& conn) {
  std::vector<uint8_t> checked(static_cast<size_t>(conn.baseChannels), 0);
  std::vector<uint8_t> seen;
  for (int c = 0; c < conn.nChannels; ++c) {
    int ring = conn.ringIndex(c);
    if (checked[static_cast<size_t>(ring)]) continue;
    checked[static_cast<size_t>(ring)] = 1;
    WEFT_TRY_CTX(checkRing(conn, ring, seen), strprintf("channel %d", c));
  }
  return Status::ok();
}

}  // namespace

Result<Connection> postset(Exchange ex, const std::vector<GraphSet>& nodeGraphs, const ConnectOptions& options) {
  Connection conn;
  describe(ex, conn);
  alternateCrossNicRings(ex);
  WEFT_TRY(gatherRingsAndTrees(ex, conn));
  WEFT_TRY(connectTrees(conn));
  // Both trees are connected: the channel count doubles.
  conn.source.resize(static_cast<size_t>(2 * ex.nChannels));
  for (int c = 0; c < 2 * ex.nChannels; ++c) conn.source[static_cast<size_t>(c)] = c;
  truncateChannels(conn, std::min(topo::kMaxChannels, 2 * ex.nChannels));
  WEFT_TRY(setupCollnet(ex, nodeGraphs, options, conn));
  applyChannelLimits(conn, options);
  setupNvls(ex, options, conn);
  WEFT_TRY(checkRings(conn));
  return conn;
}

}  // namespace weft::connect
