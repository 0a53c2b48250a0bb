// The net plugin conformance suite: checks that drive any plugin through its C ABI only (via the
// loader and its version adapters), needing no GPU and no communicator. Each check runs in a
// child process of its own, so a plugin that crashes or blocks fails that check and nothing
// else: the parent kills a child that overruns its time limit. A check fails too when the
// plugin logs a WARN the check did not provoke on purpose.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace weft::plugin::conformance {

enum class Outcome { kPass, kFail, kSkip };
const char* outcomeName(Outcome o);  // "PASS", "FAIL", "SKIP"

struct CheckResult {
  Outcome outcome = Outcome::kFail;
  std::string reason;  // why it failed or was skipped; what was measured when it passed
  double seconds = 0;
};

struct Options {
  int dev = 0;
  double timeoutSeconds = 120;  // per check
  size_t maxBytes = size_t{1} << 30;  // largest message the sizes check sends (also capped by maxP2pBytes)
  // Environment set in each check's process before the plugin loads (NCCL_SOCKET_IFNAME=lo, …).
  std::vector<std::pair<std::string, std::string>> env;
};

struct CheckInfo {
  const char* name;  // "sizes"
  const char* what;  // one line for --help and reports
};
const std::vector<CheckInfo>& checks();

// Runs check `name` on the plugin named like an NCCL_NET_PLUGIN entry (or a path), in a child
// process, and reports its outcome. Never throws; a crash or timeout is a FAIL with the reason.
CheckResult runCheck(const std::string& plugin, const std::string& name, const Options& options);

}  // namespace weft::plugin::conformance
