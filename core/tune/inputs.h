// The model's inputs from weft's own pipeline: rank 0's system and node graphs (search) and the
// communicator after connect, as NCCL's initTransportsRank holds them when it tunes: graphs
// merged over ranks, channel counts after postset, p2p channels (ncclTopoComputeP2pChannels).
#pragma once

#include "core/base/status.h"
#include "core/connect/connection.h"
#include "core/topo/offline.h"
#include "core/topo/system.h"
#include "core/tune/model.h"

namespace weft::config {
class Settings;
}

namespace weft::tune {

// NCCL_MIN_P2P_NCHANNELS / NCCL_MAX_P2P_NCHANNELS / NCCL_NCHANNELS_PER_NET_PEER.
struct P2pSettings {
  int minP2pChannels = 1;
  int maxP2pChannels = 64;
  int channelsPerNetPeer = -1;  // config.nChannelsPerNetPeer; -1: by NICs and scale
  static P2pSettings fromSettings(const config::Settings& settings);
};

// Rank 0's inputs. `system` and `graphs` are rank 0's (its trimmed system and its node's graphs,
// which give latencyInter: NCCL does not merge it), `conn` the connected communicator.
Result<CommInputs> commInputs(const topo::System& system, const topo::NodeGraphs& graphs,
                              const connect::Connection& conn, const P2pSettings& p2p);

// ncclTopoComputeP2pChannels on `system` for a communicator of nRanks with nChannels: sets
// comm.p2pnChannels and comm.p2pnChannelsPerPeer.
void computeP2pChannels(const topo::System& system, const P2pSettings& p2p, CommInputs& comm);

}  // namespace weft::tune
