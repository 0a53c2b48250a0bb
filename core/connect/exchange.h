// The exchange of presets (NCCL's AllGather3) and what every rank derives from it: the nodes,
// identified by the first rank of each node's ring in channel 0, and the graphs merged over
// ranks so that all ranks tune and connect alike.
#pragma once

#include <vector>

#include "core/base/status.h"
#include "core/connect/preset.h"

namespace weft::connect {

struct Exchange {
  std::vector<RankPreset> ranks;  // by rank
  int nRanks = 0;
  int nNodes = 0;
  std::vector<int> rankToNode;       // by rank
  std::vector<int> rankToLocalRank;  // by rank: position among its node's ranks
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
};

// Plays AllGather3 in process: `presets[r]` is rank r's preset. Fails when a preset is out of
// place or names a rank outside the communicator.
Result<Exchange> exchange(std::vector<RankPreset> presets);

}  // namespace weft::connect
