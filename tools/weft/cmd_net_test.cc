// `weft net-test PLUGIN`: runs the net plugin conformance suite on one plugin, through its C ABI
// only, and prints PASS/FAIL/SKIP per check with the reason. No GPU and no communicator needed.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/plugin/conformance.h"
#include "tools/weft/commands.h"

namespace weft::tool {
namespace {

// Exit status when every check was skipped (e.g. the plugin found no device here).
constexpr int kExitNothingTested = 3;

struct NetTestArgs {
  std::string plugin;
  int dev = 0;
  std::vector<std::string> only;
  double timeout = 120;
  size_t maxBytes = size_t{1} << 30;
  bool strict = false;
  std::string cuda = "auto";
};

struct Tally {
  int pass = 0, fail = 0, skip = 0, noted = 0;
  void add(plugin::conformance::Outcome o) {
    using plugin::conformance::Outcome;
    (o == Outcome::kPass ? pass : o == Outcome::kSkip ? skip : o == Outcome::kNote ? noted : fail)++;
  }
};

void printResult(const plugin::conformance::CheckInfo& c, const plugin::conformance::CheckResult& r) {
  std::string reason = r.reason;
  if (c.strictExtra) reason = "strict extra: " + reason;
  std::printf("%s  %-15s %6.2fs  %s\n", plugin::conformance::outcomeName(r.outcome), c.name, r.seconds, reason.c_str());
  for (const std::string& n : r.notes) std::printf("      note: %s\n", n.c_str());
  std::fflush(stdout);
}

int runNetTest(const NetTestArgs& a) {
  plugin::conformance::Options options;
  options.dev = a.dev;
  options.timeoutSeconds = a.timeout;
  options.maxBytes = a.maxBytes;
  options.strict = a.strict;
  options.cuda = a.cuda == "on" ? plugin::conformance::CudaStandin::kOn
                 : a.cuda == "off" ? plugin::conformance::CudaStandin::kOff
                                   : plugin::conformance::CudaStandin::kAuto;
  auto id = plugin::conformance::identifyPlugin(a.plugin, options);
  if (!id.isOk()) {
    std::fprintf(stderr, "weft net-test: %s\n", id.status().message().c_str());
    return kExitFailure;
  }
  std::printf("weft net-test: %s from %s (%s), device %d\n", id->name.c_str(), id->path.c_str(), id->symbol.c_str(), a.dev);
  std::printf("cuda: %s\n", id->cuda.c_str());
  std::printf("mode: %s\n", a.strict ? "strict: NCCL 2.28's usage, and weft's strict extras must hold too"
                                      : "NCCL 2.28's usage; strict extras are reported (NOTE, note:) but do not fail");
  Tally t;
  int notes = 0;
  for (const auto& c : plugin::conformance::checks()) {
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), c.name) == a.only.end()) continue;
    auto r = plugin::conformance::runCheck(a.plugin, c.name, options);
    printResult(c, r);
    t.add(r.outcome);
    notes += static_cast<int>(r.notes.size());
  }
  std::printf("%d passed, %d failed, %d skipped", t.pass, t.fail, t.skip);
  if (t.noted + notes > 0) std::printf("; %d strict extra%s and %d note%s reported (--strict fails them)", t.noted,
                                       t.noted == 1 ? "" : "s", notes, notes == 1 ? "" : "s");
  std::printf("\n");
  if (t.fail > 0) return kExitFailure;
  return t.pass == 0 ? kExitNothingTested : kExitOk;
}

}  // namespace

void addNetTestCommand(CLI::App& app) {
  static NetTestArgs args;
  std::string checkList;
  for (const auto& c : plugin::conformance::checks())
    checkList += std::string("\n  ") + c.name + (c.strictExtra ? " (strict): " : ": ") + c.what;
  auto* cmd = app.add_subcommand(
      "net-test",
      "Run the net plugin conformance suite on PLUGIN (a name as in NCCL_NET_PLUGIN, or a path).\n"
      "The checks use the plugin as NCCL 2.28 does; each failure says what NCCL would do. Checks\n"
      "marked (strict) and notes ask for more than NCCL does: they fail only with --strict.\n"
      "Each check runs in its own process with a time limit. Exit status: 0 all checks ran passed,\n"
      "1 a check failed (or the plugin did not load), 2 bad usage, 3 every check was skipped.\n"
      "Checks:" + checkList);
  cmd->add_option("PLUGIN", args.plugin, "plugin name (socket, ofi, …) or path to a .so")->required();
  cmd->add_option("--dev", args.dev, "device to test (default 0)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--check", args.only, "run only these checks (repeatable)");
  cmd->add_option("--timeout", args.timeout, "seconds allowed per check (default 120)")->check(CLI::PositiveNumber);
  cmd->add_option("--max-bytes", args.maxBytes, "largest message of the sizes check (default 1 GiB)");
  cmd->add_flag("--strict", args.strict, "strict extras and notes (WARN lines, speed 0, …) fail too");
  cmd->add_option("--cuda-standin", args.cuda,
                  "auto (default): put weft's CUDA stand-in (a driver with no GPU) in front of the plugin when this\n"
                  "machine has no working CUDA driver; on: always; off: never")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd->callback([] {
    int rc = runNetTest(args);
    if (rc != kExitOk) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
