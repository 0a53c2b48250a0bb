// Output helpers shared by the weft sub-commands.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/config/settings.h"
#include "core/topo/xml.h"

namespace weft::tool {

// Prints each line as NCCL logs it offline: "[rank] NCCL INFO <line>".
void printInfo(int rank, const std::vector<std::string>& lines);
void printInfo(int rank, const std::string& line);

// Reports a failed operation on stderr ("weft topo show: <message>") and returns the exit code.
int fail(const char* what, const Status& status);

// Sets the process logger up for an offline command whose output is NCCL's INFO lines: "[rank]"
// prefix, lines on stdout (sharing its buffer), INFO of `defaultMask` unless NCCL_DEBUG /
// NCCL_DEBUG_SUBSYS say otherwise; only warnings, on stderr, with `quiet` (JSON output, --quiet).
void configureOfflineLogger(uint64_t defaultMask, bool quiet);

// Settings as a communicator on `nodes` identical nodes of `topo` would see them: environment,
// YAML policy (with the profiles matching what is known offline), NCCL conf files.
Result<config::Settings> offlineSettings(const topo::TopoXml& topo, int nodes);

// weft's YAML tuner matches `arch` rules against the sm of the GPU CUDA reports; offline there
// is none, so the topology's (smallest) sm is handed to it as WEFT_TUNER_GPU_ARCH, unless a
// setting (environment or policy) already gives one. Call before loading the tuner.
void exportOfflineTunerArch(const topo::TopoXml& topo, const config::Settings& settings);

}  // namespace weft::tool
