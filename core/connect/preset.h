// Preset: what one rank derives from its node's graphs before the ranks exchange anything
// (NCCL's ncclTopoPreset). Each rank finds itself in every channel of its ring and tree graphs
// and records the ends of its node's chain, its neighbours inside the node, and the NVLS heads.
#pragma once

#include <array>
#include <unordered_map>
#include <vector>

#include "core/base/status.h"
#include "core/topo/graph.h"

namespace weft::connect {

// The graphs a rank's node searched. Identical nodes share one search: `rankShift` is added to
// every rank the graphs name, so node k can point at node 0's graphs with a shift of k * gpus.
// CollNet and NVLS graphs are optional (null when they were not searched).
struct GraphSet {
  const topo::Graph* ring = nullptr;
  const topo::Graph* tree = nullptr;
  const topo::Graph* collnetChain = nullptr;
  const topo::Graph* collnetDirect = nullptr;
  const topo::Graph* nvls = nullptr;
  int rankShift = 0;

  int rank(const topo::Graph& g, int channel, int step) const { return g.rank(channel, step) + rankShift; }
};

// Index of a graph in the per-rank graph summaries.
enum GraphSlot : int { kSlotRing, kSlotTree, kSlotCollnetChain, kSlotCollnetDirect, kSlotNvls, kGraphSlots };

// AllGather3's graphInfo: what a rank tells the others about one of its graphs.
struct GraphInfo {
  int pattern = 0;
  int nChannels = 0;
  int sameChannels = 0;
  float bwIntra = 0;
  float bwInter = 0;
  int typeIntra = 0;
  int typeInter = 0;
  int crossNic = 0;
};
GraphInfo graphInfo(const topo::Graph& graph);
using GraphInfos = std::array<GraphInfo, kGraphSlots>;

// Per-channel values of a preset. The first seven are NCCL's ncclTopoRanks arrays (exchanged);
// the last four are the rank's own channel state (tree and CollNet chain links inside the node),
// which NCCL keeps in the rank's channels and the in-process exchange carries along.
enum class Slot : int {
  kRingRecv,      // first rank of the node's ring in this channel
  kRingSend,      // last rank of the node's ring
  kRingPrev,      // neighbours inside the node; -1 at the node's ends
  kRingNext,
  kTreeToParent,  // the rank of the node that talks to the parent node
  kTreeToChild0,  // ... and to the first and second child nodes
  kTreeToChild1,
  kTreeUp,        // this rank's tree links inside the node; -1 at the ends
  kTreeDown,
  kChainUp,       // CollNet chain inside the node (nRanks: the CollNet root); -1 without CollNet
  kChainDown,
  kCount,
};

struct RankPreset {
  int rank = -1;
  int nChannels = 0;     // min(tree, ring) of this rank's own graphs
  int crossNicRing = 0;  // the ring graph's crossNic: 2 asks odd nodes to alternate rings
  int compCap = 0;       // the GPU's compute capability (AllGather1's cudaCompCap)
  GraphInfos graphs{};
  std::vector<int> nvlsHeads;  // distinct first ranks of the NVLS channels, in channel order
  std::vector<int> values;     // Slot::kCount rows of nChannels

  int get(Slot s, int c) const { return values[index(s, c)]; }
  int& at(Slot s, int c) { return values[index(s, c)]; }

 private:
  size_t index(Slot s, int c) const { return static_cast<size_t>(static_cast<int>(s) * nChannels + c); }
};

// The preset of `rank` among `nRanks` ranks, from its node's graphs (ring and tree required).
// Fails when the rank is missing from a ring or tree channel of those graphs.
Result<RankPreset> preset(const GraphSet& graphs, int rank, int nRanks, int compCap);

// Where each rank sits in each channel of the graphs that many ranks share. A preset looks for
// its rank in every channel of its graphs, as NCCL's does by scanning the channel; for a million
// ranks of 16 channels those scans were a third of the connect phase. Tables are made per graph
// on first use (channels the graph found, ranks within 4096 of each other; anything else is
// scanned) and give the same step a scan gives: the first one holding the rank, or -1.
class ChannelPositions {
 public:
  int stepOf(const GraphSet& graphs, const topo::Graph& g, int c, int rank);

 private:
  struct Table {
    int lowest = 0;          // the smallest rank the graph's channels hold
    int span = 0;            // ranks lowest .. lowest + span - 1; 0: no table, scan
    std::vector<int> steps;  // [channel][rank - lowest]: first step, or -1
  };
  const Table& tableOf(const topo::Graph& g);

  std::unordered_map<const topo::Graph*, Table> tables_;
  const topo::Graph* last_ = nullptr;
  const Table* lastTable_ = nullptr;
};

// preset() into `out`, reusing its storage, with steps found through `positions`. NVLS heads
// are left empty unless `nvlsHeads` (only node ends read them).
Status presetInto(const GraphSet& graphs, int rank, int nRanks, int compCap, ChannelPositions& positions,
                  bool nvlsHeads, RankPreset& out);

}  // namespace weft::connect
