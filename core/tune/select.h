// The per-operation choice NCCL 2.28.9 makes at enqueue time: the time of each (algorithm,
// protocol) cell (ncclTopoGetAlgoTime), the cost table a tuner plugin sees, the cheapest cell,
// and the channels and threads of the choice (topoGetAlgoInfo, getAlgoInfo).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/status.h"
#include "core/tune/model.h"
#include "core/tune/tuner_hook.h"

namespace weft::tune {

// One operation as enqueue sees it. `bytes` is what the model receives: for AllGather and
// ReduceScatter the whole gathered buffer (nRanks x the per-rank size).
struct Operation {
  int func = kAllReduce;
  std::size_t bytes = 0;
  int numPipeOps = 1;
  bool fp8 = false;          // e4m3/e5m2: lossy ring reductions are relegated
  bool nvlsReduction = true; // ncclNvlsSupported(op, type) (true for float32 sum)
  bool preMulSumOrPostDiv = false;  // ReduceScatter with PreMulSum or SumPostDiv: no PAT
  int collNetSupport = 0;    // CollNet usable for this op and type
  int regBuff = 0;           // both buffers registered (handed to the tuner only)
  // Algorithms the caller can run (bit = Algo value): the others' cells stay IGNORE, before a
  // tuner sees the table (weft's host path runs Ring and Tree only). NCCL: all.
  uint32_t algoMask = (1u << kNumAlgorithms) - 1;
  const char* typeName = nullptr;  // NCCL's name of the datatype for errors; null: float32 (fp8: e4m3)
};

using CostTable = float[kNumAlgorithms][kNumProtocols];

// ncclTopoGetAlgoTime: µs, or -1 when the model gives the cell no bandwidth.
float algoTime(const CommInputs& comm, const Model& model, int func, int algo, int proto, std::size_t bytes,
               int numPipeOps);

// updateCollCostTable: every cell the communicator may use for `op`, kIgnore elsewhere.
void costTable(const CommInputs& comm, const Model& model, const Operation& op, CostTable& table);

struct Choice {
  int algo = -1;
  int proto = -1;
  float timeUs = 0;     // the table's value of the choice
  int nMaxChannels = 0; // channel budget (after a tuner's override)
  int nThreads = 0;     // nWarps * 32
};

// getAlgoInfo: the table, the tuner's edits (when `hook` is not null), the cheapest cell and
// its channels and threads. Fails like NCCL when no cell is usable (invalid usage when
// NCCL_ALGO/NCCL_PROTO are set, internal error otherwise) and when the tuner fails.
// `table` receives the table the choice was made from (after the tuner).
Result<Choice> choose(const CommInputs& comm, const Model& model, const TuneSettings& settings, const Operation& op,
                      TunerHook* hook, CostTable* table = nullptr);

}  // namespace weft::tune
