// Node 0 of a topology through the fast search and through the float reference search
// (Params::searchFloatReference: every bandwidth as NCCL's float, no shortcut), compared by
// their graph dumps. Shared by the corpus and the variants tests.
#pragma once

#include <gtest/gtest.h>

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
  return true;
}

}  // namespace weft::test
