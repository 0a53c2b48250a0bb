// Properties of the connect phase over many sizes: the double binary tree is valid for every
// node count 1…4096, and every ring of every channel is a permutation of all ranks (and every
// channel's tree spans all ranks) for rank counts up to 4096, on nodes that all differ.
#include <gtest/gtest.h>

#include "core/connect/connect.h"
#include "core/connect/trees.h"
#include "tests/support/log_capture.h"
#include "tests/unit/connect_synthetic.h"

namespace weft::connect {
namespace {

using testing::Synthetic;
using testing::SyntheticSpec;

// One tree of a double binary tree over n nodes: returns "" when valid, else what is wrong.
std::string checkTree(int n, const std::vector<TreeLinks>& t) {
  int roots = 0;
  for (int i = 0; i < n; ++i) {
    const TreeLinks& l = t[static_cast<size_t>(i)];
    if (l.up == -1) {
      ++roots;
    } else {
      if (l.up < 0 || l.up >= n) return "node " + std::to_string(i) + ": parent out of range";
      const TreeLinks& p = t[static_cast<size_t>(l.up)];
      int asChild = p.down0 == i ? 0 : p.down1 == i ? 1 : -1;
      if (asChild == -1) return "node " + std::to_string(i) + ": not a child of its parent";
      if (asChild != l.childType) return "node " + std::to_string(i) + ": child type disagrees with its parent";
    }
    for (int d : {l.down0, l.down1}) {
      if (d == -1) continue;
      if (d < 0 || d >= n || t[static_cast<size_t>(d)].up != i) return "node " + std::to_string(i) + ": child link not mirrored";
    }
    if (l.down0 != -1 && l.down0 == l.down1) return "node " + std::to_string(i) + ": same child twice";
  }
  if (roots != 1) return std::to_string(roots) + " roots";
  // From the root, every node once: no cycle, nothing unreachable.
  std::vector<int> stack = {0}, seen(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i)
    if (t[static_cast<size_t>(i)].up == -1) stack = {i};
  int visited = 0;
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    if (seen[static_cast<size_t>(i)]++) return "node " + std::to_string(i) + " reached twice";
    ++visited;
    for (int d : {t[static_cast<size_t>(i)].down0, t[static_cast<size_t>(i)].down1})
      if (d != -1) stack.push_back(d);
  }
  return visited == n ? "" : std::to_string(n - visited) + " nodes unreachable";
}

TEST(DtreeProperty, ValidForEveryNodeCountUpTo4096) {
  for (int n = 1; n <= 4096; ++n) {
    std::vector<TreeLinks> t0, t1;
    for (int i = 0; i < n; ++i) {
      DoubleTree d = dtree(n, i);
      t0.push_back(d.tree0);
      t1.push_back(d.tree1);
    }
    ASSERT_EQ(checkTree(n, t0), "") << "tree 0, n=" << n;
    ASSERT_EQ(checkTree(n, t1), "") << "tree 1, n=" << n;
    int innerInBoth = 0;
    for (int i = 0; i < n; ++i) {
      bool inner0 = t0[static_cast<size_t>(i)].down0 != -1 || t0[static_cast<size_t>(i)].down1 != -1;
      bool inner1 = t1[static_cast<size_t>(i)].down0 != -1 || t1[static_cast<size_t>(i)].down1 != -1;
      innerInBoth += inner0 && inner1 ? 1 : 0;
    }
    ASSERT_LE(innerInBoth, n % 2 == 0 ? 0 : 1) << "n=" << n;
  }
}

// Every channel's ring: next is a single cycle through all ranks and prev is its inverse. Every
// channel's tree: one root, links mirrored, at most three children, all ranks reachable.
std::string checkChannels(const Connection& conn) {
  size_t n = static_cast<size_t>(conn.nRanks);
  for (int c = 0; c < conn.nChannels; ++c) {
    std::vector<int> seen(n, 0);
    int r = 0;
    for (size_t i = 0; i < n; ++i) {
      if (seen[static_cast<size_t>(r)]++) return "channel " + std::to_string(c) + ": ring revisits rank " + std::to_string(r);
      ChannelLinks l = channelOf(conn, r, c);
      if (channelOf(conn, l.ringNext, c).ringPrev != r) return "channel " + std::to_string(c) + ": prev/next disagree at " + std::to_string(r);
      r = l.ringNext;
    }
    if (r != 0) return "channel " + std::to_string(c) + ": ring does not close";
    int roots = 0;
    std::vector<std::vector<int>> children(n);
    for (int x = 0; x < conn.nRanks; ++x) {
      ChannelLinks l = channelOf(conn, x, c);
      if (l.treeUp == -1) ++roots;
      else children[static_cast<size_t>(l.treeUp)].push_back(x);
      for (int d : l.treeDown)
        if (d != -1 && channelOf(conn, d, c).treeUp != x) return "channel " + std::to_string(c) + ": tree link not mirrored at " + std::to_string(x);
    }
    if (roots != 1) return "channel " + std::to_string(c) + ": " + std::to_string(roots) + " tree roots";
    for (const auto& ch : children)
      if (ch.size() > static_cast<size_t>(kMaxTreeArity)) return "channel " + std::to_string(c) + ": more than 3 children";
  }
  return "";
}

struct Sizes {
  int nodes, gpus;
};

std::vector<Sizes> sizesUpTo4096() {
  std::vector<Sizes> out;
  for (int gpus : {1, 2, 3, 4, 8})
    for (int nodes = 1; nodes <= 40; ++nodes) out.push_back({nodes, gpus});
  for (int nodes : {63, 64, 65, 127, 128, 255, 256, 511, 512}) out.push_back({nodes, 8});
  for (int nodes : {1000, 1023, 1024}) out.push_back({nodes, 4});
  for (int nodes : {2047, 2048, 4095, 4096}) out.push_back({nodes, 1});
  out.push_back({1365, 3});
  return out;
}

TEST(RingProperty, EveryRingIsAPermutationUpTo4096Ranks) {
  for (const Sizes& s : sizesUpTo4096()) {
    for (topo::Pattern p : {topo::Pattern::kBalancedTree, topo::Pattern::kSplitTree, topo::Pattern::kTree}) {
      // NCCL's search turns every tree into pattern TREE on one GPU (and the flat indexing of the
      // others would read the next channel there).
      if (p != topo::Pattern::kTree && s.gpus == 1) continue;
      SyntheticSpec spec;
      spec.nodes = s.nodes;
      spec.gpus = s.gpus;
      spec.channels = 1 + (s.nodes * 7 + s.gpus) % 8;
      spec.crossNic = s.nodes % 3 == 0 ? 2 : 0;
      spec.treePattern = p;
      spec.seed = static_cast<unsigned>(s.nodes * 131 + s.gpus);
      Synthetic syn(spec);
      auto conn = connectRanks(syn.inputs(), ConnectOptions());
      ASSERT_TRUE(conn.isOk()) << s.nodes << "x" << s.gpus << ": " << conn.status().toString();
      ASSERT_EQ(conn->nRanks, s.nodes * s.gpus);
      ASSERT_EQ(checkChannels(*conn), "") << s.nodes << " nodes x " << s.gpus << " GPUs, tree pattern " << static_cast<int>(p);
    }
  }
}

}  // namespace
}  // namespace weft::connect
