// The connect part of `weft search`'s JSON: every rank's channels, streamed rank by rank so that
// 100k ranks do not sit in memory as text.
#pragma once

#include <cstdio>
#include <string>

#include "core/base/json.h"
#include "core/connect/connection.h"

namespace weft::tool {

// {"nNodes", "nChannels", "baseChannels", "treeDepth", "collnet", "nvlsChannels"}.
void writeConnectJson(JsonWriter& w, const connect::Connection& conn);

// Prints `prefix` (a JSON object's text without its closing brace), then
// ,"ranks":[{"rank","node","ring":[[prev,next],…],"tree":[[up,d0,d1,d2],…]},…]} for every rank
// (or only `onlyRank` when >= 0), one rank at a time.
void streamRanksJson(std::FILE* out, const std::string& prefix, const connect::Connection& conn, int onlyRank);

}  // namespace weft::tool
