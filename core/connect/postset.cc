#include "core/connect/postset.h"

#include <algorithm>
#include <array>
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

// A row of node ends: every value must name a rank of the communicator.
Status checkNodeRow(const Exchange& ex, const std::vector<int>& row) {
  for (int c = 0; c < ex.nChannels; ++c) {
    for (int n = 0; n < ex.nNodes; ++n) {
      int v = row[static_cast<size_t>(c) * static_cast<size_t>(ex.nNodes) + static_cast<size_t>(n)];
      if (v < 0 || v >= ex.nRanks)
        return invalidArgument(strprintf("postset: node %d names rank %d in channel %d, outside 0..%d", n, v, c, ex.nRanks - 1));
    }
  }
  return Status::ok();
}

void describe(Exchange& ex, Connection& conn) {
  conn.nRanks = ex.nRanks;
  conn.nNodes = ex.nNodes;
  conn.baseChannels = ex.nChannels;
  conn.minCompCap = ex.minCompCap;
  conn.maxCompCap = ex.maxCompCap;
  conn.maxTreePattern = ex.maxTreePattern;
  conn.minLocalRanks = ex.minLocalRanks;
  conn.maxLocalRanks = ex.maxLocalRanks;
  conn.graphs = ex.merged;
  conn.rankToNode = std::move(ex.rankToNode);
  conn.rankToLocalRank = std::move(ex.rankToLocalRank);
  conn.nodeFirstRank = ex.nodeFirstRank;
  conn.nodeLocalRanks = ex.nodeLocalRanks;
  conn.treeDepth = ex.nRanks / ex.nNodes - 1 + log2i(ex.nNodes);
}

// The rows of node ends are checked, then the rings are joined across nodes in the rows of
// neighbours the exchange left (moved, not copied: at a million ranks they are most of memory).
Status gatherRingsAndTrees(Exchange& ex, Connection& conn) {
  for (const std::vector<int>* row : {&ex.nodeRingRecv, &ex.nodeRingSend, &ex.nodeTreeToParent, &ex.nodeTreeToChild0,
                                      &ex.nodeTreeToChild1})
    WEFT_TRY(checkNodeRow(ex, *row));
  conn.treeToParent = std::move(ex.nodeTreeToParent);
  conn.treeToChild0 = std::move(ex.nodeTreeToChild0);
  conn.treeToChild1 = std::move(ex.nodeTreeToChild1);
  conn.ringPrev = std::move(ex.ringPrev);
  conn.ringNext = std::move(ex.ringNext);
  conn.treeUp = std::move(ex.treeUp);
  conn.treeDown = std::move(ex.treeDown);
  connectRings(ex.nodeRingRecv, ex.nodeRingSend, ex.nNodes, ex.nRanks, ex.nChannels, conn.ringPrev, conn.ringNext);
  return Status::ok();
}

// Channel c carries tree 0 of the double binary tree and channel c + base carries tree 1. The
// node's parent-side rank goes up to the child-side rank of the parent node it hangs under;
// its child-side ranks go down to the parent-side rank of each child node. In ranks, per tree:
struct NodeTreeLinks {
  int stored = 0;
  int top = -1, up = -1;      // the node's parent-side rank, and the rank above it (-1: none)
  int side0 = -1, down0 = -1;  // its first child-side rank, and the rank below it (-1: none)
  int side1 = -1, down1 = -1;  // its second child-side rank, and the rank below it
};

std::array<NodeTreeLinks, 2> nodeTreeLinks(const Connection& conn, const DoubleTree& dt, int node, int c) {
  size_t row = static_cast<size_t>(c) * static_cast<size_t>(conn.nNodes);
  const int* ttp = conn.treeToParent.data() + row;
  const int* ttc0 = conn.treeToChild0.data() + row;
  const int* ttc1 = conn.treeToChild1.data() + row;
  std::array<NodeTreeLinks, 2> out;
  const TreeLinks* trees[2] = {&dt.tree0, &dt.tree1};
  for (size_t i = 0; i < 2; ++i) {
    const TreeLinks& t = *trees[i];
    out[i] = NodeTreeLinks{c + static_cast<int>(i) * conn.baseChannels,
                           ttp[node], t.up == -1 ? -1 : (t.childType == 0 ? ttc0 : ttc1)[t.up],
                           ttc0[node], t.down0 == -1 ? -1 : ttp[t.down0],
                           ttc1[node], t.down1 == -1 ? -1 : ttp[t.down1]};
  }
  return out;
}

// A rank gets at most its child inside the node and one child node below each of its two roles:
// never more than NCCL's three.
void connectNodeTrees(Connection& conn, const DoubleTree& dt, int node, int c) {
  for (const NodeTreeLinks& l : nodeTreeLinks(conn, dt, node, c)) {
    size_t at = conn.nodeFlat(l.stored, node);
    if (l.up != -1) conn.nodeTreeUp[at] = l.up;
    conn.nodeTreeDown0[at] = l.down0;
    conn.nodeTreeDown1[at] = l.down1;
  }
}

// Whether every rank a node names for its trees is its own. Not so when a tree graph has one GPU
// and its pattern reads a child past the channel (NCCL's flat array: the next channel's rank,
// and past the last channel what the graph holds there, rank 0 for CPU endpoints' graphs): that
// rank then gets children for another node.
bool treeEndsOwn(const Connection& conn) {
  for (const std::vector<int>* row : {&conn.treeToParent, &conn.treeToChild0, &conn.treeToChild1})
    for (size_t i = 0; i < row->size(); ++i)
      if (conn.rankToNode[static_cast<size_t>((*row)[i])] != static_cast<int>(i % static_cast<size_t>(conn.nNodes)))
        return false;
  return true;
}

Status addWholeTreeDown(Connection& conn, int stored, int rank, int child) {
  if (child < 0) return Status::ok();
  int* down = &conn.wholeTreeDown[conn.flat(stored, rank) * kMaxTreeArity];
  int x = 0;
  while (x < kMaxTreeArity && down[x] >= 0) ++x;
  if (x == kMaxTreeArity)
    return internalError(strprintf("Internal error : tree already has %d children (%d %d %d) (rank %d, channel %d)", x,
                                   down[0], down[1], down[2], rank, stored));
  down[x] = child;
  return Status::ok();
}

// The trees as NCCL holds them, every rank's links in both trees of every channel, for nodes
// that name another node's rank (see treeEndsOwn): small communicators (CPU endpoints) only.
Status connectWholeTrees(Connection& conn) {
  size_t n = static_cast<size_t>(conn.nRanks), base = static_cast<size_t>(conn.baseChannels);
  conn.wholeTreeUp.resize(2 * base * n);
  conn.wholeTreeDown.assign(2 * base * n * kMaxTreeArity, -1);
  for (size_t s = 0; s < 2 * base; ++s) {
    for (size_t r = 0; r < n; ++r) {
      conn.wholeTreeUp[s * n + r] = conn.treeUp[(s % base) * n + r];
      conn.wholeTreeDown[(s * n + r) * kMaxTreeArity] = conn.treeDown[(s % base) * n + r];
    }
  }
  for (int node = 0; node < conn.nNodes; ++node) {
    DoubleTree dt = dtree(conn.nNodes, node);
    for (int c = 0; c < conn.baseChannels; ++c) {
      for (const NodeTreeLinks& l : nodeTreeLinks(conn, dt, node, c)) {
        if (l.up != -1) conn.wholeTreeUp[conn.flat(l.stored, l.top)] = l.up;
        WEFT_TRY(addWholeTreeDown(conn, l.stored, l.side0, l.down0));
        WEFT_TRY(addWholeTreeDown(conn, l.stored, l.side1, l.down1));
      }
    }
  }
  return Status::ok();
}

Status connectTrees(Connection& conn) {
  if (!treeEndsOwn(conn)) return connectWholeTrees(conn);
  size_t rows = 2 * static_cast<size_t>(conn.baseChannels) * static_cast<size_t>(conn.nNodes);
  conn.nodeTreeUp.resize(rows);
  conn.nodeTreeDown0.assign(rows, -1);
  conn.nodeTreeDown1.assign(rows, -1);
  // A node's parent-side rank keeps its parent inside the node (none: it heads the chain)
  // unless the node hangs under another.
  for (int stored = 0; stored < 2 * conn.baseChannels; ++stored) {
    int c = stored % conn.baseChannels;
    for (int node = 0; node < conn.nNodes; ++node) {
      int ttp = conn.treeToParent[static_cast<size_t>(c) * static_cast<size_t>(conn.nNodes) + static_cast<size_t>(node)];
      conn.nodeTreeUp[conn.nodeFlat(stored, node)] = conn.treeUp[conn.flat(c, ttp)];
    }
  }
  for (int node = 0; node < conn.nNodes; ++node) {
    DoubleTree dt = dtree(conn.nNodes, node);
    for (int c = 0; c < conn.baseChannels; ++c) connectNodeTrees(conn, dt, node, c);
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
