// The system block NCCL prints with NCCL_DEBUG_SUBSYS=GRAPH (ncclTopoPrint), line for line.
#pragma once

#include <string>
#include <vector>

#include "core/topo/system.h"

namespace weft::topo {

// "GPU/0-8d000": kind, host index and local id in hex.
std::string nodeName(const Node& n);

// "=== System : maxBw … totalBw … ===", each CPU's tree along PCI links, and the closing rule.
std::vector<std::string> systemBlock(const System& s);

// One line per GPU, then per NET, as NCCL's ncclTopoPrintPaths: "GPU/0-f000 :GPU/0-f000
// (0/5000.0/LOC) …" listing count/bandwidth/type of the path to every node of each kind that
// has paths, cut to kPathLineMax characters as NCCL's line buffer cuts it.
inline constexpr size_t kPathLineMax = 1023;
std::vector<std::string> pathLines(const System& s);

}  // namespace weft::topo
