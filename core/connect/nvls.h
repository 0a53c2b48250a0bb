// NVLS (NVLink SHARP) links after the exchange: the heads every node offers, and the trees
// between the heads of different nodes (NCCL's connectNvls).
#pragma once

#include <string>
#include <vector>

#include "core/connect/connection.h"
#include "core/connect/exchange.h"
#include "core/connect/postset.h"

namespace weft::connect {

// NVLS stays on when asked for and every rank's NVLS search found channels; the heads are the
// first `minimum over nodes` heads of each node's first rank.
void setupNvls(const Exchange& ex, const ConnectOptions& options, Connection& conn);

// "NVLS Head %2d:" lines (logged on node 0's ranks, at most 20 nodes per line) and the
// "NVLS Trees : ..." line of `rank`; empty on one node or without NVLS.
std::vector<std::string> nvlsHeadLines(const Connection& conn);
std::string nvlsTreesLine(const Connection& conn, int rank);

}  // namespace weft::connect
