// Binary trees over the nodes of a communicator (NCCL's btree and double binary tree).
// Pure index arithmetic: every function is total for n >= 1 and 0 <= index < n.
#pragma once

namespace weft::connect {

// One position in a tree: parent and up to two children (-1 when absent). `childType` says
// whether this index is its parent's first (0) or second (1) child; -1 for the root.
struct TreeLinks {
  int up = -1;
  int down0 = -1;
  int down1 = -1;
  int childType = -1;
};

// The binary tree NCCL builds over n nodes, rooted at 0: a node's parent clears its lowest set
// bit and sets the next one (or just clears it when that lands past n). This is the tree NCCL
// 2.28.9 runs, as its logs show (2 nodes: node 0 is tree 0's root; 3 nodes: 0 -> 2 -> 1;
// 8 nodes: 0 -> 4 -> {2, 6}); a trees.cc variant rooted in the middle (getRankUp) that
// circulates as "2.28" source is not what 2.28.9 does.
TreeLinks btree(int n, int index);

// Two complementary trees: the btree, and the btree mirrored (n even) or shifted by one (n odd),
// so that each node is an inner node of at most one tree.
struct DoubleTree {
  TreeLinks tree0;
  TreeLinks tree1;
};
DoubleTree dtree(int n, int index);

// floor(log2(n)) for n >= 1 (NCCL's log2i), used for the tree depth estimate; 0 for n <= 1.
int log2i(int n);

}  // namespace weft::connect
