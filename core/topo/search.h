// Channel search (NCCL 2.28 search.cc): finds the rings and trees NCCL would find on a System,
// visiting the same candidates in the same order and counting steps the same way, so that the
// step budgets end the search at the same point and the results are equal.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/topo/graph.h"
#include "core/topo/params.h"
#include "core/topo/system.h"

namespace weft::topo {

// Sets system.maxBw (best path bandwidth from a GPU to a NET, or to a GPU within one node) and
// system.totalBw (the widest GPU: NVLink total or PCI). Needs paths.
void searchInit(System& system);

// One relaxation step tried by the search, for --explain.
struct SearchStep {
  int graphId = 0;
  std::string what;     // "start", "relax", "raise speed", or "result: <why the search stopped>"
  float bwIntra = 0;    // the speeds tried
  float bwInter = 0;
  int typeIntra = 0;
  int typeInter = 0;
  int crossNic = 0;
  int sameChannels = 0;
  int pattern = 0;
  int budget = 0;       // steps allowed for this try
  int left = 0;         // steps left afterwards (-1: the maximum channel count was reached)
  int nChannels = 0;    // best graph so far, after this try
  float bestBwIntra = 0;
  float bestBwInter = 0;
};

// Searches `graph` (id, pattern, minChannels, maxChannels, collNet set by the caller) on
// `system`. Honors NCCL_GRAPH_FILE (graphFile, loaded instead of searching when it has the
// graph), NCCL_CROSS_NIC. Falls back to the simple order like NCCL when nothing is found.
// `trace`, when given, receives every relaxation step tried.
struct SearchOptions {
  const TopoXml* graphFile = nullptr;
  std::vector<SearchStep>* trace = nullptr;
  std::vector<std::string>* lines = nullptr;  // also receives the INFO lines the search logs
};
Status computeGraph(System& system, const Params& params, Graph& graph, const SearchOptions& options = {});

}  // namespace weft::topo
