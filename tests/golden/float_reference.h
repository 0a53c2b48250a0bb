// Node 0 of a topology through the fast search and through the float reference search
// (Params::searchFloatReference: every bandwidth as NCCL's float, no shortcut), compared by
// their graph dumps and by the link bandwidths they leave. Shared by the corpus and the
// variants tests.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>

#include "core/topo/offline.h"

namespace weft::test {

using topo::OfflineOptions;
using topo::SimulatedNode;
using topo::TopoXml;

inline std::string graphDump(const SimulatedNode& node) {
  auto xml = topo::graphsToXml(node.system, node.graphs.dumpOrder());
  return xml.isOk() ? xml->toString() : xml.status().toString();
}

// Every link's bandwidth (and every NET's) after the searches, bit for bit: NCCL's searches
// leave their rounding on the links (a reservation and its release need not give back the
// value they found), and the next search starts from there, so the fast search must leave
// the same floats. One line per value that differs from `other`; empty when all are equal.
inline std::string linkStateDiff(const SimulatedNode& a, const SimulatedNode& b) {
  std::string out;
  for (topo::NodeType t : topo::kAllNodeTypes) {
    const auto& na = a.system.nodes(t);
    const auto& nb = b.system.nodes(t);
    if (na.size() != nb.size()) return "node counts differ";
    for (size_t i = 0; i < na.size(); ++i) {
      if (t == topo::NodeType::kNet && std::bit_cast<uint32_t>(na[i].net.bw) != std::bit_cast<uint32_t>(nb[i].net.bw))
        out += "NET " + std::to_string(i) + " bw " + std::to_string(na[i].net.bw) + " vs " + std::to_string(nb[i].net.bw) + "\n";
      if (na[i].links.size() != nb[i].links.size()) return "link counts differ";
      for (size_t l = 0; l < na[i].links.size(); ++l)
        if (std::bit_cast<uint32_t>(na[i].links[l].bw) != std::bit_cast<uint32_t>(nb[i].links[l].bw))
          out += std::string(topo::nodeTypeName(t)) + " " + std::to_string(i) + " link " + std::to_string(l) + ": " +
                 std::to_string(na[i].links[l].bw) + " vs " + std::to_string(nb[i].links[l].bw) + "\n";
    }
  }
  return out;
}

// Adds a failure when the two searches differ. Returns false, comparing nothing, when the fast
// pipeline cannot build the file (graph files, RCCL's version 2): not a file NCCL can build.
inline bool fastEqualsFloatReference(const TopoXml& topo, OfflineOptions o) {
  o.params.searchFloatReference = false;
  auto fast = topo::simulateNode(topo, 0, o);
  if (!fast.isOk()) return false;
  o.params.searchFloatReference = true;
  auto reference = topo::simulateNode(topo, 0, o);
  if (!reference.isOk()) {
    ADD_FAILURE() << "the float reference failed where the fast search did not: " << reference.status().toString();
    return true;
  }
  EXPECT_EQ(graphDump(*fast), graphDump(*reference));
  EXPECT_EQ(linkStateDiff(*fast, *reference), "") << "link bandwidths left by the searches";
  return true;
}

}  // namespace weft::test
