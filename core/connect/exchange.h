// The exchange of presets (NCCL's AllGather3) and what every rank derives from it: the nodes,
// identified by the first rank of each node's ring in channel 0, and the graphs merged over
// ranks so that all ranks tune and connect alike.
//
// Played in one process for every rank, the exchange keeps no preset: each rank's preset is
// computed, folded into the rows the postset reads (the rank's own links inside its node, and
// for each node's first rank the node's ends), and dropped. Memory is those rows, linear in
// ranks (at a million ranks of 16 channels, presets kept whole were 0.9 GB of the 1.75 GB).
#pragma once

#include <vector>

#include "core/base/status.h"
#include "core/connect/preset.h"
#include "core/connect/rank_rows.h"

namespace weft::connect {

// What one rank brings: its node's graphs and its GPU's compute capability.
struct RankInput {
  GraphSet graphs;
  int compCap = 0;
};

struct Exchange {
  int nRanks = 0;
  int nNodes = 0;
  RankRows rankToNode;       // by rank
  RankRows rankToLocalRank;  // by rank: position among its node's ranks
  std::vector<int> nodeFirstRank;    // by node: the ring head of channel 0 (ringRecv[0])
  std::vector<int> nodeTreePattern;  // by node: the tree pattern of the node's first rank seen
  std::vector<int> nodeLocalRanks;   // by node: how many ranks it has
  int minLocalRanks = 0;
  int maxLocalRanks = 0;
  // nChannels, sameChannels, bwIntra, bwInter: minimum over ranks; typeIntra, typeInter,
  // crossNic: maximum; pattern: rank 0's.
  GraphInfos merged{};
  int maxTreePattern = 0;
  int nChannels = 0;  // min(tree, ring) of the merged graphs: the channels the postset connects
  int minCompCap = 0;
  int maxCompCap = 0;

  // [nChannels][nNodes]: what each node's first rank says of its node (ringRecv, ringSend,
  // treeToParent, treeToChild0, treeToChild1), and by node its NVLS heads.
  std::vector<int> nodeRingRecv, nodeRingSend, nodeTreeToParent, nodeTreeToChild0, nodeTreeToChild1;
  std::vector<std::vector<int>> nodeNvlsHeads;
  // [nChannels][nRanks]: every rank's neighbours inside its node (ringPrev, ringNext, treeUp,
  // treeDown; -1 at the node's ends), laid out as the Connection holds them so that the postset
  // moves them there; when kept, its CollNet chain links.
  RankRows ringPrev, ringNext, treeUp, treeDown;
  RankRows chainUp, chainDown;
};

// Plays AllGather3 in process: ranks[r] is rank r's input; each rank's preset is computed from
// it (preset()) and folded in. `keepChains` keeps the CollNet chain rows. Before the rows are
// read, ranks of odd nodes whose ring search settled on crossNic 2 swap their channel pairs
// (ncclTopoPostset's first step), when the channel count is even. Fails as the presets and
// AllGather3 would: a rank missing from its graphs, a preset without channels or naming a ring
// head outside the communicator.
Result<Exchange> exchange(const std::vector<RankInput>& ranks, bool keepChains);

}  // namespace weft::connect
