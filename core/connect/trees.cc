#include "core/connect/trees.h"

namespace weft::connect {

TreeLinks btree(int n, int index) {
  int bit = 1;
  while (bit < n && (bit & index) == 0) bit <<= 1;

  TreeLinks t;
  if (index == 0) {
    // Every other index is larger, so the root's only child is its second one.
    t.down1 = n > 1 ? bit >> 1 : -1;
    return t;
  }
  int up = (index ^ bit) | (bit << 1);
  if (up >= n) up = index ^ bit;
  t.up = up;
  t.childType = index < up ? 0 : 1;

  int low = bit >> 1;
  if (low == 0) return t;  // a leaf: odd indices
  t.down0 = index - low;
  while (low != 0 && index + low >= n) low >>= 1;
  t.down1 = low == 0 ? -1 : index + low;
  return t;
}

namespace {

int mapBack(int v, int n, bool mirror) {
  if (v == -1) return -1;
  return mirror ? n - 1 - v : (v + 1) % n;
}

}  // namespace

DoubleTree dtree(int n, int index) {
  DoubleTree d;
  d.tree0 = btree(n, index);
  // Odd n: shift by one. Even n: mirror. Either way no node is inner in both trees.
  bool mirror = n % 2 == 0;
  int image = mirror ? n - 1 - index : (index - 1 + n) % n;
  TreeLinks t = btree(n, image);
  d.tree1.up = mapBack(t.up, n, mirror);
  d.tree1.down0 = mapBack(t.down0, n, mirror);
  d.tree1.down1 = mapBack(t.down1, n, mirror);
  d.tree1.childType = t.childType;
  return d;
}

int log2i(int n) {
  int l = 0;
  while (n > 1) {
    n >>= 1;
    ++l;
  }
  return l;
}

}  // namespace weft::connect
