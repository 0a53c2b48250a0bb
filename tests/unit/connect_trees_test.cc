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

}  // namespace
}  // namespace weft::connect
