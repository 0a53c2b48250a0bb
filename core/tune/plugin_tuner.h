// The tuner plugin of one communicator, loaded as NCCL 2.28.9's init loads it: right before the
// model (init.cc: ncclTopoInitTunerConstants, ncclTunerPluginLoad, tuner->init, then
// ncclTopoTuneModel), so that a v5 plugin's init can rewrite the constants the model reads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/config/settings.h"
#include "core/plugin/tuner_loader.h"
#include "core/tune/model.h"
#include "core/tune/tuner_hook.h"

namespace weft::tune {

struct CommTuner {
  std::unique_ptr<TunerHook> hook;  // null: no tuner (none asked for, or dropped under WEFT_TUNER_FALLBACK=allow)
  std::string name;                 // "weft-yaml (v5, libnccl-tuner-weft.so)"; empty without a tuner
};

// Loads and initialises the tuner NCCL_TUNER_PLUGIN names (plugin::selectTuner: NCCL's loader
// lines, WEFT_TUNER_FALLBACK) for the communicator `comm` describes: init receives `commId`,
// nRanks, nNodes, the NVLink domain {nNodes, minLocalRanks, maxLocalRanks} as NCCL fills it, and
// `constants`, which a v5 plugin may rewrite (they are left as they were when init fails). The
// tuner's channel counts are clamped to comm.nChannels. Fails only under WEFT_TUNER_FALLBACK=deny
// (or on a bad fallback value). The hook's finalize runs when it is destroyed.
Result<CommTuner> loadCommTuner(const CommInputs& comm, const config::Settings& settings, Constants& constants,
                                const plugin::TunerLoaderOptions& options, uint64_t commId = 0);

}  // namespace weft::tune
