// NCCL 2.28.9's ncclTopoTuneModel: per collective, algorithm and protocol, a latency (µs) and a
// bandwidth (GB/s), the thread limits and thresholds, and which cells the settings and the
// machine disable. Inputs are plain values (the communicator's fields after connect and the
// graphs after the cross-rank merge), so the offline tool and a communicator run the same code.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/tune/constants.h"

namespace weft::config {
class Settings;
}

namespace weft::tune {

// One graph as the model reads it (ncclTopoGraph after AllGather3's merge).
struct GraphInputs {
  int pattern = 0;
  int nChannels = 0;
  int sameChannels = 0;
  float bwIntra = 0;
  float bwInter = 0;
  float latencyInter = 0;
  int typeIntra = 0;  // PATH_* values
  int typeInter = 0;
  int crossNic = 0;
};

// Graph slots of NCCL's comm->graphs[]: the first five algorithms. NVLSTree reads the NVLS
// graph and PAT the tree graph (init.cc's graphs[] aliases).
inline constexpr int kNumGraphs = 5;
inline int graphOf(int algo) { return algo == kNvlsTree ? kNvls : algo == kPat ? kTree : algo; }

// CPU codes (graph.h).
inline constexpr int kCpuArchX86 = 1;
inline constexpr int kCpuArchPower = 2;
inline constexpr int kCpuVendorIntel = 1;
inline constexpr int kCpuVendorAmd = 2;
inline constexpr int kCpuMixed = 4;
inline constexpr int kNetDeviceHost = 0;
inline constexpr int kPatternTree = 3;  // NCCL_TOPO_PATTERN_TREE
inline constexpr int kPathNvb = 2, kPathPxb = 5, kPathPxn = 7;
inline constexpr int kLinkNvl = 1;

// The communicator fields the model and the per-size choice read (rank 0's view).
struct CommInputs {
  int rank = 0;
  int nRanks = 1;
  int nNodes = 1;
  int localRanks = 1;
  int maxLocalRanks = 1;
  int minLocalRanks = 1;
  int minCompCap = 0;
  int maxCompCap = 0;
  int cpuArch = kCpuArchX86;
  int cpuVendor = kCpuVendorIntel;
  int netDeviceType = kNetDeviceHost;
  int maxTreePattern = 0;
  int nChannels = 1;  // after postset (doubling, limits)
  int nvlsSupport = 0;
  int nvlsChannels = 0;
  int collnetEnable = 0;
  int collNetHeadsNum = 0;
  bool collNetAllGather = false;      // the CollNet plugin has iallgather
  bool collNetReduceScatter = false;  // ... and ireducescatter
  std::vector<int> nodeLocalRanks;    // by node (CollNet/NVLS AllGather and ReduceScatter only)
  int collnetDirectHeads = 0;         // channels[0].collnetDirect.nHeads
  int nvsCount = 0;                   // NVSwitch nodes of the rank's system
  int p2pnChannels = 0;
  int p2pnChannelsPerPeer = 0;
  std::array<GraphInputs, kNumGraphs> graphs{};  // by Algo value: Tree, Ring, CollNetDirect, CollNetChain, NVLS

  const GraphInputs& graph(int algo) const { return graphs[static_cast<size_t>(graphOf(algo))]; }
};

// The settings the model reads, as NCCL reads them (values from config::Settings).
struct TuneSettings {
  int64_t nThreads = -2;        // NCCL_NTHREADS
  int64_t ll128NThreads = -2;   // NCCL_LL128_NTHREADS
  int64_t patEnable = 2;        // NCCL_PAT_ENABLE
  int64_t netOverhead = -2;     // NCCL_NET_OVERHEAD, ns
  int64_t ll128C2c = 1;         // NCCL_LL128_C2C
  std::string algo;             // NCCL_ALGO as written ("" unset)
  std::string proto;            // NCCL_PROTO
  std::string threadThresholds; // NCCL_THREAD_THRESHOLDS
  // The three above present in the environment but empty: NCCL reads them with getenv, which
  // returns "", so it still logs "NCCL_ALGO set by environment to " (and the enable matrix for
  // NCCL_ALGO/NCCL_PROTO), where an empty NCCL_PARAM integer counts as unset.
  bool emptyAlgo = false, emptyProto = false, emptyThreadThresholds = false;
  // Which integer settings a source set: NCCL logs "NAME set by environment to V." when it
  // first reads one of them (ncclLoadParam).
  bool nThreadsSet = false, ll128NThreadsSet = false, patEnableSet = false, netOverheadSet = false,
       ll128C2cSet = false;
  // enable[f][i] per NCCL_ALGO / NCCL_PROTO: nullopt where the value says nothing about f.
  std::array<std::optional<uint32_t>, kNumFuncs> algoMask{};
  std::array<std::optional<uint32_t>, kNumFuncs> protoMask{};

  static TuneSettings fromSettings(const config::Settings& settings);
};

// What ncclTopoTuneModel leaves in the communicator.
struct Model {
  int maxThreads[kNumAlgorithms][kNumProtocols] = {};
  float bandwidths[kNumFuncs][kNumAlgorithms][kNumProtocols] = {};
  float latencies[kNumFuncs][kNumAlgorithms][kNumProtocols] = {};
  int64_t threadThresholds[kNumAlgorithms][kNumProtocols] = {};
  // The enable matrices after the settings, before the machine's disables (what NCCL prints);
  // LL128 left to NCCL is 2.
  int protoEnable[kNumFuncs][kNumProtocols] = {};
  int algoEnable[kNumFuncs][kNumAlgorithms] = {};
  Constants constants{};  // as the model used them (plugin edits and the POWER quirk applied)
};

// ncclPatEnable.
bool patEnabled(const CommInputs& comm, const TuneSettings& s);

// Runs the model. `constants` are the (possibly plugin-edited) constants. Logs NCCL's lines:
// invalid thread counts (GRAPH|ENV), the NCCL_PROTO/NCCL_ALGO lines and matrix (ENV), the
// latency/bandwidth table (TUNING, rank 0) and threadThresholds (INIT).
Result<Model> tuneModel(const CommInputs& comm, const Constants& constants, const TuneSettings& settings);

// The "N coll channels, N collnet channels, …" line init logs after the model (INIT).
void logChannels(const CommInputs& comm);

}  // namespace weft::tune
