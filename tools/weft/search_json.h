// JSON form of `weft search` results: the facts of NCCL's INFO lines, for tools.
#pragma once

#include <vector>

#include "core/base/json.h"
#include "core/topo/bound.h"
#include "core/topo/offline.h"

namespace weft::tool {

// {"index", "firstRank", "maxBw", "totalBw", "inter", "system": {...}, "paths": [...], "graphs": [...]}
void writeNodeJson(JsonWriter& w, const topo::SimulatedNode& node, bool withSystem);

// [{"graph": id, "step": …, "pattern", "bwIntra", …}] for --explain.
void writeTraceJson(JsonWriter& w, const std::vector<topo::SearchStep>& trace);

// {"ranks", "rings": {"channels", "channelBw", "busBw"}, "allreduce": {"busBw", "ratio",
// "partsPerNode", "gpusPerPart", "into": {type: GB/s}, "limit"}, "allgather": {...}}; only
// "ranks" when a single rank has nothing to move.
void writeBoundJson(JsonWriter& w, const topo::MachineBound& bound, const topo::RingFigure& rings);

}  // namespace weft::tool
