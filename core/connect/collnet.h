// CollNet (in-network reduction) links after the exchange: whether CollNet stays on, the extra
// channels it asks for, the chain inside each node, and the direct heads of each node
// (NCCL's CollNet part of ncclTopoPostset and connectCollNet).
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/connect/connection.h"
#include "core/connect/exchange.h"
#include "core/connect/postset.h"

namespace weft::connect {

// Decides CollNet after the exchange and connects it: off when not asked for, when a rank's
// chain search found nothing, or below the node threshold (noted as NCCL logs it). Adds half
// again as many channels when the chain's intra-node bandwidth beats its network bandwidth
// (except at one rank per node), and connects the direct heads when nodes have at most 8 ranks.
Status setupCollnet(const Exchange& ex, const std::vector<GraphSet>& nodeGraphs, const ConnectOptions& options,
                    Connection& conn);

// "CollNetDirect channel %d rank %d ..." as connectCollNet logs it for `rank` in channel c.
std::string collnetDirectLine(const Connection& conn, int rank, int c);

}  // namespace weft::connect
