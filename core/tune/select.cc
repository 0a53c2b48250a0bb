#include "core/tune/select.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::tune {

namespace {

// Trees stray from the model at medium sizes; NCCL corrects them per power of two, 64 B to 256 MiB.
constexpr float kTreeCorrection[kNumProtocols][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

// The cells enqueue never offers for this operation, whatever the model says.
bool skipped(const CommInputs& comm, const Operation& op, int a, bool nvlsSupport) {
  if ((a == kCollnetDirect || a == kCollnetChain) && op.collNetSupport != 1) return true;
  // CollNet is only supported up to 8 local GPUs.
  if ((a == kCollnetDirect || a == kCollnetChain) && comm.maxLocalRanks > kMaxDirectArity + 1) return true;
  if ((a == kNvls || a == kNvlsTree) && (!nvlsSupport || (op.func != kAllReduce && comm.localRanks > kMaxNvlsArity)))
    return true;
  if (a == kNvls && op.collNetSupport != 1 && comm.nNodes > 1) return true;
  if (a == kPat && op.func == kReduceScatter && op.preMulSumOrPostDiv) return true;
  return false;
}

// topoGetAlgoInfo's channel and thread tuning of the chosen cell.
void channelsAndThreads(const CommInputs& comm, const Model& model, std::size_t nBytes, Choice& c) {
  int nc = comm.nChannels;
  int nt = model.maxThreads[c.algo][c.proto];
  int threshold = static_cast<int>(model.threadThresholds[c.algo][c.proto]);
  // NCCL multiplies ints (a product past INT_MAX wraps, as it does in practice) and compares the
  // result, sign-extended to size_t, with the byte count.
  auto below = [nBytes](std::initializer_list<int> factors) {
    uint32_t product = 1;
    for (int f : factors) product *= static_cast<uint32_t>(f);
    auto asInt = static_cast<int32_t>(product);
    return nBytes < static_cast<std::size_t>(static_cast<int64_t>(asInt));
  };
  if (c.algo == kCollnetDirect) {
    int ncSwitch = 16;
    bool more = true;
    while (ncSwitch >= 1 && more) {
      while ((more = below({nc, nt, comm.collnetDirectHeads, threshold})) && nc > ncSwitch) {
        if (nc == ncSwitch + ncSwitch / 2) threshold /= 2;
        nc--;
      }
      ncSwitch /= 2;
    }
  } else if (c.algo == kNvls || c.algo == kNvlsTree) {
    // NVLS needs no more than its own channels for peak bandwidth.
    nc = comm.nNodes > 1 && c.algo == kNvls ? std::min(comm.nvlsChannels, comm.nChannels) : comm.nvlsChannels;
  } else {
    while (below({nc, nt, threshold}) && nc >= 2) nc--;
  }
  if (c.algo != kNvls && c.algo != kNvlsTree && c.algo != kCollnetDirect) {
    while (below({nc, nt, threshold}) && nt % 128 == 0) nt /= 2;
  }
  if (c.proto == kSimple) {
    if (c.algo == kRing) nt += kWarpSize;      // a sync warp
    if (c.algo == kTree) nt += 4 * kWarpSize;  // the split thread model
  }
  if (nt / kWarpSize < 3) nt = 3 * kWarpSize;
  if (c.algo == kTree || c.algo == kPat) nt = kMaxNThreads;  // they always use every thread
  c.nMaxChannels = nc;
  c.nThreads = nt / kWarpSize * kWarpSize;
}

}  // namespace

float algoTime(const CommInputs& comm, const Model& model, int func, int algo, int proto, std::size_t bytes,
               int numPipeOps) {
  float bw = model.bandwidths[func][algo][proto];
  float lat = model.latencies[func][algo][proto];
  if (bw == 0) return -1.0f;
  int logSize = log2i(bytes >> 6);
  if (algo == kTree && func == kAllReduce && logSize >= 0 && logSize < 23) bw *= kTreeCorrection[proto][logSize];
  std::size_t perChannelRank = static_cast<std::size_t>(comm.nChannels) * static_cast<std::size_t>(comm.nRanks);
  if (algo == kRing && proto == kSimple && comm.nNodes > 1 && func == kAllReduce && perChannelRank > 0 &&
      bytes / perChannelRank >= 64) {
    lat = static_cast<float>(lat * (comm.minCompCap < 80 ? 1.9 : 1.4));  // the ring's plateau
  }
  // Batched operations share the launch latency, except on rings.
  int latCount = algo == kRing ? numPipeOps : (numPipeOps + kMaxDevWorkBatchColls - 1) / kMaxDevWorkBatchColls;
  return lat * static_cast<float>(latCount) + static_cast<float>(bytes) / (1000 * bw);
}

void costTable(const CommInputs& comm, const Model& model, const Operation& op, CostTable& table) {
  for (auto& row : table) std::fill(std::begin(row), std::end(row), kIgnore);
  if (comm.nRanks == 1) {
    table[kRing][kSimple] = 0.0f;
    return;
  }
  bool nvlsSupport = comm.nvlsSupport != 0 && (op.nvlsReduction || op.func == kAllGather);
  for (int a = 0; a < kNumAlgorithms; ++a) {
    if ((op.algoMask >> a & 1u) == 0 || skipped(comm, op, a, nvlsSupport)) continue;
    for (int p = 0; p < kNumProtocols; ++p) {
      table[a][p] = algoTime(comm, model, op.func, a, p, op.bytes, op.numPipeOps);
      // Deep fp8 ring reductions lose precision: least preferred (a disabled -1 becomes -1024).
      if (op.fp8 && a == kRing && comm.nRanks > 8) table[a][p] *= 1024.0f;
    }
  }
}

Result<Choice> choose(const CommInputs& comm, const Model& model, const TuneSettings& settings, const Operation& op,
                      TunerHook* hook, CostTable* out) {
  CostTable table;
  costTable(comm, model, op, table);
  int nMaxChannels = 0;
  if (hook != nullptr) {
    CollQuery q{.func = op.func, .bytes = op.bytes, .numPipeOps = op.numPipeOps, .regBuff = op.regBuff};
    WEFT_TRY_CTX(hook->getCollInfo(q, &table[0][0], &nMaxChannels), "tuner getCollInfo");
  }
  if (out != nullptr) std::copy(&table[0][0], &table[0][0] + kNumAlgorithms * kNumProtocols, &(*out)[0][0]);
  Choice c;
  float minTime = 3600000000.0f;
  for (int a = 0; a < kNumAlgorithms; ++a) {
    for (int p = 0; p < kNumProtocols; ++p) {
      if (table[a][p] == kIgnore) continue;
      if (table[a][p] >= 0.0f && table[a][p] < minTime) {
        c.algo = a;
        c.proto = p;
        minTime = table[a][p];
      }
    }
  }
  if (c.algo < 0) {
    std::string why = strprintf("no algorithm/protocol available for function %s with datatype %s.", funcName(op.func),
                                op.typeName != nullptr ? op.typeName : op.fp8 ? "ncclFloat8e4m3" : "ncclFloat32");
    if (!settings.algo.empty()) why += strprintf(" NCCL_ALGO was set to %s.", settings.algo.c_str());
    if (!settings.proto.empty()) why += strprintf(" NCCL_PROTO was set to %s.", settings.proto.c_str());
    WEFT_WARN("Error : %s", why.c_str());
    bool env = !settings.algo.empty() || !settings.proto.empty();
    return Status(env ? Code::kInvalidUsage : Code::kInternalError, why);
  }
  c.timeUs = minTime;
  channelsAndThreads(comm, model, op.bytes, c);
  if (nMaxChannels != 0) c.nMaxChannels = nMaxChannels;  // the tuner's budget, after NCCL chose the threads
  return c;
}

}  // namespace weft::tune
