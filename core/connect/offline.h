// Inputs of the connect phase from the offline pipeline's searches (core/topo/offline): every
// rank of N identical nodes, each node made of one or more trim domains that share node 0's
// search, moved to the node's ranks. Nothing per node is built: the cost is per rank.
#pragma once

#include <vector>

#include "core/base/status.h"
#include "core/connect/connect.h"
#include "core/connect/postset.h"
#include "core/topo/offline.h"

namespace weft::connect {

// The graphs of one domain as connect reads them (CollNet and NVLS only when searched).
GraphSet graphSet(const topo::NodeGraphs& graphs, bool collnet, bool nvls);

// Inputs of every rank of `nodes` identical nodes of `gpusPerNode` ranks: domain d of node k
// uses caches[d]'s graphs shifted to node k, and compCaps[d]; or, when `rankCompCaps` holds
// gpusPerNode values, rank r the value of its own GPU, rankCompCaps[r % gpusPerNode] (NCCL's
// peer info: each rank's cudaCompCap, whose min and max over the communicator the tuning reads).
Result<std::vector<RankInput>> offlineInputs(const std::vector<topo::SearchCache>& caches,
                                             const std::vector<int>& compCaps, int gpusPerNode, int nodes,
                                             bool collnet, bool nvls, const std::vector<int>& rankCompCaps = {});

// The compute capability of each rank of node 0 (its own GPU), by rank from the node's first:
// what offlineInputs' rankCompCaps takes. From the domains' systems, which together hold every
// GPU with a rank; empty when they do not.
std::vector<int> rankCompCaps(const std::vector<topo::SimulatedNode>& domains);

// Connects every rank of `options.nodes` identical nodes from node 0's searches (offlineInputs)
// with the options a communicator would have: channel limits from options.params, CollNet and
// NVLS as searched, NCCL's NVLS channel count for rank 0's compute capability (rankCompCaps[0];
// without rankCompCaps, the smallest domain's).
Result<Connection> connectOffline(const std::vector<topo::SearchCache>& caches, const std::vector<int>& compCaps,
                                  int gpusPerNode, const topo::OfflineOptions& options,
                                  const std::vector<int>& rankCompCaps = {});

}  // namespace weft::connect
