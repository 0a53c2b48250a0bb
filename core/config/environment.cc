#include "core/config/environment.h"

#include <string_view>

#include "core/base/strings.h"

extern char** environ;

namespace weft::config {

EnvMap environmentFrom(const char* const* envp) {
  EnvMap out;
  for (const char* const* e = envp; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = kv.substr(0, eq);
    if (!startsWith(name, "NCCL_") && !startsWith(name, "WEFT_")) continue;
    out.emplace(std::string(name), std::string(kv.substr(eq + 1)));
  }
  return out;
}

const EnvMap& processEnvironment() {
  // Taken once: NCCL also reads each variable once and caches it, and a snapshot keeps every
  // communicator of the process on the same values even if the application calls setenv.
  static const EnvMap kSnapshot = environmentFrom(environ);
  return kSnapshot;
}

}  // namespace weft::config
