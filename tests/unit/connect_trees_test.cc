#include <gtest/gtest.h>

#include "core/connect/trees.h"

namespace weft::connect {
namespace {

TEST(Btree, EightNodesMatchNcclShape) {
  // 0 -> 4 -> {2,6}; 2 -> {1,3}; 6 -> {5,7}
  EXPECT_EQ(btree(8, 0).down1, 4);
  EXPECT_EQ(btree(8, 0).down0, -1);
  TreeLinks t4 = btree(8, 4);
  EXPECT_EQ(t4.up, 0);
  EXPECT_EQ(t4.down0, 2);
  EXPECT_EQ(t4.down1, 6);
  EXPECT_EQ(btree(8, 7).up, 6);
  EXPECT_EQ(btree(8, 7).down0, -1);
}

TEST(Dtree, TwoNodesMirror) {
  // Reference log (2 nodes): tree 0 root is node 0, tree 1 root is node 1.
  DoubleTree d0 = dtree(2, 0);
  DoubleTree d1 = dtree(2, 1);
  EXPECT_EQ(d0.tree0.up, -1);
  EXPECT_EQ(d0.tree0.down1, 1);
  EXPECT_EQ(d1.tree0.up, 0);
  EXPECT_EQ(d0.tree1.up, 1);
  EXPECT_EQ(d1.tree1.up, -1);
  EXPECT_EQ(d1.tree1.down1, 0);
}

TEST(Dtree, ThreeNodesShiftAsInNccl2215Log) {
  // cuiboyuan-sim-3gpu (NCCL 2.21.5): "Tree 0 : -1 -> 0 -> 2", "Tree 3 : 1 -> 0 -> 2".
  DoubleTree d0 = dtree(3, 0);
  EXPECT_EQ(d0.tree0.up, -1);
  EXPECT_EQ(d0.tree0.down1, 2);
  EXPECT_EQ(d0.tree1.up, 1);
  EXPECT_EQ(d0.tree1.down0, 2);
  EXPECT_EQ(btree(3, 2).down0, 1);
  EXPECT_EQ(btree(3, 2).down1, -1);
}

TEST(Dtree, EightNodesMirrorAsInNccl2181Log) {
  // cuiboyuan-v100x8 (NCCL 2.18.1): "Tree 1 : -1 -> 7 -> 3", "Tree 1 : 7 -> 3 -> 5/1".
  EXPECT_EQ(dtree(8, 7).tree1.up, -1);
  EXPECT_EQ(dtree(8, 7).tree1.down1, 3);
  DoubleTree d3 = dtree(8, 3);
  EXPECT_EQ(d3.tree1.up, 7);
  EXPECT_EQ(d3.tree1.down0, 5);
  EXPECT_EQ(d3.tree1.down1, 1);
  EXPECT_EQ(d3.tree1.childType, 1);  // 3 is its parent's second child in the mirrored tree
}

TEST(Log2i, FloorOfLog2) {
  EXPECT_EQ(log2i(1), 0);
  EXPECT_EQ(log2i(2), 1);
  EXPECT_EQ(log2i(3), 1);
  EXPECT_EQ(log2i(12500), 13);
}

}  // namespace
}  // namespace weft::connect
