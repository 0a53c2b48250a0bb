// The INFO lines NCCL logs for one rank during and right after the postset, in NCCL's order:
// the CollNet threshold note, "Tree" lines from connectTrees (on the ranks that link their node
// to other nodes), "CollNetDirect" lines, "NVLS Head"/"NVLS Trees", rank 0's "Channel" lines,
// then "Ring" lines and the "Trees" line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/connect/connection.h"

namespace weft::connect {

struct LogLine {
  uint64_t subsys = 0;  // log::Subsys: INIT or GRAPH, as NCCL logs each line
  std::string text;
};

std::vector<LogLine> rankLogLines(const Connection& conn, int rank);

// Logs rankLogLines(conn, rank) through the process logger, with `rank` in the prefix.
void logRank(const Connection& conn, int rank);

// "Ring %02d : %d -> %d -> %d" (channel, prev, rank, next).
std::string ringLine(const Connection& conn, int rank, int c);

// "Trees" followed by " [c] d0/d1/d2->rank->up" for every channel, cut at 1022 characters after
// "Trees" as NCCL's 1024-byte buffer does.
std::string treesLine(const Connection& conn, int rank);

// connectTrees' "Tree %d : %d -> %d -> %d/%d/%d" lines of `rank` (channel c then c + base, for
// each base channel where the rank links its node to another); empty for other ranks.
std::vector<std::string> treeLines(const Connection& conn, int rank);

}  // namespace weft::connect
