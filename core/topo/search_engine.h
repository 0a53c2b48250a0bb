// The recursion behind computeGraph (internal to core/topo): tries GPUs and NETs channel by
// channel, reserving bandwidth on the links of each path it follows and releasing it when it
// backtracks. Every call of recGpu costs one step of the budget `time`, exactly as in NCCL.
#pragma once

#include <array>
#include <map>
#include <vector>

#include "core/topo/graph.h"
#include "core/topo/params.h"
#include "core/topo/system.h"

namespace weft::topo::detail {

class SearchEngine {
 public:
  SearchEngine(System& system, const Params& params, Graph& best);

  // ncclTopoSearchRec: extends `graph` by one channel in every possible way.
  void searchRec(Graph& graph, int* time);

 private:
  enum Order { kFree = 0, kPciOrder = 1, kReplay = 2 };

  bool followPath(Graph& graph, NodeType t1, int i1, NodeType t2, int i2, float mult);
  int followLinks(const Path& path, NodeRef start, int maxSteps, float bw);
  Link* reverseLink(NodeRef from, NodeRef to, LinkType type);
  void tryGpu(Graph& graph, int step, int backToNet, int backToFirstRank, int order, int* time, int fromType,
              int fromIndex, int g);
  void recGpu(Graph& graph, int g, int step, int backToNet, int backToFirstRank, int order, int* time);
  void channelDone(Graph& graph, int* time);
  void backToNetStep(Graph& graph, int g, int step, int backToFirstRank, int order, int* time);
  void nextGpuStep(Graph& graph, int g, int step, int backToNet, int backToFirstRank, int order, int* time);
  void recNet(Graph& graph, int backToNet, int backToFirstRank, int* time);
  void recNetHeads(Graph& graph, int n, int backToNet, int backToFirstRank, int netCount, int* time, bool* found);
  void recNetChannel(Graph& graph, int n, int backToNet, int backToFirstRank, int* time);
  void tryNvls(Graph& graph, int g, int* time);
  void tryCollnetDirect(Graph& graph, int g, int* time);
  int nextGpus(const Graph& graph, int g, int sortNet, int* next);
  int replayGpu(const Graph& graph, int step) const;
  bool checkNet(const Graph& graph, int startNet, int n, int step) const;
  bool better(const Graph& graph, const Graph& ref) const;
  void reserveNetBw(int n, int bw);

  // Lists that depend only on paths, computed once per search.
  const std::vector<int>& selectNets(int typeInter, int gpu);
  const std::vector<int>& netLocalGpus(int n, PathType* pathType);
  int gpuPciBw(int g) const { return gpuPciBw_[static_cast<size_t>(g)]; }

  System& sys_;
  const Params& params_;
  Graph& best_;
  int ngpus_;
  std::vector<int> gpuPciBw_;
  std::map<std::pair<int, int>, std::vector<int>> selectNetsCache_;
  std::vector<std::vector<int>> netLocalGpus_;
  std::vector<PathType> netLocalType_;
};

}  // namespace weft::topo::detail
