// Postset: after the exchange, join the nodes' rings into global rings, build the double binary
// trees over nodes, duplicate channels, apply the channel limits, add CollNet and NVLS links,
// and check that every ring goes through every rank (NCCL's ncclTopoPostset and
// ncclBuildRings). The result holds every rank's channels; the cost is linear in ranks.
#pragma once

#include <vector>

#include "core/base/status.h"
#include "core/connect/connection.h"
#include "core/connect/exchange.h"
#include "core/topo/params.h"

namespace weft::connect {

struct ConnectOptions {
  int minChannels = 0;                   // ncclMinNchannels(): NCCL_MIN_NCHANNELS, 0..64
  int maxChannels = topo::kMaxChannels;  // ncclMaxNchannels(): NCCL_MAX_NCHANNELS, 1..64
  int minCTAs = 1;                       // config.minCTAs (NCCL_MIN_CTAS; default 1)
  int maxCTAs = topo::kMaxChannels;      // config.maxCTAs (NCCL_MAX_CTAS; default MAXCHANNELS)
  bool collnet = false;                  // config.collnetEnable, with a CollNet plugin
  int collnetNodeThreshold = 2;          // NCCL_COLLNET_NODE_THRESHOLD
  bool nvls = false;                     // nvlsSupport (NVLink SHARP multicast)
  int nvlsChannels = 16;                 // comm->nvlsChannels (NVLS_NCHANNELS on sm90)
  int nvlsCTAs = 0;                      // config.nvlsCTAs (NCCL_NVLS_NCHANNELS); 0: by GPU generation
  bool netDeviceUnpack = false;          // the net plugin moves data through an unpack kernel
  bool unpackDoubleChannels = true;      // NCCL_UNPACK_DOUBLE_NCHANNELS

  // The settings' part: channel limits (ncclMinNchannels/ncclMaxNchannels, config.min/maxCTAs,
  // config.nvlsCTAs) and the CollNet node threshold.
  static ConnectOptions fromParams(const topo::Params& params);
};

// NCCL's NVLS channel count (ncclNvlsInit): options.nvlsCTAs when set, else by GPU generation,
// 16 before Blackwell and on sm100 32 across hosts and 24 within one; kept within
// [minCTAs, maxCTAs].
int defaultNvlsChannels(int compCap, bool multiNode, const ConnectOptions& options);

// Connects all ranks of `ex`. `nodeGraphs[n]` are node n's graphs, read for CollNet direct
// heads only (may be empty when CollNet is off). Fails when a tree node would get a fourth
// child or a ring is not a permutation of all ranks, with the channel and rank at fault.
Result<Connection> postset(Exchange ex, const std::vector<GraphSet>& nodeGraphs, const ConnectOptions& options);

}  // namespace weft::connect
