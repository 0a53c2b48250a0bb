#include "core/config/environment.h"

#include <unistd.h>

#include <mutex>
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
  // Taken once per process: NCCL also reads each variable once and caches it, and a snapshot
  // keeps every communicator of the process on the same values even if the application calls
  // setenv. A forked child is another process (launchers and tests set its variables after the
  // fork): it takes its own snapshot on first use.
  static std::mutex mutex;
  static EnvMap snapshot;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (owner != getpid()) {
    snapshot = environmentFrom(environ);
    owner = getpid();
  }
  return snapshot;
}

}  // namespace weft::config
