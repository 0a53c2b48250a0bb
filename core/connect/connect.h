// The whole connect phase of a communicator, run in one process for all of its ranks: each
// rank's preset, the exchange (AllGather3), and the postset. A communicator runs the same three
// steps with a real allgather in the middle.
#pragma once

#include <vector>

#include "core/base/status.h"
#include "core/connect/connection.h"
#include "core/connect/postset.h"
#include "core/connect/preset.h"

namespace weft::connect {

// Gives every rank of `graphs` (the GPUs of its first ring channel, shifted) these graphs.
// `ranks` grows to fit; a rank that already has graphs is an error (two nodes claim it).
Status addRanks(std::vector<RankInput>& ranks, const GraphSet& graphs, int compCap);

// `ranks[r]` is rank r's input; every rank needs its graphs. Cost and memory grow linearly with the number of ranks.
Result<Connection> connectRanks(const std::vector<RankInput>& ranks, const ConnectOptions& options);

}  // namespace weft::connect
