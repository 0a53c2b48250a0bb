// `weft info --config`: every setting with its effective value and where it came from.
#include <cstdio>
#include <string>

#include "core/config/loader.h"
#include "core/config/render.h"
#include "core/base/strings.h"
#include "tools/weft/commands.h"

namespace weft::tool {
namespace {

struct InfoArgs {
  bool config = false;
  std::string yaml, home, etc = "/etc", explain, format = "text";
  std::string host, arch, net;
  int nodes = 0, gpus = 0;
  bool homeSet = false;
};

[[noreturn]] void fail(int code, const std::string& message) {
  std::fprintf(stderr, "weft info: %s\n", message.c_str());
  throw CLI::RuntimeError(code);
}

Result<config::Facts> factsFrom(const InfoArgs& a) {
  config::Facts f;
  if (!a.host.empty()) f.host = a.host;
  if (a.nodes > 0) f.nodes = a.nodes;
  if (a.gpus > 0) f.gpusPerNode = a.gpus;
  if (!a.net.empty()) f.netPlugin = a.net;
  if (!a.arch.empty()) {
    WEFT_ASSIGN_OR_RETURN(f.smArch, config::parseArch(a.arch));
  }
  return f;
}

const config::SettingDef& explainDef(const std::string& name) {
  const config::SettingDef* def = config::findDef(name);
  if (def != nullptr) return *def;
  std::string msg = "--explain: unknown setting " + name;
  if (auto s = config::suggestName(name)) msg += " (did you mean " + *s + "?)";
  fail(kExitUsage, msg);
}

int runInfo(const InfoArgs& a) {
  if (!a.config) fail(kExitUsage, "say what to show: --config (see weft info --help)");
  auto format = config::parseFormat(a.format);
  if (!format.isOk()) fail(kExitUsage, "--format: " + format.status().message());
  if (*format == config::Format::kMarkdown) {
    std::fputs(config::renderReference().c_str(), stdout);
    return kExitOk;
  }
  auto facts = factsFrom(a);
  if (!facts.isOk()) fail(kExitUsage, "--arch: " + facts.status().message());
  config::Inputs in = config::Inputs::fromProcess();
  in.yamlPath = a.yaml;
  if (a.homeSet) in.homeDir = a.home;
  in.etcDir = a.etc;
  auto policy = config::Policy::load(in);
  if (!policy.isOk()) fail(kExitFailure, policy.status().message());
  config::Settings settings = policy->resolve(*facts);
  std::string out = a.explain.empty()
                        ? config::renderSettings(settings, *policy, *facts, *format)
                        : config::renderExplain(explainDef(a.explain), settings, *policy, *facts, *format);
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

constexpr const char* kInfoHelp =
    "\n"
    "  weft info --config                   every setting: name, value, source, doc\n"
    "  weft info --config --explain NAME    every source that set NAME, and which one won\n"
    "  weft info --config --format json     the same for tools\n"
    "  weft info --config --format markdown the reference of every setting (docs/settings.md)\n\n"
    "Sources, highest precedence first: the environment (NCCL_*, WEFT_*); YAML profiles whose\n"
    "match holds (later over earlier); YAML top-level keys; NCCL_CONF_FILE or ~/.nccl.conf;\n"
    "/etc/nccl.conf; defaults. The YAML policy is --yaml FILE, else $WEFT_CONFIG, else\n"
    "~/.config/weft/weft.yaml, else /etc/weft.yaml.\n\n"
    "Profiles apply only where the facts they match are known: give them with --host, --nodes,\n"
    "--gpus, --arch and --net (for this host: --host $(hostname)).\n\n"
    "Examples:\n"
    "  weft info --config --yaml examples/weft.yaml --nodes 4 --gpus 8 --arch sm90\n"
    "  weft info --config --explain MAX_NCHANNELS\n\n"
    "Exit status: 0 ok, 1 a settings file or value is wrong (the message says where), 2 bad usage.";

}  // namespace

void addInfoCommands(CLI::App& app) {
  static InfoArgs args;
  CLI::App* info = app.add_subcommand("info", "Settings: every value, where it came from, and its doc");
  info->footer(kInfoHelp);
  info->add_flag("--config", args.config, "Show the settings (required)");
  info->add_option("--yaml", args.yaml, "YAML policy file to read instead of looking for one");
  info->add_option("--explain", args.explain, "Show every source of one setting (NCCL_X or its YAML key)");
  info->add_option("--format", args.format, "text (default), json, or markdown (the settings reference)");
  info->add_option("--host", args.host, "Host name, for profiles that match host");
  info->add_option("--nodes", args.nodes, "Number of nodes, for profiles that match nodes")->check(CLI::PositiveNumber);
  info->add_option("--gpus", args.gpus, "GPUs per node, for profiles that match gpus")->check(CLI::PositiveNumber);
  info->add_option("--arch", args.arch, "GPU architecture (sm90), for profiles that match arch");
  info->add_option("--net", args.net, "Net plugin name (IB, Socket, …), for profiles that match net");
  info->add_option("--home", args.home, "Read ~/.nccl.conf and ~/.config/weft/weft.yaml from this folder ('' for none)")
      ->each([](const std::string&) { args.homeSet = true; });
  info->add_option("--etc", args.etc, "Read nccl.conf and weft.yaml from this folder instead of /etc ('' for none)");
  info->callback([] {
    int rc = runInfo(args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
