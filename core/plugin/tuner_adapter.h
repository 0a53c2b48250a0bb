// Adapters from each tuner ABI version (v2 … v5) to the newest form, TunerApi, the way NCCL
// 2.28.9's src/plugin/tuner/tuner_v*.cc wrap older plugins as v5:
//  - v5: called as is.
//  - v4: init(nRanks, nNodes, logger, &ctx): commId, the NVLink domain and the constants are
//    not passed (the constants stay the model's); destroy for finalize.
//  - v3: as v4; regBuff is dropped from getCollInfo.
//  - v2: no cost table. nvlsSupport = NVLS/Simple or NVLSTree/Simple is not IGNORE,
//    collNetSupport = CollNetChain/Simple is not IGNORE; a returned (algorithm, protocol) with
//    both in range sets that cell to 0.0 unless it is IGNORE; anything else is left alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "weft/tuner.h"

namespace weft::plugin {

// The v5 calls, returning the plugin's raw weft_result_t. `table` is the contiguous row-major
// float[numAlgo][numProto].
class TunerApi {
 public:
  virtual ~TunerApi() = default;
  virtual int abiVersion() const = 0;
  virtual const char* name() const = 0;
  virtual int init(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, weft_debug_logger_t logger,
                   weft_nvl_domain_info_v5_t* nvlDomain, weft_tuner_constants_v5_t* constants) = 0;
  virtual int getCollInfo(void* ctx, int collType, size_t nBytes, int numPipeOps, float* table, int numAlgo,
                          int numProto, int regBuff, int* nChannels) = 0;
  virtual int finalize(void* ctx) = 0;
};

// Wraps the table a plugin exports as ncclTunerPlugin_v<version> (2..5); null for another
// version. `table` must stay valid (its library loaded) for the adapter's lifetime.
std::unique_ptr<TunerApi> makeTunerAdapter(int version, const void* table);

// The v2 adapter's inputs, derived from a cost table as NCCL derives them (exposed for tests).
bool v2NvlsSupport(const float* table);
bool v2CollNetSupport(const float* table);

}  // namespace weft::plugin
