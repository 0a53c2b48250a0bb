// Synthetic search results for connect tests: N nodes of G GPUs, each node with its own ring and
// tree orders (random permutations of its ranks from a seed), so that every node differs.
#pragma once

#include <algorithm>
#include <deque>
#include <numeric>
#include <random>
#include <vector>

#include "core/connect/connect.h"
#include "core/topo/graph.h"

namespace weft::connect::testing {

struct SyntheticSpec {
  int nodes = 2;
  int gpus = 4;
  int channels = 2;
  int crossNic = 0;
  topo::Pattern treePattern = topo::Pattern::kBalancedTree;
  int compCap = 80;
  float ringBwIntra = 20;
  unsigned seed = 1;
  bool shuffle = true;  // false: every channel visits the node's ranks in order
};

struct SyntheticNode {
  topo::Graph ring, tree;
};

class Synthetic {
 public:
  explicit Synthetic(const SyntheticSpec& spec) : spec_(spec) {
    std::mt19937 rng(spec.seed);
    for (int n = 0; n < spec.nodes; ++n) {
      SyntheticNode& node = nodes_.emplace_back();
      fill(node.ring, topo::Pattern::kRing, n, rng);
      fill(node.tree, spec.treePattern, n, rng);
      node.ring.crossNic = spec.crossNic;
      node.ring.bwIntra = spec.ringBwIntra;
    }
  }

  std::vector<RankInput> inputs() const {
    std::vector<RankInput> out;
    for (const SyntheticNode& node : nodes_) {
      GraphSet gs;
      gs.ring = &node.ring;
      gs.tree = &node.tree;
      Status s = addRanks(out, gs, spec_.compCap);
      if (!s.isOk()) return {};
    }
    return out;
  }

  std::deque<SyntheticNode>& nodes() { return nodes_; }

 private:
  void fill(topo::Graph& g, topo::Pattern pattern, int node, std::mt19937& rng) const {
    g.resize(spec_.gpus);
    g.pattern = pattern;
    g.nChannels = spec_.channels;
    g.bwIntra = g.bwInter = 10;
    std::vector<int> ranks(static_cast<size_t>(spec_.gpus));
    std::iota(ranks.begin(), ranks.end(), node * spec_.gpus);
    for (int c = 0; c < spec_.channels; ++c) {
      if (spec_.shuffle) std::shuffle(ranks.begin(), ranks.end(), rng);
      for (int i = 0; i < spec_.gpus; ++i) g.rank(c, i) = ranks[static_cast<size_t>(i)];
    }
  }

  SyntheticSpec spec_;
  std::deque<SyntheticNode> nodes_;
};

}  // namespace weft::connect::testing
