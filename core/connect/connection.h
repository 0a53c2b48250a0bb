// Connection: what the postset computes for every rank of a communicator: ring prev/next and
// tree up/down in every channel, CollNet and NVLS links. Stored once for all ranks in flat
// channel-major arrays sized by the communicator; a rank's view is read through channelOf().
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/connect/preset.h"
#include "core/connect/rank_rows.h"

namespace weft::connect {

inline constexpr int kMaxTreeArity = 3;    // NCCL_MAX_TREE_ARITY
inline constexpr int kMaxDirectArity = 7;  // NCCL_MAX_DIRECT_ARITY

// A rank's CollNet direct links (the same in every channel).
struct CollnetDirect {
  int headRank = -1;       // index among the node's heads when this rank is one, else -1
  int out = -1;            // nRanks (the CollNet root) for heads
  int shift = 0;
  int depth = 0;
  std::vector<int> down;   // heads: the node's other ranks
  std::vector<int> up;     // the node's heads other than this rank
  std::vector<int> heads;  // all heads, starting with this rank's own index
};

// A rank's NVLS links in one channel.
struct NvlsLinks {
  int nHeads = 0;
  int headRank = -1;
  int down = -1;  // nRanks + 1 + headRank
  int out = -1;
  int treeUp = -1;
  std::array<int, kMaxTreeArity> treeDown{-1, -1, -1};
  std::vector<int> up;  // nRanks + 1 + h for each head
};

// One channel as a rank sees it.
struct ChannelLinks {
  int ringPrev = -1;
  int ringNext = -1;
  int treeUp = -1;
  std::array<int, kMaxTreeArity> treeDown{-1, -1, -1};
  int treeDepth = 0;
  int chainUp = -1;  // CollNet chain (when CollNet is on)
  int chainDown = -1;
  int chainDepth = 0;
};

// CollNet direct heads of one node: the first rank of each of its CollNet direct channels
// (distinct), and each head's channel, whose other ranks become the head's children.
struct CollnetNode {
  std::vector<int> heads;
  std::vector<std::vector<int>> headChannel;
};

struct Connection {
  int nRanks = 0;
  int nNodes = 0;
  int nChannels = 0;     // the communicator's channels after duplication and limits
  int baseChannels = 0;  // channels connected across nodes: min(tree, ring) after the merge
  int treeDepth = 0;     // NCCL's estimate: nRanks / nNodes - 1 + log2(nNodes)
  int minCompCap = 0;
  int maxCompCap = 0;
  int maxTreePattern = 0;  // the largest tree pattern of all ranks (the tuning model reads it)
  int minLocalRanks = 0;
  int maxLocalRanks = 0;
  GraphInfos graphs{};   // merged over ranks
  RankRows rankToNode;
  RankRows rankToLocalRank;
  std::vector<int> nodeFirstRank;
  std::vector<int> nodeLocalRanks;

  // Channel c repeats stored channel source[c] < 2 * baseChannels (NCCL's copyChannels).
  // Stored channels s and s + baseChannels share a ring; trees differ (tree 0 and tree 1).
  std::vector<int> source;
  RankRows ringPrev, ringNext;  // [baseChannels][nRanks]
  // Trees. Inside a node both trees of a channel follow the node's chain: treeUp and treeDown
  // hold each rank's parent and child there ([baseChannels][nRanks], -1 at the chain's ends).
  // Across nodes the two trees differ, at three ranks of each node only: per stored channel
  // ([2 * baseChannels][nNodes]), the parent of the node's parent-side rank (treeToParent), and
  // the rank of the child node added below each child-side rank (treeToChild0, treeToChild1;
  // -1: none). Read a rank's links with treeUpOf and treeDownOf; at a million ranks this is a
  // fifth of the memory full [2 * baseChannels][nRanks][kMaxTreeArity] tables took.
  RankRows treeUp, treeDown;                           // [baseChannels][nRanks]
  std::vector<int> nodeTreeUp;                         // [2 * baseChannels][nNodes]
  std::vector<int> nodeTreeDown0, nodeTreeDown1;       // [2 * baseChannels][nNodes]
  // When a node names another node's rank for its trees (a one-GPU tree graph read past its
  // channel, as NCCL reads it: CPU endpoints), the trees are held whole instead, as NCCL holds
  // them: [2 * baseChannels][nRanks] and [2 * baseChannels][nRanks][kMaxTreeArity].
  std::vector<int> wholeTreeUp, wholeTreeDown;
  // Which rank of each node talks to the parent node and to each child node, per base channel
  // ([baseChannels][nNodes]); the ranks connectTrees logs for.
  std::vector<int> treeToParent, treeToChild0, treeToChild1;

  bool collnet = false;                 // CollNet enabled after the exchange
  int collnetChannels = 0;              // channels when CollNet was connected
  RankRows chainUp, chainDown;  // [baseChannels][nRanks], CollNet only
  std::vector<CollnetNode> collnetNodes;  // by node; empty when CollNet direct was not connected

  int nvlsChannels = 0;         // 0: NVLS off
  int nvlsHeadCount = 0;
  std::vector<int> nvlsHeads;   // [nvlsHeadCount][nNodes]

  // Lines NCCL logs before the connect phase in this configuration (CollNet threshold).
  std::vector<std::string> initNotes;

  int ringIndex(int c) const { return source[static_cast<size_t>(c)] % baseChannels; }
  int ringNextOf(int c, int rank) const { return ringNext[flat(ringIndex(c), rank)]; }
  int ringPrevOf(int c, int rank) const { return ringPrev[flat(ringIndex(c), rank)]; }
  size_t flat(int stored, int rank) const {
    return static_cast<size_t>(stored) * static_cast<size_t>(nRanks) + static_cast<size_t>(rank);
  }
  size_t nodeFlat(int stored, int node) const {
    return static_cast<size_t>(stored) * static_cast<size_t>(nNodes) + static_cast<size_t>(node);
  }
  // Rank `rank`'s parent and children in stored tree channel `stored` (< 2 * baseChannels).
  int treeUpOf(int stored, int rank) const;
  std::array<int, kMaxTreeArity> treeDownOf(int stored, int rank) const;
};

// NCCL's copyChannels: channels [start, end) repeat channels [0, end - start). Returns the new
// channel count (start when end <= start) and sets conn.nChannels to it.
int copyChannels(Connection& conn, int start, int end);

// Keeps the first `n` channels.
void truncateChannels(Connection& conn, int n);

// Rank `rank`'s view of channel `c` (0 <= c < nChannels).
ChannelLinks channelOf(const Connection& conn, int rank, int c);

// Rank `rank`'s CollNet direct links (empty heads when CollNet direct is not connected).
CollnetDirect collnetDirectOf(const Connection& conn, int rank);

// Rank `rank`'s NVLS links in channel `c` < nvlsChannels.
NvlsLinks nvlsOf(const Connection& conn, int rank, int c);

// The ring of channel `c` as the list of ranks starting at `from` (NCCL's ring user ranks).
std::vector<int> ringFrom(const Connection& conn, int c, int from);

}  // namespace weft::connect
