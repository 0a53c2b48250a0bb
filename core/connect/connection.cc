#include "core/connect/connection.h"

namespace weft::connect {

int copyChannels(Connection& conn, int start, int end) {
  if (end <= start) return start;
  conn.source.resize(static_cast<size_t>(end));
  for (int c = start; c < end; ++c) conn.source[static_cast<size_t>(c)] = conn.source[static_cast<size_t>(c - start)];
  conn.nChannels = end;
  return end;
}

void truncateChannels(Connection& conn, int n) {
  conn.source.resize(static_cast<size_t>(n));
  conn.nChannels = n;
}

int Connection::treeUpOf(int stored, int rank) const {
  if (!wholeTreeUp.empty()) return wholeTreeUp[flat(stored, rank)];
  int base = stored % baseChannels;
  size_t node = static_cast<size_t>(rankToNode[static_cast<size_t>(rank)]);
  if (rank == treeToParent[static_cast<size_t>(base) * static_cast<size_t>(nNodes) + node]) return nodeTreeUp[nodeFlat(stored, static_cast<int>(node))];
  return treeUp[flat(base, rank)];
}

// NCCL fills a rank's children in order: its child inside the node, then the child nodes'
// ranks added below treeToChild0, then below treeToChild1 (the same rank in a TREE pattern).
std::array<int, kMaxTreeArity> Connection::treeDownOf(int stored, int rank) const {
  std::array<int, kMaxTreeArity> down{-1, -1, -1};
  if (!wholeTreeDown.empty()) {
    for (size_t i = 0; i < down.size(); ++i) down[i] = wholeTreeDown[flat(stored, rank) * kMaxTreeArity + i];
    return down;
  }
  int base = stored % baseChannels;
  int node = rankToNode[static_cast<size_t>(rank)];
  size_t row = static_cast<size_t>(base) * static_cast<size_t>(nNodes) + static_cast<size_t>(node);
  size_t x = 0;
  auto add = [&](int child) {
    if (child >= 0 && x < down.size()) down[x++] = child;
  };
  add(treeDown[flat(base, rank)]);
  if (rank == treeToChild0[row]) add(nodeTreeDown0[nodeFlat(stored, node)]);
  if (rank == treeToChild1[row]) add(nodeTreeDown1[nodeFlat(stored, node)]);
  return down;
}

ChannelLinks channelOf(const Connection& conn, int rank, int c) {
  ChannelLinks l;
  int stored = conn.source[static_cast<size_t>(c)];
  int ring = stored % conn.baseChannels;
  l.ringPrev = conn.ringPrev[conn.flat(ring, rank)];
  l.ringNext = conn.ringNext[conn.flat(ring, rank)];
  l.treeUp = conn.treeUpOf(stored, rank);
  l.treeDown = conn.treeDownOf(stored, rank);
  l.treeDepth = conn.treeDepth;
  if (conn.collnet) {
    l.chainUp = conn.chainUp[conn.flat(ring, rank)];
    l.chainDown = conn.chainDown[conn.flat(ring, rank)];
    l.chainDepth = conn.nRanks / conn.nNodes;
  }
  return l;
}

std::vector<int> ringFrom(const Connection& conn, int c, int from) {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(conn.nRanks));
  int ring = conn.ringIndex(c);
  int current = from;
  for (int i = 0; i < conn.nRanks && current >= 0 && current < conn.nRanks; ++i) {
    out.push_back(current);
    current = conn.ringNext[conn.flat(ring, current)];
  }
  return out;
}

}  // namespace weft::connect
