// The seam between NCCL's cost model (core/tune) and a tuner plugin (core/plugin's tuner
// loader). The model fills a cost table per operation; a hook may rewrite it and the channel
// budget before the minimum is taken, exactly where NCCL's enqueue calls getCollInfo.
#pragma once

#include <cstddef>

#include "core/base/status.h"

namespace weft::tune {

// NCCL 2.28's table dimensions (nccl_tuner.h): algorithms Tree, Ring, CollNetDirect,
// CollNetChain, NVLS, NVLSTree, PAT; protocols LL, LL128, Simple; the five modelled functions
// Broadcast, Reduce, AllGather, ReduceScatter, AllReduce (ncclFunc_t values 0..4).
inline constexpr int kNumAlgorithms = 7;
inline constexpr int kNumProtocols = 3;
inline constexpr int kNumFuncs = 5;
// A cell NCCL ignores (NCCL_ALGO_PROTO_IGNORE): disabled, unsupported or not modelled.
inline constexpr float kIgnore = -1.0f;

// One operation as the cost model saw it.
struct CollQuery {
  int func = 0;          // ncclFunc_t value, 0..4
  std::size_t bytes = 0;  // what the model receives (the whole gathered buffer for AllGather/ReduceScatter)
  int numPipeOps = 1;
  int regBuff = 0;
};

// A tuner, as the communicator and `weft tune` hold it. `cost` is NCCL's contiguous
// row-major float[kNumAlgorithms][kNumProtocols] in µs (kIgnore where unavailable);
// `nChannels` is the channel budget, 0 on entry meaning "keep the model's". Returning an
// error fails the operation the way NCCL fails it.
class TunerHook {
 public:
  virtual ~TunerHook() = default;
  virtual Status getCollInfo(const CollQuery& query, float* cost, int* nChannels) = 0;
};

}  // namespace weft::tune
