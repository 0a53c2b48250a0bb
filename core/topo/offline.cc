#include "core/topo/offline.h"

#include <algorithm>

#include "core/base/log.h"
#include "core/topo/paths.h"
#include "core/topo/system_build.h"
#include "core/topo/system_print.h"

namespace weft::topo {
namespace {

void relabelRanks(XmlNode& n, int offset) {
  if (n.name() == "gpu") {
    if (const std::string* r = n.find("rank")) n.set("rank", std::to_string(std::atoi(r->c_str()) + offset));
  }
  for (const auto& c : n.children()) relabelRanks(*c, offset);
}

void logLines(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) WEFT_INFO(log::kGraph, "%s", l.c_str());
}

Status search(System& s, const OfflineOptions& o, Graph& g, std::vector<std::string>* record) {
  SearchOptions so;
  so.graphFile = o.graphFile;
  so.trace = o.trace;
  so.lines = record;
  WEFT_TRY(computeGraph(s, o.params, g, so));
  std::vector<std::string> lines = graphLines(s, g);
  logLines(lines);
  if (record) record->insert(record->end(), lines.begin(), lines.end());
  return Status::ok();
}

void shiftGraph(Graph& g, int delta) {
  for (int& r : g.intra) r += delta;
}

// The graphs NCCL computes, in its order, with its channel bounds.
Status searchGraphs(System& s, const OfflineOptions& o, NodeGraphs& out, std::vector<std::string>* record) {
  Graph& ring = out.ring;
  ring.id = kGraphRing;
  ring.pattern = Pattern::kRing;
  ring.minChannels = 1;
  ring.maxChannels = kMaxChannels / 2;
  WEFT_TRY(search(s, o, ring, record));

  Graph& tree = out.tree;
  tree.id = kGraphTree;
  tree.pattern = Pattern::kBalancedTree;
  tree.minChannels = tree.maxChannels = ring.nChannels;
  WEFT_TRY(search(s, o, tree, record));

  out.collnetChain.id = kGraphCollnetChain;
  out.collnetChain.pattern = Pattern::kTree;
  out.collnetChain.collNet = true;
  out.collnetDirect.id = kGraphCollnetDirect;
  out.collnetDirect.pattern = Pattern::kCollnetDirect;
  out.collnetDirect.collNet = true;
  out.nvls.id = kGraphNvls;
  out.nvls.pattern = Pattern::kNvls;
  int gpus = s.count(NodeType::kGpu);
  for (Graph* g : {&out.collnetChain, &out.collnetDirect, &out.nvls}) g->resize(gpus);
  if (o.collnet) {
    out.collnetChain.minChannels = out.collnetChain.maxChannels = ring.nChannels;
    WEFT_TRY(search(s, o, out.collnetChain, record));
    out.collnetDirect.minChannels = 1;
    out.collnetDirect.maxChannels = kMaxChannels;
    WEFT_TRY(search(s, o, out.collnetDirect, record));
  }
  // ncclNvlsInit: NVLS only where NCCL_NVLS_ENABLE is not 0 and the rank's system holds more
  // than two GPUs; otherwise NCCL does not search the graph (no Pattern line, no channels).
  if (o.nvls && o.params.nvlsEnable != 0 && gpus > 2) {
    out.nvls.minChannels = 1;
    out.nvls.maxChannels = kMaxChannels;
    WEFT_TRY(search(s, o, out.nvls, record));
  }
  return Status::ok();
}

// The lowest rank of the file: the node's first rank, which prints for the node.
int firstRankOf(const TopoXml& xml) {
  std::vector<XmlNode*> gpus;
  findAll(*xml.root(), "gpu", gpus);
  int first = -1;
  for (const XmlNode* g : gpus) {
    const std::string* r = g->find("rank");
    if (r == nullptr) continue;
    int rank = std::atoi(r->c_str());
    if (first < 0 || rank < first) first = rank;
  }
  return first < 0 ? 0 : first;
}

}  // namespace

NodeGraphs shiftRanks(const NodeGraphs& graphs, int delta) {
  NodeGraphs out = graphs;
  for (Graph* g : {&out.ring, &out.tree, &out.collnetDirect, &out.collnetChain, &out.nvls}) shiftGraph(*g, delta);
  return out;
}

int gpusPerNode(const TopoXml& topo) {
  std::vector<XmlNode*> gpus;
  if (topo.root()) findAll(*topo.root(), "gpu", gpus);
  int n = 0;
  for (const XmlNode* g : gpus)
    if (g->has("rank")) ++n;
  return n;
}

namespace {

// The pipeline of one rank of node `index` on its relabelled file `xml`.
Result<SimulatedNode> simulate(const TopoXml& xml, int index, int gpus, int rank, const OfflineOptions& o) {
  SimulatedNode node;
  node.index = index;
  node.gpusPerNode = gpus;
  node.firstRank = rank;
  log::ScopedDevice dev(node.firstRank);
  WEFT_ASSIGN_OR_RETURN(node.system, buildSystem(xml));
  System& s = node.system;
  if (index == 0) node.bound = machineBound(s, o.nodes);

  CommView comm{node.firstRank, o.nodes * node.gpusPerNode};
  WEFT_TRY(computePaths(s, o.params, &comm));
  const int gpusBeforeTrim = s.count(NodeType::kGpu);
  WEFT_TRY(trimSystem(s, comm));
  // NCCL computes the paths again after trimming. Paths depend only on the nodes, links,
  // settings and communicator, and a trim that removes no GPU changes none of them (only the
  // inter-node flag): the second pass would write the same paths. It still runs when GPUs went,
  // or when someone reads its GDR lines (NCCL prints them in both passes).
  if (s.count(NodeType::kGpu) != gpusBeforeTrim ||
      log::processLogger().enabled(log::Level::kInfo, log::kGraph | log::kNet))
    WEFT_TRY(computePaths(s, o.params, &comm));
  searchInit(s);
  // Formatting every path line costs more than some searches: only when someone reads them.
  if (log::processLogger().enabled(log::Level::kInfo, log::kGraph)) {
    logLines(systemBlock(s));
    logLines(pathLines(s));
  }
  int offset = index * node.gpusPerNode;
  if (o.cache != nullptr && o.cache->valid) {
    node.graphs = shiftRanks(o.cache->graphs, offset - o.cache->rankOffset);
    logLines(o.cache->lines);
    return node;
  }
  std::vector<std::string> record;
  WEFT_TRY(searchGraphs(s, o, node.graphs, &record));
  if (o.cache != nullptr) {
    o.cache->valid = true;
    o.cache->rankOffset = offset;
    o.cache->graphs = node.graphs;
    o.cache->lines = std::move(record);
  }
  return node;
}

Result<TopoXml> relabelled(const TopoXml& topo, int index, int gpus) {
  if (gpus == 0) return invalidArgument(topo.source() + ": no <gpu rank=...> in the topology");
  TopoXml xml = topo;
  relabelRanks(*xml.root(), index * gpus);
  return xml;
}

}  // namespace

Result<SimulatedNode> simulateNode(const TopoXml& topo, int index, const OfflineOptions& o) {
  int gpus = gpusPerNode(topo);
  WEFT_ASSIGN_OR_RETURN(TopoXml xml, relabelled(topo, index, gpus));
  return simulate(xml, index, gpus, firstRankOf(xml), o);
}

Result<SimulatedNode> simulateRank(const TopoXml& topo, int index, int rank, const OfflineOptions& o) {
  int gpus = gpusPerNode(topo);
  WEFT_ASSIGN_OR_RETURN(TopoXml xml, relabelled(topo, index, gpus));
  return simulate(xml, index, gpus, rank, o);
}

Result<std::vector<SimulatedNode>> simulateDomains(const TopoXml& topo, int index, const OfflineOptions& options,
                                                   std::vector<SearchCache>& caches) {
  int gpus = gpusPerNode(topo);
  WEFT_ASSIGN_OR_RETURN(TopoXml xml, relabelled(topo, index, gpus));
  std::vector<int> ranks;
  std::vector<XmlNode*> gpuNodes;
  findAll(*xml.root(), "gpu", gpuNodes);
  for (const XmlNode* g : gpuNodes)
    if (const std::string* r = g->find("rank")) ranks.push_back(std::atoi(r->c_str()));
  std::sort(ranks.begin(), ranks.end());
  std::vector<SimulatedNode> out;
  std::vector<int> covered;
  for (int rank : ranks) {
    if (std::find(covered.begin(), covered.end(), rank) != covered.end()) continue;
    if (caches.size() <= out.size()) caches.emplace_back();
    OfflineOptions o = options;
    o.cache = &caches[out.size()];
    WEFT_ASSIGN_OR_RETURN(SimulatedNode node, simulate(xml, index, gpus, rank, o));
    for (const Node& g : node.system.nodes(NodeType::kGpu)) covered.push_back(g.gpu.rank);
    out.push_back(std::move(node));
  }
  return out;
}

}  // namespace weft::topo
