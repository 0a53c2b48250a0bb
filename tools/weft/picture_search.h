// `weft search --picture`: the channels NCCL builds, drawn with Graphviz. One panel per channel
// of the communicator and per graph (ring, tree): GPUs boxed by node, network ports where a
// channel leaves and enters a node, arrows in ring order (from tree parents to their children),
// each labelled and coloured with the path type between its ends.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/connect/connection.h"
#include "core/topo/offline.h"

namespace weft::tool {

// The most nodes a picture draws: beyond, panels are walls of boxes nobody reads.
inline constexpr int kPictureMaxNodes = 8;

struct SearchPicture {
  const topo::SimulatedNode* node = nullptr;  // node 0: its system (paths) and graphs
  const connect::Connection* conn = nullptr;  // every rank's rings and trees
  int nodes = 1;                              // identical nodes, node n holds ranks [n*g, (n+1)*g)
  std::vector<int> channels;                  // communicator channels to draw, in order
  bool rings = true;
  bool trees = true;
  std::string title;                          // first caption line
  std::map<int, std::string> netNames;        // NET device -> interface name
};

// DOT text: a cluster per (channel, graph) panel, inside it a cluster per node.
Result<std::string> searchDot(const SearchPicture& picture);

// "0,2-4" -> {0, 2, 3, 4}; "all" or "" -> 0..nChannels-1. Each must be below nChannels.
Result<std::vector<int>> parseChannelList(const std::string& text, int nChannels);

}  // namespace weft::tool
