#include "core/tune/model.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/config/settings.h"

namespace weft::tune {

namespace {

// 12 GB/s: NCCL's PCI_BW, below which a ring gets 256 Simple threads.
constexpr double kPciBw = 12.0;

// ncclLoadParam's line, logged where NCCL first reads a set parameter.
void paramLine(const char* name, bool set, int64_t value) {
  if (set) WEFT_INFO(log::kEnv, "%s set by environment to %lld.", name, static_cast<long long>(value));
}

// getNthreads: a set value is checked against the slot's limits (each failure logged), an unset
// one (<= 0) takes the default.
int nThreadsFor(const char* name, int64_t env, int min, int max, int def) {
  int nt = static_cast<int>(env);  // NCCL passes the 64-bit parameter as an int
  if (nt <= 0) return def;
  if (nt % kWarpSize != 0) {
    WEFT_INFO(log::kGraph | log::kEnv, "Invalid %s %d (must be a multiple of %d)", name, nt, kWarpSize);
    nt = max;
  } else if (nt > max) {
    WEFT_INFO(log::kGraph | log::kEnv, "Invalid %s %d (maximum %d).", name, nt, max);
    nt = max;
  } else if (nt < min) {
    WEFT_INFO(log::kGraph | log::kEnv, "Invalid %s %d (minimum %d).", name, nt, min);
    nt = min;
  }
  return nt;
}

void setMaxThreads(const CommInputs& comm, const TuneSettings& s, Model& m) {
  const GraphInputs& ring = comm.graph(kRing);
  float ringBw = ring.bwIntra * static_cast<float>(ring.nChannels);
  int simpleDefault = static_cast<double>(ringBw) <= kPciBw ? 256 : kSimpleMaxNThreads;
  paramLine("NCCL_NTHREADS", s.nThreadsSet, s.nThreads);
  m.maxThreads[kRing][kSimple] = nThreadsFor("NCCL_NTHREADS", s.nThreads, 2 * kWarpSize, kSimpleMaxNThreads, simpleDefault);
  m.maxThreads[kTree][kSimple] =
      nThreadsFor("NCCL_NTHREADS", s.nThreads, 2 * kWarpSize, kSimpleMaxNThreads, kSimpleMaxNThreads);
  for (int a : {kCollnetDirect, kCollnetChain, kNvls, kNvlsTree}) m.maxThreads[a][kSimple] = kMaxNThreads;
  m.maxThreads[kRing][kLL] = m.maxThreads[kTree][kLL] =
      nThreadsFor("NCCL_NTHREADS", s.nThreads, 2 * kWarpSize, kLLMaxNThreads, kLLMaxNThreads);
  paramLine("NCCL_LL128_NTHREADS", s.ll128NThreadsSet, s.ll128NThreads);
  m.maxThreads[kRing][kLL128] = m.maxThreads[kTree][kLL128] =
      nThreadsFor("NCCL_LL128_NTHREADS", s.ll128NThreads, kLL128MaxNThreads / 4, kLL128MaxNThreads, kLL128MaxNThreads);
}

// Network post overhead in µs (NCCL_NET_OVERHEAD is in ns).
float netOverheadOf(const CommInputs& comm, const TuneSettings& s) {
  if (s.netOverhead != -2) return static_cast<float>(static_cast<double>(s.netOverhead) * .001);
  if (comm.cpuArch == kCpuArchX86 && comm.cpuVendor == kCpuVendorAmd) return 2.0f;
  return 1.0f;  // x86 Intel and everything else
}

// Everything the per-cell formulas share.
struct Scope {
  int nRanks = 0;
  int nNodes = 0;
  int compCapIndex = 0;
  float ppn = 0;
  double llMaxBw = 0;
  double perChMaxTreeBw = 0;
  double perChMaxRingLL128Bw = 0;
  double perChMaxTreeLL128Bw = 0;
  double perChMaxNVLSTreeBw = 0;
  int intraHw[kNumAlgorithms] = {};
  int hw[kNumAlgorithms] = {};
  bool pat = false;
};

int nStepsOf(int coll, int nRanks) {
  if (coll == kAllReduce) return 2 * (nRanks - 1);
  if (coll == kReduceScatter || coll == kAllGather) return nRanks - 1;
  return nRanks;
}

// The cells ncclTopoTuneModel computes; the others stay 0/0.
bool modelled(int coll, int a, int p, const Scope& sc) {
  if ((coll == kBroadcast || coll == kReduce) && a != kRing) return false;
  if ((coll == kReduceScatter || coll == kAllGather) && a != kPat && a != kRing && a != kNvls && a != kCollnetDirect)
    return false;
  if (coll == kAllReduce && a == kPat) return false;
  if ((a == kNvls || a == kNvlsTree) && p != kSimple) return false;
  if ((coll == kReduceScatter || coll == kAllGather) && a == kPat && (p != kSimple || !sc.pat)) return false;
  return true;
}

// The NVLS and NVLSTree bandwidth per channel (the caller checked nChannels >= 2).
float nvlsBw(const CommInputs& comm, const Scope& sc, int coll, int a) {
  const GraphInputs& g = comm.graph(a);
  float intraBw = g.bwIntra * kNvlsEfficiency[sc.compCapIndex] * static_cast<float>(g.nChannels - 1) /
                  static_cast<float>(g.nChannels);
  if (coll == kAllReduce) intraBw *= 2.0f;  // AllReduce pipelines two operations
  else intraBw *= (sc.ppn - 1) / sc.ppn;
  float interBw = g.bwInter * static_cast<float>((sc.nNodes <= 2 && a == kNvlsTree) ? 2 : 1);
  float cap = a == kNvlsTree ? static_cast<float>(sc.perChMaxNVLSTreeBw) : std::numeric_limits<float>::max();
  return std::min({intraBw, interBw, cap});
}

// CollNet or NVLS AllGather/ReduceScatter across nodes need the CollNet plugin's collective and
// one head per local rank.
bool collnetGatherUsable(const CommInputs& comm, int coll) {
  if (coll == kAllGather && !comm.collNetAllGather) return false;
  if (coll == kReduceScatter && !comm.collNetReduceScatter) return false;
  if (comm.collnetEnable == 0) return false;
  for (int lr : comm.nodeLocalRanks)
    if (lr > comm.collNetHeadsNum) return false;
  return true;
}

// busBw of one cell, converted to what NCCL stores (algBw except for non-ring AllGather and
// ReduceScatter). Float and double steps as in tuning.cc: the constants are doubles, the
// locals floats.
float bandwidthOf(const CommInputs& comm, const Scope& sc, int coll, int a, int p, int nsteps) {
  const GraphInputs& g = comm.graph(a);
  bool collnet = a == kCollnetDirect || a == kCollnetChain;
  float bw = sc.nNodes <= 2 || collnet ? g.bwIntra : g.bwInter;
  if (a == kNvls || a == kNvlsTree) bw = nvlsBw(comm, sc, coll, a);
  float nCh = static_cast<float>(g.nChannels);
  float busBw = nCh * bw;
  double dCh = static_cast<double>(g.nChannels);
  if (a == kRing && p == kLL) busBw = static_cast<float>(std::min(sc.llMaxBw, busBw * .5));
  if (a == kRing && p == kLL128) busBw = static_cast<float>(std::min(busBw * 0.92, dCh * sc.perChMaxRingLL128Bw));
  if (a == kTree && coll == kAllReduce) busBw = static_cast<float>(std::min(busBw * .92, dCh * sc.perChMaxTreeBw));
  if (a == kTree && p == kLL) busBw = static_cast<float>(std::min(busBw * 1.0 / 3.8, sc.llMaxBw));
  if (a == kTree && p == kLL128)
    busBw = static_cast<float>(
        std::min(busBw * (sc.nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), dCh * sc.perChMaxTreeLL128Bw));
  if (a == kTree && comm.maxTreePattern == kPatternTree) busBw = static_cast<float>(busBw * .85);
  if (a == kPat) busBw = static_cast<float>(busBw * .75);
  if (collnet && p != kSimple) busBw = 0;
  if (a == kCollnetDirect && p == kSimple) {
    if (coll == kAllGather || coll == kReduceScatter) {
      busBw = sc.ppn * std::min(g.bwIntra, g.bwInter * 0.9f);
    } else {
      // All GPUs need a local NIC for full speed: scale by the GPU/NIC ratio.
      float factor = static_cast<float>(sc.ppn / (1.0 * dCh));
      factor -= (factor - 1) / 2;
      busBw /= factor;
      if (comm.minCompCap >= 90) busBw = static_cast<float>(busBw * .85);
    }
  }
  if ((a == kNvls || a == kCollnetDirect) && p == kSimple && (coll == kAllGather || coll == kReduceScatter) &&
      comm.nNodes > 1 && !collnetGatherUsable(comm, coll))
    busBw = 0.0f;
  if (!(a != kRing && (coll == kAllGather || coll == kReduceScatter))) {
    float ratio = 1.0f;
    if (a == kRing || a == kNvls || a == kNvlsTree) ratio = static_cast<float>(ratio * ((1.0 * sc.nRanks) / nsteps));
    else ratio = static_cast<float>(ratio * .5);
    busBw *= ratio;
  }
  return busBw;
}

float latencyOf(const CommInputs& comm, const Constants& k, const Scope& sc, const TuneSettings& s, int coll, int a,
                int p, int nsteps) {
  const GraphInputs& g = comm.graph(a);
  float latency = static_cast<float>(k.baseLatencies[a][p]);
  float intraLat = static_cast<float>(k.hwLatencies[sc.intraHw[a]][a][p]);
  // With one rank per node the latencies are fully exposed: the tree's network latency.
  float interLat = static_cast<float>(sc.ppn == 1 ? k.hwLatencies[kHwNet][kTree][p] : k.hwLatencies[kHwNet][a][p]);
  interLat += g.latencyInter;
  if (p == kSimple) interLat += g.latencyInter;  // the flush
  int nNodes = sc.nNodes, nRanks = sc.nRanks;
  int perNode = nRanks / nNodes;
  switch (a) {
    case kRing: {
      float lat = static_cast<float>(k.hwLatencies[sc.hw[a]][a][p]);
      if (coll == kReduce || coll == kBroadcast) {
        if (g.sameChannels) {
          latency += lat;
        } else {
          if (p == kSimple) lat = static_cast<float>(k.hwLatencies[sc.hw[a]][kTree][p]);  // chunk latency
          latency += static_cast<float>(nsteps) * lat;
        }
      } else {
        // Inter-node rings still launch nsteps network operations.
        float netOverhead = 0.0f;
        if (nNodes > 1) {
          netOverhead = netOverheadOf(comm, s);
          if (p == kSimple) netOverhead *= 3;
        }
        intraLat = std::max(intraLat, netOverhead);
        int nInterSteps = nNodes == 1 ? 0 : coll == kAllReduce ? 2 * (nNodes - 1) : nNodes - 1;
        latency += static_cast<float>(nsteps - nInterSteps) * intraLat + static_cast<float>(nInterSteps) * interLat;
      }
      break;
    }
    case kTree:
      if (coll == kAllReduce)
        latency += 2 * (static_cast<float>(perNode - 1) * intraLat + static_cast<float>(log2i(nNodes)) * interLat);
      break;
    case kCollnetDirect:  // 0.4 µs of arity serialization per extra local rank
      latency = static_cast<float>(latency + (2 * (std::min(1, perNode - 1) * intraLat + (perNode - 1) * 0.4) + interLat));
      break;
    case kCollnetChain:
      latency += 2 * static_cast<float>(perNode - 1) * intraLat + interLat;
      break;
    case kNvls:
      latency = intraLat;
      if (nNodes > 1) latency += interLat;
      break;
    case kNvlsTree:
      latency += intraLat + 2 * static_cast<float>(log2i(nNodes)) * interLat;
      break;
    case kPat:
      if (coll == kAllGather || coll == kReduceScatter)
        latency = static_cast<float>(latency + (log2i(nNodes) * (interLat / 3.5) + nRanks * 2.8));
      break;
    default:
      break;
  }
  return latency;
}

Scope scopeOf(const CommInputs& comm, const Constants& k, const TuneSettings& s) {
  Scope sc;
  sc.nRanks = comm.nRanks;
  sc.nNodes = comm.nNodes;
  int cc = comm.minCompCap;
  sc.compCapIndex = cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
  int index2 = comm.nNodes <= 2 ? comm.nNodes - 1 : 2;
  // LL: one node looks at the GPU generation, several at the CPU vendor.
  int index1 = comm.nNodes == 1 ? sc.compCapIndex
               : (comm.cpuVendor == kCpuVendorAmd || comm.cpuVendor == kCpuMixed) ? 1 : 0;
  sc.llMaxBw = k.llMaxBws[index1][index2];
  sc.perChMaxTreeBw = k.perChMaxTreeBws[sc.compCapIndex][index2];
  sc.perChMaxRingLL128Bw = k.perChMaxRingLL128Bws[sc.compCapIndex][index2];
  sc.perChMaxTreeLL128Bw = k.perChMaxTreeLL128Bws[sc.compCapIndex][index2];
  sc.perChMaxNVLSTreeBw = k.perChMaxNVLSTreeBws[sc.compCapIndex][index2];
  sc.ppn = static_cast<float>(comm.nRanks) / static_cast<float>(comm.nNodes);
  for (int a = 0; a < kNumAlgorithms; ++a) {
    sc.intraHw[a] = comm.graph(a).typeIntra == kLinkNvl ? kHwNvlink : kHwPci;
    sc.hw[a] = comm.nNodes == 1 ? sc.intraHw[a] : kHwNet;
  }
  sc.pat = patEnabled(comm, s);
  return sc;
}

// NCCL reads the network overhead at the first ring AllGather cell across nodes, then PAT's
// setting at the first PAT cell: their lines come out in that order.
void logLoopParams(const CommInputs& comm, const TuneSettings& s) {
  if (comm.nNodes > 1) paramLine("NCCL_NET_OVERHEAD", s.netOverheadSet, s.netOverhead);
  paramLine("NCCL_PAT_ENABLE", s.patEnableSet, s.patEnable);
}

// "\n     Function | LL … | Tree …\n   Broadcast | …" as NCCL embeds it in one INFO line.
void logEnableMatrix(const Model& m) {
  std::string text = "\n     Function | ";
  for (int p = 0; p < kNumProtocols; ++p) text += strprintf("%8s  ", protoName(p));
  text += " | ";
  for (int a = 0; a < kNumAlgorithms; ++a) text += strprintf("%13s  ", algoName(a));
  text += "\n";
  for (int f = 0; f < kNumFuncs; ++f) {
    text += strprintf("%13s | ", funcName(f));
    for (int p = 0; p < kNumProtocols; ++p) text += strprintf("%8d  ", m.protoEnable[f][p]);
    text += " | ";
    for (int a = 0; a < kNumAlgorithms; ++a) text += strprintf("%13d  ", m.algoEnable[f][a]);
    text += "\n";
  }
  // NCCL builds the text in a 1024-byte buffer. Its final newline makes NCCL's log show a blank
  // line after the matrix; weft's logger drops a message's trailing newlines.
  if (text.size() > 1023) text.resize(1023);
  WEFT_INFO(log::kEnv, "Enabled NCCL Func/Proto/Algo Matrix:%s", text.c_str());
}

void applySettings(const CommInputs& comm, const TuneSettings& s, Model& m) {
  for (int f = 0; f < kNumFuncs; ++f) {
    for (int p = 0; p < kNumProtocols; ++p) {
      const auto& mask = s.protoMask[static_cast<size_t>(f)];
      m.protoEnable[f][p] = mask ? static_cast<int>((*mask >> p) & 1u) : (p == kLL128 ? 2 : 1);
    }
    for (int a = 0; a < kNumAlgorithms; ++a) {
      const auto& mask = s.algoMask[static_cast<size_t>(f)];
      m.algoEnable[f][a] = mask ? static_cast<int>((*mask >> a) & 1u) : 1;
    }
  }
  bool proto = !s.proto.empty() || s.emptyProto, algo = !s.algo.empty() || s.emptyAlgo;
  if (proto) WEFT_INFO(log::kEnv, "NCCL_PROTO set by environment to %s", s.proto.c_str());
  if (algo) WEFT_INFO(log::kEnv, "NCCL_ALGO set by environment to %s", s.algo.c_str());
  if (comm.rank == 0 && (algo || proto)) logEnableMatrix(m);
}

// LL128 left to NCCL (2): on only where every hop is known to keep 128-byte stores in order.
bool ll128Auto(const CommInputs& comm, const TuneSettings& s, const GraphInputs& g) {
  bool on = true;
  if (s.ll128C2c != 0 && comm.minCompCap >= 90) {
    on = on && g.typeInter <= kPathPxn;  // up to P2C and PXN on Hopper and later
  } else {
    on = on && g.typeInter <= kPathPxb;
    if (s.ll128C2c == 0 && comm.minCompCap >= 90)
      WEFT_INFO(log::kGraph,
                "Disabling LL128 over all PxN connections (PXB and C2C). This ensures that no C2C link will be used by LL128.");
  }
  on = on && g.typeIntra <= kPathNvb;
  on = on && comm.minCompCap == comm.maxCompCap;
  // NCCL's CUDA 11.8 exception (sm90, 2-rank ring AllReduce) depends on the CUDA it was built
  // with; weft models a build with CUDA 12 or later.
  on = on && comm.minCompCap >= 70;
  return on;
}

void applyDisables(const CommInputs& comm, const TuneSettings& s, Model& m) {
  bool c2cRead = false;
  int algoOn[kNumFuncs][kNumAlgorithms];
  for (int f = 0; f < kNumFuncs; ++f) {
    for (int a = 0; a < kNumAlgorithms; ++a) {
      bool off = (comm.nNodes == 1 && a == kNvlsTree) ||
                 (comm.collnetEnable == 0 &&
                  (a == kCollnetDirect || a == kCollnetChain || (a == kNvls && comm.nNodes > 1))) ||
                 (comm.nvsCount == 0 && a == kCollnetDirect);
      algoOn[f][a] = off ? 0 : m.algoEnable[f][a];
    }
  }
  for (int c = 0; c < kNumFuncs; ++c) {
    for (int a = 0; a < kNumAlgorithms; ++a) {
      for (int p = 0; p < kNumProtocols; ++p) {
        int pOn = m.protoEnable[c][p];
        if (pOn == 2 && p == kLL128) {
          if (!c2cRead) paramLine("NCCL_LL128_C2C", s.ll128C2cSet, s.ll128C2c);
          c2cRead = true;
          pOn = ll128Auto(comm, s, comm.graph(a)) ? 1 : 0;
        }
        if (pOn == 0 || algoOn[c][a] == 0) m.bandwidths[c][a][p] = 0;
      }
    }
  }
}

void logTable(const Model& m) {
  for (int block = 0; block < (kNumAlgorithms + 2) / 3; ++block) {
    std::string line = "  Algorithm   |";
    for (int ba = 0; ba < 3; ++ba) {
      int a = block * 3 + ba;
      if (a < kNumAlgorithms) line += strprintf(" %14s   %14s   %14s |", "", algoName(a), "");
    }
    WEFT_INFO(log::kTuning, "%s", line.c_str());
    // NCCL prints the protocol headers of all three slots, even past the last algorithm.
    line = "  Protocol    |";
    for (int ba = 0; ba < 3; ++ba)
      for (int p = 0; p < kNumProtocols; ++p) line += strprintf(" %14s |", protoName(p));
    WEFT_INFO(log::kTuning, "%s", line.c_str());
    line = " Max NThreads |";
    for (int ba = 0; ba < 3; ++ba) {
      int a = block * 3 + ba;
      if (a >= kNumAlgorithms) continue;
      for (int p = 0; p < kNumProtocols; ++p) line += strprintf(" %14d |", m.maxThreads[a][p]);
    }
    WEFT_INFO(log::kTuning, "%s", line.c_str());
    for (int c = 0; c < kNumFuncs; ++c) {
      line = strprintf("%13s |", funcName(c));
      for (int ba = 0; ba < 3; ++ba) {
        int a = block * 3 + ba;
        if (a >= kNumAlgorithms) continue;
        for (int p = 0; p < kNumProtocols; ++p)
          line += strprintf("%8.1f/%6.1f |", static_cast<double>(m.latencies[c][a][p]),
                            static_cast<double>(m.bandwidths[c][a][p]));
      }
      WEFT_INFO(log::kTuning, "%s", line.c_str());
    }
  }
}

// NCCL_THREAD_THRESHOLDS: up to six integers (Tree LL LL128 Simple, Ring LL LL128 Simple) read
// as sscanf("%ld …") reads them, stopping at the first that does not parse; negative keeps the
// default.
void setThreadThresholds(const CommInputs& comm, const TuneSettings& s, Model& m) {
  for (int a = 0; a < kNumAlgorithms; ++a) {
    m.threadThresholds[a][kLL] = kLLThreadThreshold;
    m.threadThresholds[a][kLL128] = kLL128ThreadThreshold;
    m.threadThresholds[a][kSimple] = kSimpleThreadThreshold;
  }
  m.threadThresholds[kRing][kLL] *= comm.nRanks;
  m.threadThresholds[kCollnetDirect][kSimple] = 512;
  m.threadThresholds[kCollnetChain][kSimple] = 512;
  if (!s.threadThresholds.empty() || s.emptyThreadThresholds) {
    WEFT_INFO(log::kEnv, "NCCL_THREAD_THRESHOLDS set by environment to %s", s.threadThresholds.c_str());
    const char* p = s.threadThresholds.c_str();
    for (int i = 0; i < 2 * kNumProtocols; ++i) {
      char* end = nullptr;
      errno = 0;
      long v = std::strtol(p, &end, 10);
      if (end == p) break;
      p = end;
      if (v >= 0) m.threadThresholds[i / kNumProtocols][i % kNumProtocols] = v;
    }
  }
  WEFT_INFO(log::kInit, "threadThresholds %ld/%ld/%ld | %ld/%ld/%ld | %ld | %ld",
            static_cast<long>(m.threadThresholds[kTree][kLL]), static_cast<long>(m.threadThresholds[kTree][kLL128]),
            static_cast<long>(m.threadThresholds[kTree][kSimple]), static_cast<long>(m.threadThresholds[kRing][kLL]),
            static_cast<long>(m.threadThresholds[kRing][kLL128]), static_cast<long>(m.threadThresholds[kRing][kSimple]),
            static_cast<long>(m.threadThresholds[kCollnetDirect][kSimple]),
            static_cast<long>(m.threadThresholds[kCollnetChain][kSimple]));
}

}  // namespace

bool patEnabled(const CommInputs& comm, const TuneSettings& s) {
  int enable = static_cast<int>(s.patEnable);  // an int in NCCL
  if (comm.minCompCap < 60) return false;      // CUDA atomics need sm60
  if (enable != 2) return enable != 0;
  return comm.nNodes == comm.nRanks && comm.netDeviceType == kNetDeviceHost;  // one GPU per node, no offload
}

Result<Model> tuneModel(const CommInputs& comm, const Constants& constants, const TuneSettings& s) {
  if (comm.nRanks < 1 || comm.nNodes < 1 || comm.nNodes > comm.nRanks)
    return invalidArgument(strprintf("tune: %d ranks on %d nodes", comm.nRanks, comm.nNodes));
  Model m;
  m.constants = constants;
  setMaxThreads(comm, s, m);
  if (comm.nRanks <= 1) return m;
  // POWER: Tree/Simple over PCI costs what the ring does, which favours trees there.
  if (comm.cpuArch == kCpuArchPower) m.constants.hwLatencies[kHwPci][kTree][kSimple] = m.constants.hwLatencies[kHwPci][kRing][kSimple];
  Scope sc = scopeOf(comm, m.constants, s);
  logLoopParams(comm, s);
  for (int coll = 0; coll < kNumFuncs; ++coll) {
    int nsteps = nStepsOf(coll, comm.nRanks);
    for (int a = 0; a < kNumAlgorithms; ++a) {
      for (int p = 0; p < kNumProtocols; ++p) {
        if (!modelled(coll, a, p, sc)) continue;
        // NVLS and NVLSTree need two channels at least.
        if ((a == kNvls || a == kNvlsTree) && comm.graph(a).nChannels < 2) continue;
        m.bandwidths[coll][a][p] = bandwidthOf(comm, sc, coll, a, p, nsteps);
        m.latencies[coll][a][p] = latencyOf(comm, m.constants, sc, s, coll, a, p, nsteps);
      }
    }
  }
  applySettings(comm, s, m);
  applyDisables(comm, s, m);
  if (comm.rank == 0) logTable(m);
  setThreadThresholds(comm, s, m);
  return m;
}

void logChannels(const CommInputs& comm) {
  WEFT_INFO(log::kInit, "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels per peer",
            comm.nChannels, comm.nChannels, comm.nvlsChannels, comm.p2pnChannels, comm.p2pnChannelsPerPeer);
}

namespace {

// `name` is unset for weft but the environment holds it with an empty value.
bool emptyInEnvironment(const config::Settings& settings, const char* name) {
  if (settings.isSet(name)) return false;
  for (const config::Value& v : settings.history(name))
    if (v.source == config::Source::kEnv && v.text.empty()) return true;
  return false;
}

}  // namespace

TuneSettings TuneSettings::fromSettings(const config::Settings& settings) {
  TuneSettings s;
  s.nThreads = settings.integer("NCCL_NTHREADS");
  s.ll128NThreads = settings.integer("NCCL_LL128_NTHREADS");
  s.patEnable = settings.integer("NCCL_PAT_ENABLE");
  s.netOverhead = settings.integer("NCCL_NET_OVERHEAD");
  s.ll128C2c = settings.integer("NCCL_LL128_C2C");
  s.algo = settings.string("NCCL_ALGO");
  s.proto = settings.string("NCCL_PROTO");
  s.threadThresholds = settings.string("NCCL_THREAD_THRESHOLDS");
  s.emptyAlgo = emptyInEnvironment(settings, "NCCL_ALGO");
  s.emptyProto = emptyInEnvironment(settings, "NCCL_PROTO");
  s.emptyThreadThresholds = emptyInEnvironment(settings, "NCCL_THREAD_THRESHOLDS");
  s.nThreadsSet = settings.isSet("NCCL_NTHREADS");
  s.ll128NThreadsSet = settings.isSet("NCCL_LL128_NTHREADS");
  s.patEnableSet = settings.isSet("NCCL_PAT_ENABLE");
  s.netOverheadSet = settings.isSet("NCCL_NET_OVERHEAD");
  s.ll128C2cSet = settings.isSet("NCCL_LL128_C2C");
  config::Selection algos = settings.algorithms();
  config::Selection protos = settings.protocols();
  for (size_t f = 0; f < kNumFuncs; ++f) {
    s.algoMask[f] = algos.perFunc[f];
    s.protoMask[f] = protos.perFunc[f];
  }
  return s;
}

}  // namespace weft::tune
