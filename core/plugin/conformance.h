// The net plugin conformance suite: checks that drive any plugin through its C ABI only (via the
// loader and its version adapters), needing no GPU and no communicator. Each check runs in a
// child process of its own, so a plugin that crashes or blocks fails that check and nothing
// else: the parent kills a child that overruns its time limit.
//
// The checks use a plugin exactly as NCCL 2.28 does (memory handles from regMr on every isend
// and irecv, sends and receives matched in posting order, requests tested oldest first, speed 0
// taken as 10000 Mbps, WARN lines printed and not held against the plugin), and each failure
// says what NCCL would do with the plugin's answer. weft's own, stricter expectations are
// extras: whole checks marked `strictExtra`, and expectations inside the others. Without
// `strict` they are reported (Outcome::kNote, or a note on a passing check) but never fail.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace weft::plugin::conformance {

// kNote: a strict extra that did not hold, in a run without `strict`: reported, not a failure.
enum class Outcome { kPass, kFail, kSkip, kNote };
const char* outcomeName(Outcome o);  // "PASS", "FAIL", "SKIP", "NOTE"

struct CheckResult {
  Outcome outcome = Outcome::kFail;
  std::string reason;  // why it failed or was skipped; what was measured when it passed
  // Strict expectations that did not hold in a run without `strict` (each says what NCCL does
  // instead), and WARN lines the plugin logged.
  std::vector<std::string> notes = {};
  double seconds = 0;
};

// Whether the plugin's process gets weft's CUDA stand-in (cuda_standin.h).
enum class CudaStandin { kAuto, kOff, kOn };

struct Options {
  int dev = 0;
  double timeoutSeconds = 120;  // per check
  size_t maxBytes = size_t{1} << 30;  // largest message the sizes check sends (also capped by maxP2pBytes)
  // Environment set in each check's process before the plugin loads (NCCL_SOCKET_IFNAME=lo, …).
  std::vector<std::pair<std::string, std::string>> env;
  // Strict extras fail (and an unexpected WARN line fails a check), instead of being notes.
  bool strict = false;
  // kAuto: the stand-in only when this machine has no working CUDA driver.
  CudaStandin cuda = CudaStandin::kAuto;
};

struct CheckInfo {
  const char* name;  // "sizes"
  const char* what;  // one line for --help and reports
  bool strictExtra;  // beyond NCCL's usage: fails only with --strict
};
const std::vector<CheckInfo>& checks();

// Which file an NCCL_NET_PLUGIN-style name loads, in a check's environment (a child process).
struct PluginIdentity {
  std::string name;    // the table's name: "Libfabric"
  std::string path;    // the file the dynamic linker loaded
  std::string symbol;  // "ncclNetPlugin_v11"
  std::string cuda;    // whether the CUDA stand-in is in front of it, and why
};
Result<PluginIdentity> identifyPlugin(const std::string& plugin, const Options& options);

// Runs check `name` on the plugin named like an NCCL_NET_PLUGIN entry (or a path), in a child
// process, and reports its outcome. Never throws; a crash or timeout is a FAIL with the reason.
CheckResult runCheck(const std::string& plugin, const std::string& name, const Options& options);

}  // namespace weft::plugin::conformance
