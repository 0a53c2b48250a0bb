#include "core/connect/nvls.h"

#include <algorithm>
#include <climits>

#include "core/base/strings.h"
#include "core/connect/trees.h"

namespace weft::connect {

void setupNvls(const Exchange& ex, const ConnectOptions& o, Connection& conn) {
  conn.nvlsChannels = 0;
  if (!o.nvls || ex.merged[kSlotNvls].nChannels == 0) return;
  size_t minHeads = SIZE_MAX;
  for (const std::vector<int>& heads : ex.nodeNvlsHeads) minHeads = std::min(minHeads, heads.size());
  if (minHeads == 0) return;
  conn.nvlsChannels = o.nvlsChannels;
  conn.nvlsHeadCount = static_cast<int>(minHeads);
  conn.nvlsHeads.resize(minHeads * static_cast<size_t>(ex.nNodes));
  for (size_t h = 0; h < minHeads; ++h)
    for (int n = 0; n < ex.nNodes; ++n)
      conn.nvlsHeads[h * static_cast<size_t>(ex.nNodes) + static_cast<size_t>(n)] = ex.nodeNvlsHeads[static_cast<size_t>(n)][h];
}

namespace {

int headOf(const Connection& conn, int h, int node) {
  return conn.nvlsHeads[static_cast<size_t>(h) * static_cast<size_t>(conn.nNodes) + static_cast<size_t>(node)];
}

// Tree links between heads of different nodes: a head of index h talks to the heads of index h
// of its parent and child nodes, in tree 0 on even channels and tree 1 on odd ones.
void nvlsTrees(const Connection& conn, int rank, int c, NvlsLinks& l) {
  int node = conn.rankToNode[static_cast<size_t>(rank)];
  DoubleTree dt = dtree(conn.nNodes, node);
  const TreeLinks& t = c % 2 == 0 ? dt.tree0 : dt.tree1;
  int up = -1, down0 = -1, down1 = -1;
  for (int h = 0; h < conn.nvlsHeadCount; ++h) {
    if (headOf(conn, h, node) != rank) continue;
    up = t.up == -1 ? -1 : headOf(conn, h, t.up);
    down0 = t.down0 == -1 ? -1 : headOf(conn, h, t.down0);
    down1 = t.down1 == -1 ? -1 : headOf(conn, h, t.down1);
    break;
  }
  l.treeUp = up;
  l.treeDown[0] = l.down;
  size_t ix = 1;
  if (down0 != -1) l.treeDown[ix++] = down0;
  if (down1 != -1) l.treeDown[ix] = down1;
}

}  // namespace

NvlsLinks nvlsOf(const Connection& conn, int rank, int c) {
  NvlsLinks l;
  if (conn.nvlsChannels == 0) return l;
  int node = conn.rankToNode[static_cast<size_t>(rank)];
  for (int h = 0; h < conn.nvlsHeadCount; ++h)
    if (headOf(conn, h, node) == rank) l.headRank = h;
  l.nHeads = conn.nvlsHeadCount;
  // Heads are numbered after the ranks and the CollNet root: nRanks + 1 + h.
  for (int h = 0; h < l.nHeads; ++h) l.up.push_back(conn.nRanks + 1 + h);
  l.down = conn.nRanks + 1 + l.headRank;
  if (conn.collnet && l.headRank != -1) l.out = conn.nRanks;
  if (conn.nNodes > 1) nvlsTrees(conn, rank, c, l);
  return l;
}

std::vector<std::string> nvlsHeadLines(const Connection& conn) {
  std::vector<std::string> out;
  if (conn.nvlsChannels == 0 || conn.nNodes == 1) return out;
  for (int h = 0; h < conn.nvlsHeadCount; ++h) {
    std::string line = strprintf("NVLS Head %2d:", h);
    for (int n = 0; n < conn.nNodes && n < 20; ++n) line += strprintf(" %2d", headOf(conn, h, n));
    out.push_back(std::move(line));
  }
  return out;
}

std::string nvlsTreesLine(const Connection& conn, int rank) {
  if (conn.nvlsChannels == 0 || conn.nNodes == 1) return {};
  // NCCL prints channels 0 and 1; a channel it did not set up prints its zeroed state.
  NvlsLinks zero;
  zero.treeUp = 0;
  zero.treeDown = {0, 0, 0};
  NvlsLinks a = nvlsOf(conn, rank, 0);
  NvlsLinks b = conn.nvlsChannels > 1 ? nvlsOf(conn, rank, 1) : zero;
  return strprintf("NVLS Trees : %d/%d/%d->%d->%d %d/%d/%d->%d->%d", a.treeDown[0], a.treeDown[1], a.treeDown[2], rank,
                   a.treeUp, b.treeDown[0], b.treeDown[1], b.treeDown[2], rank, b.treeUp);
}

}  // namespace weft::connect
