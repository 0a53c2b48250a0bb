// The process environment, as settings see it: a snapshot of the NCCL_* and WEFT_* variables
// taken once, on first use. It is the only process-wide state of core/config; everything else
// takes an explicit environment map (loader.h's Inputs), so tests never touch the real one.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace weft::config {

using EnvMap = std::map<std::string, std::string, std::less<>>;

// NCCL_* and WEFT_* variables of the process environment when this was first called.
const EnvMap& processEnvironment();

// The NCCL_* and WEFT_* entries of an environ-style array ("NAME=value", null-terminated).
EnvMap environmentFrom(const char* const* envp);

}  // namespace weft::config
