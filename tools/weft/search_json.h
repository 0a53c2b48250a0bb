// JSON form of `weft search` results: the facts of NCCL's INFO lines, for tools.
#pragma once

#include <vector>

#include "core/base/json.h"
#include "core/topo/offline.h"

namespace weft::tool {

// {"index", "firstRank", "maxBw", "totalBw", "inter", "system": {...}, "paths": [...], "graphs": [...]}
void writeNodeJson(JsonWriter& w, const topo::SimulatedNode& node, bool withSystem);

// [{"graph": id, "step": …, "pattern", "bwIntra", …}] for --explain.
void writeTraceJson(JsonWriter& w, const std::vector<topo::SearchStep>& trace);

}  // namespace weft::tool
