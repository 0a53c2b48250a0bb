// Rings across nodes: joining each node's chain into one ring per channel, checking that a ring
// visits every rank exactly once, and rank 0's "Channel" line (NCCL's rings.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/connect/connection.h"

namespace weft::connect {

// For each of `nChannels` channels, the head of node n receives from the tail of node n-1 and
// the tail sends to the head of node n+1 (cyclically). recv/send are [nChannels][nNodes];
// prev/next are [nChannels][nRanks], with the intra-node links already in place.
void connectRings(const std::vector<int>& recv, const std::vector<int>& send, int nNodes, int nRanks,
                  int nChannels, RankRows& prev, RankRows& next);

// Follows stored ring `ring` from rank 0 through every rank; fails with NCCL's wording when it
// does not come back to rank 0 after nRanks steps or misses a rank. `seen` is scratch space.
Status checkRing(const Connection& conn, int ring, std::vector<uint8_t>& seen);

// "Channel %02d/%02d :" and the ranks of channel c's ring from rank 0, each printed with the
// width of nRanks-1; a line reaching 128 characters ends in "..." (ncclBuildRings on rank 0).
std::string channelLine(const Connection& conn, int c);

}  // namespace weft::connect
