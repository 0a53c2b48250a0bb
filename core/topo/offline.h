// The topology part of one communicator's initialisation, run offline for one node of N
// identical nodes (what each node's first rank does in NCCL's initTransportsRank): build the
// system, compute paths, trim, compute paths again, search each graph. Logs NCCL's INFO lines
// in NCCL's order on the node's first rank.
#pragma once

#include <vector>

#include "core/base/status.h"
#include "core/topo/bound.h"
#include "core/topo/graph.h"
#include "core/topo/params.h"
#include "core/topo/search.h"
#include "core/topo/system.h"
#include "core/topo/xml.h"

namespace weft::topo {

// What node 0's searches produced, reused by the other nodes: identical nodes share one search
// (their systems differ only by rank numbers, which the search never looks at).
struct SearchCache;

struct OfflineOptions {
  int nodes = 1;
  Params params;
  bool collnet = false;  // also search the CollNet chain and direct graphs
  bool nvls = false;     // also search the NVLS graph (as NCCL: not with NCCL_NVLS_ENABLE=0 or <= 2 GPUs)
  const TopoXml* graphFile = nullptr;  // NCCL_GRAPH_FILE
  std::vector<SearchStep>* trace = nullptr;  // relaxation steps of every search, for --explain
  SearchCache* cache = nullptr;              // share node 0's search with the other nodes
};

// The graphs in NCCL's dump order: ring, tree, collnet direct, collnet chain, nvls.
struct NodeGraphs {
  Graph ring, tree, collnetDirect, collnetChain, nvls;
  std::vector<const Graph*> dumpOrder() const { return {&ring, &tree, &collnetDirect, &collnetChain, &nvls}; }
};

struct SearchCache {
  bool valid = false;
  int rankOffset = 0;               // of the node that searched
  NodeGraphs graphs;
  std::vector<std::string> lines;   // what the searches logged (no rank numbers in them)
};

// The same graphs with every rank moved by `delta`.
NodeGraphs shiftRanks(const NodeGraphs& graphs, int delta);

struct SimulatedNode {
  int index = 0;
  int firstRank = 0;
  int gpusPerNode = 0;
  System system;
  NodeGraphs graphs;
  MachineBound bound;  // node 0 only: the machine's bound on `nodes` nodes, before NCCL trims it
};

// GPUs with a rank in the topology file: the ranks of one node.
int gpusPerNode(const TopoXml& topo);

// Runs node `index` of `options.nodes` identical nodes built from `topo`; its ranks are the
// file's ranks plus index * gpusPerNode.
Result<SimulatedNode> simulateNode(const TopoXml& topo, int index, const OfflineOptions& options);

// What rank `rank` of node `index` runs: the same pipeline, trimmed to the GPUs that rank can
// reach without the network (its trim domain), logged with its rank. firstRank is `rank`.
Result<SimulatedNode> simulateRank(const TopoXml& topo, int index, int rank, const OfflineOptions& options);

// Every trim domain of node `index`, ordered by their lowest rank, each simulated by that rank.
// One domain unless GPUs of the node cannot talk without the network (NCCL_P2P_DISABLE or
// NCCL_P2P_LEVEL=LOC with NCCL_SHM_DISABLE=1: every GPU is its own domain). `caches` holds one
// search per domain position, shared by identical nodes (options.cache is not used).
Result<std::vector<SimulatedNode>> simulateDomains(const TopoXml& topo, int index, const OfflineOptions& options,
                                                   std::vector<SearchCache>& caches);

}  // namespace weft::topo
