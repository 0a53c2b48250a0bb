// Graph: the channels a search found for one pattern (NCCL's ncclTopoGraph), its NCCL log lines
// and its graph-XML form (NCCL_GRAPH_DUMP_FILE / NCCL_GRAPH_FILE).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/topo/system.h"
#include "core/topo/xml.h"

namespace weft::topo {

// Values are NCCL's NCCL_TOPO_PATTERN_* (written to graph files and logs as numbers).
enum class Pattern : int {
  kBalancedTree = 1,   // NIC traffic on the first two GPUs: parent+child on one, child on the other
  kSplitTree = 2,      // parent on the first GPU, children on the second
  kTree = 3,           // all NIC traffic on one GPU
  kRing = 4,
  kNvls = 5,           // NVLink SHARP heads
  kCollnetDirect = 6,  // CollNet direct heads
};

// Graph ids in graph files: ring 0, tree 1, collnet chain 2, nvls 3, collnet direct 4.
inline constexpr int kGraphRing = 0;
inline constexpr int kGraphTree = 1;
inline constexpr int kGraphCollnetChain = 2;
inline constexpr int kGraphNvls = 3;
inline constexpr int kGraphCollnetDirect = 4;

struct Graph {
  // Input
  int id = kGraphRing;
  Pattern pattern = Pattern::kRing;
  int crossNic = 0;
  bool collNet = false;
  int minChannels = 1;
  int maxChannels = kMaxChannels;
  // Output
  int nChannels = 0;
  float bwIntra = 0;
  float bwInter = 0;
  float latencyInter = 0;
  int typeIntra = 0;  // PathType values; kept as int because the search steps through them
  int typeInter = 0;
  int sameChannels = 0;
  int nHops = 0;
  int ngpus = 0;               // GPUs per channel (the system's GPU count)
  std::vector<int> intra;      // kMaxChannels * ngpus ranks, channel-major
  std::vector<int64_t> inter;  // kMaxChannels * 2 NET ids: where each channel enters and leaves

  void resize(int gpus) {
    ngpus = gpus;
    intra.assign(static_cast<size_t>(kMaxChannels * gpus), 0);
    inter.assign(static_cast<size_t>(kMaxChannels * 2), 0);
  }
  int& rank(int channel, int step) { return intra[static_cast<size_t>(channel * ngpus + step)]; }
  int rank(int channel, int step) const { return intra[static_cast<size_t>(channel * ngpus + step)]; }
};

// "Pattern 4, crossNic 0, nChannels 2, bw …/…, type NVL/PIX, sameChannels 1" and one line per
// channel (" 0 : NET/0-0 GPU/0-f000 … NET/0-0"), as ncclTopoPrintGraph.
std::vector<std::string> graphLines(const System& system, const Graph& graph);

// The <graphs version="1"> document NCCL dumps with NCCL_GRAPH_DUMP_FILE, for these graphs.
Result<TopoXml> graphsToXml(const System& system, const std::vector<const Graph*>& graphs);

// Reads the graph with `graph.id` from a graph file into `graph` (NCCL_GRAPH_FILE). Returns the
// number of channels loaded (0 when the file has no such graph, or it is cross-NIC and
// crossNic is disabled).
Result<int> graphFromXml(const TopoXml& xml, const System& system, int crossNicSetting, Graph& graph);

}  // namespace weft::topo
