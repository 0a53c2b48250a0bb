#include "core/connect/collnet.h"

#include <algorithm>

#include "core/base/strings.h"

namespace weft::connect {
namespace {

// A node's heads: the first rank of each CollNet direct channel, once each. Head i's children
// are the other ranks of channel i (NCCL reads the channel by the head's index).
Result<CollnetNode> nodeHeads(const GraphSet& gs, int nChannels, int localRanks, int node) {
  if (gs.collnetDirect == nullptr) return invalidArgument(strprintf("CollNet: node %d has no CollNet direct graph", node));
  const topo::Graph& g = *gs.collnetDirect;
  if (g.ngpus != localRanks)
    return invalidArgument(strprintf("CollNet: node %d has %d ranks but its CollNet direct graph %d GPUs", node, localRanks, g.ngpus));
  CollnetNode cn;
  for (int c = 0; c < nChannels; ++c) {
    int head = gs.rank(g, c, 0);
    if (std::find(cn.heads.begin(), cn.heads.end(), head) == cn.heads.end()) cn.heads.push_back(head);
  }
  if (cn.heads.empty()) return invalidArgument(strprintf("CollNet: node %d has no CollNet direct head", node));
  for (size_t i = 0; i < cn.heads.size(); ++i) {
    std::vector<int> ranks;
    for (int r = 0; r < localRanks; ++r) ranks.push_back(gs.rank(g, static_cast<int>(i), r));
    cn.headChannel.push_back(std::move(ranks));
  }
  return cn;
}

}  // namespace

Status setupCollnet(const Exchange& ex, const std::vector<GraphSet>& nodeGraphs, const ConnectOptions& o,
                    Connection& conn) {
  if (!o.collnet || ex.merged[kSlotCollnetChain].nChannels == 0) return Status::ok();
  if (ex.nNodes < o.collnetNodeThreshold) {
    conn.initNotes.push_back(strprintf("Communicator has %d nodes which is less than CollNet node threshold %d, disabling CollNet",
                                       ex.nNodes, o.collnetNodeThreshold));
    return Status::ok();
  }
  conn.collnet = true;
  if (ex.chainUp.empty()) return internalError("CollNet: the exchange kept no chain links");
  conn.chainUp = ex.chainUp;
  conn.chainDown = ex.chainDown;
  // More channels saturate the NVLink side when it is faster than the network (not at 1 PPN).
  const GraphInfo& chain = ex.merged[kSlotCollnetChain];
  int n = conn.nChannels;
  if (chain.bwIntra > chain.bwInter && ex.nRanks > ex.nNodes) copyChannels(conn, n, std::min(topo::kMaxChannels, n + n / 2));
  if (ex.maxLocalRanks > kMaxDirectArity + 1) return Status::ok();
  if (static_cast<int>(nodeGraphs.size()) != ex.nNodes)
    return invalidArgument(strprintf("CollNet: %zu node graphs for %d nodes", nodeGraphs.size(), ex.nNodes));
  conn.collnetChannels = conn.nChannels;
  int nDirect = ex.merged[kSlotCollnetDirect].nChannels;
  for (int node = 0; node < ex.nNodes; ++node) {
    WEFT_ASSIGN_OR_RETURN(CollnetNode cn, nodeHeads(nodeGraphs[static_cast<size_t>(node)], nDirect,
                                                    ex.nodeLocalRanks[static_cast<size_t>(node)], node));
    conn.collnetNodes.push_back(std::move(cn));
  }
  return Status::ok();
}

CollnetDirect collnetDirectOf(const Connection& conn, int rank) {
  CollnetDirect d;
  if (conn.collnetNodes.empty()) return d;
  int node = conn.rankToNode[static_cast<size_t>(rank)];
  const CollnetNode& cn = conn.collnetNodes[static_cast<size_t>(node)];
  int nHeads = static_cast<int>(cn.heads.size());
  for (int i = 0; i < nHeads; ++i) {
    if (cn.heads[static_cast<size_t>(i)] != rank) continue;
    d.headRank = i;
    d.out = conn.nRanks;
    for (int r : cn.headChannel[static_cast<size_t>(i)])
      if (r != rank) d.down.push_back(r);
    break;
  }
  for (int h : cn.heads)
    if (h != rank) d.up.push_back(h);
  int h0 = d.headRank == -1 ? 0 : d.headRank;
  for (int h = 0; h < nHeads; ++h) d.heads.push_back(cn.heads[static_cast<size_t>((h0 + h) % nHeads)]);
  // Leaves start at different heads so that they do not all send to the same one at once.
  d.shift = (rank % conn.nodeLocalRanks[static_cast<size_t>(node)]) % nHeads;
  d.depth = d.up.empty() && d.down.empty() ? 1 : 2;
  return d;
}

std::string collnetDirectLine(const Connection& conn, int rank, int c) {
  CollnetDirect d = collnetDirectOf(conn, rank);
  std::string line = strprintf("CollNetDirect channel %d rank %d ", c, rank);
  if (d.headRank != -1) {
    line += "down ";
    for (int r : d.down) line += strprintf(" %d ", r);
    line += strprintf("nDown %zu ", d.down.size());
  }
  line += "up ";
  for (int r : d.up) line += strprintf(" %d ", r);
  line += "heads ";
  for (int r : d.heads) line += strprintf(" %d ", r);
  line += strprintf("nUp %zu nHeads %zu ", d.up.size(), d.heads.size());
  line += strprintf("headRank %d out %d shift %d", d.headRank, d.out, d.shift);
  return line;
}

}  // namespace weft::connect
