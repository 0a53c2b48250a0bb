// `weft net-test PLUGIN`: runs the net plugin conformance suite on one plugin, through its C ABI
// only, and prints PASS/FAIL/SKIP per check with the reason. No GPU and no communicator needed.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/plugin/conformance.h"
#include "core/plugin/net_loader.h"
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
};

int runNetTest(const NetTestArgs& a) {
  auto loaded = plugin::loadNetPlugin(a.plugin, plugin::NetLoaderOptions{});
  if (!loaded.isOk()) {
    std::fprintf(stderr, "weft net-test: %s\n", loaded.status().message().c_str());
    return kExitFailure;
  }
  std::printf("weft net-test: %s from %s (%s), device %d\n", (*loaded)->api().name(), (*loaded)->path().c_str(),
              (*loaded)->symbol().c_str(), a.dev);
  plugin::conformance::Options options;
  options.dev = a.dev;
  options.timeoutSeconds = a.timeout;
  options.maxBytes = a.maxBytes;
  int pass = 0, fail = 0, skip = 0;
  for (const auto& c : plugin::conformance::checks()) {
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), c.name) == a.only.end()) continue;
    auto r = plugin::conformance::runCheck(a.plugin, c.name, options);
    std::printf("%s  %-14s %6.2fs  %s\n", plugin::conformance::outcomeName(r.outcome), c.name, r.seconds, r.reason.c_str());
    std::fflush(stdout);
    (r.outcome == plugin::conformance::Outcome::kPass ? pass : r.outcome == plugin::conformance::Outcome::kSkip ? skip : fail)++;
  }
  std::printf("%d passed, %d failed, %d skipped\n", pass, fail, skip);
  if (fail > 0) return kExitFailure;
  return pass == 0 ? kExitNothingTested : kExitOk;
}

}  // namespace

void addNetTestCommand(CLI::App& app) {
  static NetTestArgs args;
  std::string checkList;
  for (const auto& c : plugin::conformance::checks()) checkList += std::string("\n  ") + c.name + ": " + c.what;
  auto* cmd = app.add_subcommand(
      "net-test",
      "Run the net plugin conformance suite on PLUGIN (a name as in NCCL_NET_PLUGIN, or a path).\n"
      "Each check runs in its own process with a time limit. Exit status: 0 all checks ran passed,\n"
      "1 a check failed (or the plugin did not load), 2 bad usage, 3 every check was skipped.\n"
      "Checks:" + checkList);
  cmd->add_option("PLUGIN", args.plugin, "plugin name (socket, ofi, …) or path to a .so")->required();
  cmd->add_option("--dev", args.dev, "device to test (default 0)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--check", args.only, "run only these checks (repeatable)");
  cmd->add_option("--timeout", args.timeout, "seconds allowed per check (default 120)")->check(CLI::PositiveNumber);
  cmd->add_option("--max-bytes", args.maxBytes, "largest message of the sizes check (default 1 GiB)");
  cmd->callback([] {
    int rc = runNetTest(args);
    if (rc != kExitOk) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
