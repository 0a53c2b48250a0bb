// How fast could any schedule go? An upper bound on the bus bandwidth (nccl-tests' busbw) of an
// allreduce and of an allgather over N identical nodes, from the capacities of the system
// graph's links as NCCL counts them, set beside the bandwidth of NCCL's ring graph.
//
// The bound is a partition (cut) bound. Split the GPUs into m >= 2 parts, each part owning a
// region of the graph (its GPUs and any switches, CPUs or NICs given to it); vertices outside
// every region, and the network joining the nodes, only forward data. Let C(R) be the capacity
// of the links entering region R (for a region with network ports, also what the network can
// bring in: its ports' speed, at most what the other regions' ports can send).
//
//   allgather: every chunk must enter each of the m - 1 regions that do not hold it, so the
//     regions together receive (m - 1) S bytes (S = the gathered size), and region R alone
//     (n - |R|) / n S: time >= (m - 1) S / sum C and >= (n - |R|) S / (n C(R)).
//   allreduce with reductions on GPUs (ring, tree, any schedule whose switches only forward or
//     copy): for one element, consider the first region F to hold the full sum. Its knowledge
//     grew by receptions of other regions' partial sums, at least m - 1 of them up to then; every
//     other region completes later, by a reception of its own after that moment: at least
//     2 (m - 1) receptions per element (one-way gossip), so time >= 2 (m - 1) S / sum C; and
//     region R must receive at least S: time >= S / C(R).
//
// With busbw = S/t x (n-1)/n (allgather) or x 2(n-1)/n (allreduce), n ranks, this gives
//   busbw <= (n-1)/n x sum C / (m-1), both collectives, and per region
//   allgather <= (n-1) C(R) / (n - |R|),  allreduce <= 2 (n-1)/n C(R).
// Each partition yields a valid bound; the smallest over a family is reported: each GPU alone,
// the groups left connected when the links below each bandwidth of the graph are cut (sockets
// behind a slow inter-CPU link, PCIe switches behind a narrow uplink, NVLink islands), and each
// node whole. A partition outside the family could give a lower bound. By Nash-Williams and
// Tutte, the minimum over all partitions of sum C / (m - 1) is what a fractional packing of
// spanning trees reaches when every vertex is a GPU (the trees Blink packs); with switches and
// relays in between it is an upper bound only.
// NVLS and CollNet reduce inside switches and are not covered by the allreduce bound. On one
// node the NICs are left out, as NCCL trims them: data looped through the network is not counted.
#pragma once

#include <string>
#include <vector>

#include "core/topo/graph.h"
#include "core/topo/system.h"

namespace weft::topo {

// Capacity of one kind of link entering a part, GB/s ("NVL", "PCI", "SYS", …, "network").
struct CutShare {
  std::string type;
  float bw = 0;
};

struct CollectiveBound {
  float busBw = 0;            // GB/s; 0 when the cut carries nothing
  int partsPerNode = 0;       // how the binding partition splits each node
  int gpusPerPart = 0;        // GPUs of the tightest part
  std::vector<CutShare> into;  // what enters the tightest part, largest first
  std::string limit;          // the binding cut in words: "the links into each GPU (NVL 370.8 + PCI 24.0 GB/s)"
};

struct MachineBound {
  bool defined = false;       // false with a single rank: nothing to move
  int nodes = 1;
  int ranks = 0;
  CollectiveBound allreduce;  // reductions on GPUs (ring and tree; not NVLS, not CollNet)
  CollectiveBound allgather;  // any schedule, switches copying included
};

// `node`: one node's system as its topology file builds it (untrimmed: GPUs with a rank are the
// communicator's, other GPUs only forward); `nodes` identical nodes joined by a non-blocking
// network that reaches every network port.
MachineBound machineBound(const System& node, int nodes);

// What NCCL's ring graph promises: its channels times the slower of the bandwidths each channel
// was searched at (bwIntra on one node; min(bwIntra, bwInter) across nodes).
struct RingFigure {
  int channels = 0;
  float channelBw = 0;
  float busBw = 0;
};
RingFigure ringFigure(const Graph& ring, int nodes);

// "rings 4 x 20.0 GB/s = 80.0 GB/s of a 96.0 GB/s bound (83%): limited by …"
std::string boundLine(const RingFigure& figure, const CollectiveBound& bound);

}  // namespace weft::topo
