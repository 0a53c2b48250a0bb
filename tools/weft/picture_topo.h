// `weft topo show --format dot|svg`: the system graph NCCL builds, as a Graphviz graph. CPUs
// (NUMA nodes) are boxes holding their PCI trees; GPUs, NICs, network ports and NVSwitches are
// nodes; every link is one edge labelled with its type and GB/s, coloured by type.
#pragma once

#include <map>
#include <string>

#include "core/topo/system.h"
#include "core/topo/xml.h"

namespace weft::tool {

struct TopoPictureOptions {
  std::string title;                     // first caption line (the topology file's name)
  std::map<int, std::string> netNames;   // NET device index -> interface name, for labels
};

// DOT text of the system: one node per System node (named as NCCL names it, "GPU/0-1b000"),
// one undirected edge per pair of nodes linked in either direction, per link type.
std::string systemDot(const topo::System& system, const TopoPictureOptions& options);

// The names of the <net> elements of a topology, by their dev attribute.
std::map<int, std::string> netNamesOf(const topo::TopoXml& xml);

// "0000:1b:00.0" from NCCL's bus id number (0x1b000).
std::string busIdText(int64_t localId);

// A node's label lines (GPU: "GPU 3", "rank 3 · sm90", bus id; NET: name, speed; …).
std::string nodeLabel(const topo::Node& node, const std::map<int, std::string>& netNames);

}  // namespace weft::tool
