// Paths between the nodes of a System (NCCL 2.28 paths.cc): widest breadth-first paths to every
// CPU, GPU, NET and NVSwitch, the peer-to-peer and GPU Direct RDMA decisions that reroute
// some of them through a CPU, PXN paths through an NVLink peer, and trimming of the GPUs this
// rank cannot reach.
#pragma once

#include <cstdint>
#include <vector>

#include "core/base/status.h"
#include "core/topo/params.h"
#include "core/topo/system.h"

namespace weft::topo {

// What the communicator tells the path stage (NCCL passes its comm): this rank, the number of
// ranks, and whether GPUs of this system may talk through P2P or shared memory at all. All GPUs
// of a System share one host here (one System per node).
struct CommView {
  int rank = 0;
  int nRanks = 1;
};

// Computes every path. With a CommView, GPUs that can reach each other neither by P2P nor by
// shared memory get a PATH_NET path (to be trimmed). Logs NCCL's GPU Direct RDMA lines.
Status computePaths(System& system, const Params& params, const CommView* comm);

// Removes the GPUs not reachable from `comm.rank`'s GPU below PATH_NET and sets system.inter.
// Paths must be recomputed afterwards.
Status trimSystem(System& system, const CommView& comm);

// ncclTopoCheckP2p for two ranks of this system (same host).
struct P2pCheck {
  bool p2p = false;
  bool read = false;
  int intermediateRank = -1;
};
P2pCheck checkP2p(const System& system, const Params& params, int rank1, int rank2);

// ncclTopoCheckGdr. Logs the decision as NCCL does.
enum class GdrMode { kDisable = 0, kDefault = 1, kPci = 2 };
Result<GdrMode> checkGdr(const System& system, const Params& params, int rank, int64_t netId, bool read);

// ncclTopoCheckNet: true when both GPUs reach a NIC at PXB or better faster than each other.
bool checkNet(const System& system, const Params& params, int rank1, int rank2);

// The CPU closest to GPU `gpu` (fewest hops), or -1.
int localCpu(const System& system, int gpu);

// Indices of the nodes of kind `resultType` with the best (bw, then type) path from node
// (type, index); `pathType` receives that type.
std::vector<int> localNodes(const System& system, NodeType type, int index, NodeType resultType,
                            PathType* pathType = nullptr);

// ncclTopoGetLocalNet: the NET index a rank's channel uses (-1 when the GPU has no path to a NET).
int localNet(const System& system, const Params& params, int rank, int channelId);
// ncclTopoGetLocalGpu: the GPU index whose channels use NET `net` first, or -1.
int localGpu(const System& system, const Params& params, int net);
// ncclTopoGetIntermediateRank for the GPU -> NET path of `rank`.
Result<int> intermediateRank(const System& system, int rank, int net);

// Smallest and largest path type from any GPU to nodes of kind `type` (GPU pairs exclude self).
int gpuMinPath(const System& system, NodeType type);
int gpuMaxPath(const System& system, NodeType type);
// Exactly two NVLink domains of more than one GPU (e.g. two NVLink islands joined by QPI).
bool splitNvLink(const System& system);
// Minimum and maximum compute capability over the GPUs (0 when there are none).
int minCompCap(const System& system);
int maxCompCap(const System& system);

}  // namespace weft::topo
