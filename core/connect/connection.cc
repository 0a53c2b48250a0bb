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

ChannelLinks channelOf(const Connection& conn, int rank, int c) {
  ChannelLinks l;
  int stored = conn.source[static_cast<size_t>(c)];
  int ring = stored % conn.baseChannels;
  l.ringPrev = conn.ringPrev[conn.flat(ring, rank)];
  l.ringNext = conn.ringNext[conn.flat(ring, rank)];
  size_t t = conn.flat(stored, rank);
  l.treeUp = conn.treeUp[t];
  for (int i = 0; i < kMaxTreeArity; ++i) l.treeDown[static_cast<size_t>(i)] = conn.treeDown[t * kMaxTreeArity + static_cast<size_t>(i)];
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
