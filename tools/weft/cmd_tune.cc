// `weft tune`: the algorithm, protocol, channels and threads NCCL 2.28.9 would use for each
// collective and size on N identical nodes, offline, with NCCL's own tuning log lines.
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/base/json.h"
#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/coll/algorithm.h"
#include "core/config/settings.h"
#include "core/plugin/tuner_loader.h"
#include "core/topo/offline.h"
#include "core/tune/offline.h"
#include "tools/weft/commands.h"
#include "tools/weft/output.h"
#include "tools/weft/tune_output.h"
#include "weft/config.h"

namespace weft::tool {
namespace {

struct TuneArgs {
  std::string topo;
  int nodes = 1;
  bool cpu = false;
  int ranks = 2;
  int cpus = 0;  // --cpu: CPUs per host (0: the CPUs this process may run on)
  std::string colls = "all";
  std::string sizes = "8:1G";
  std::string format = "text";
  std::string explain;
};

int runTuneCpu(const TuneArgs& a);

int runTune(const TuneArgs& a) {
  if (a.cpu) return runTuneCpu(a);
  if (a.topo.empty()) return fail("weft tune", invalidUsage("TOPO is required (or --cpu for CPU endpoints)"));
  bool json = a.format == "json";
  bool lines = a.format == "log";
  if (!json && !lines && a.format != "text")
    return fail("weft tune", invalidUsage("--format must be text, json or log"));
  if (a.nodes < 1) return fail("weft tune", invalidUsage("--nodes must be at least 1"));
  auto request = parseTuneRequest(a.colls, a.sizes, a.explain);
  if (!request.isOk()) return fail("weft tune", request.status());
  // The search and connect run silently (weft search prints them); then the tuning lines are
  // this command's output: NCCL's TUNING table, INIT's threadThresholds and channel summary, and
  // the ENV lines of the settings it reads.
  configureOfflineLogger(log::kTuning | log::kInit | log::kEnv, json || lines);
  log::Options shown = log::processLogger().options();
  log::Options silent = shown;
  silent.level = log::Level::kWarn;
  log::processLogger().setOptions(silent);
  auto topo = topo::TopoXml::load(a.topo);
  if (!topo.isOk()) return fail("weft tune", topo.status());
  auto settings = offlineSettings(*topo, a.nodes);
  if (!settings.isOk()) return fail("weft tune: settings", settings.status());
  auto comm = tune::simulateComm(*topo, tune::tuneSearchOptions(a.nodes, *settings));
  if (!comm.isOk()) return fail("weft tune", comm.status());
  log::processLogger().setOptions(shown);
  if (lines) {
    // The reference logs' format: no tuner plugin, the tuning phase's INFO lines among the rest.
    std::vector<std::string> info;
    Result<tune::Tuned> tuned = [&] {
      log::ScopedRecorder recorder(&info, log::kTuning | log::kInit | log::kEnv, log::ScopedRecorder::Mode::kTake);
      return tune::tuneComm(*comm, *settings);
    }();
    if (!tuned.isOk()) return fail("weft tune", tuned.status());
    printTuneLog(*tuned, info, *request);
    return kExitOk;
  }
  // NCCL_TUNER_PLUGIN: loaded and initialised right before the model, as NCCL's init does (its
  // lines and the plugin's init lines come first; a v5 plugin's constants are the model's).
  // Offline there is no net plugin whose library could hold a tuner, and no CUDA to ask for the
  // GPU's sm: the topology's is handed to weft's YAML tuner.
  exportOfflineTunerArch(*topo, *settings);
  auto tuned = tune::tuneCommWithTuner(*comm, *settings, plugin::TunerLoaderOptions{});
  if (!tuned.isOk()) return fail("weft tune", tuned.status());
  if (!json) {
    if (Status s = printTuneText(*tuned, *request); !s.isOk()) return fail("weft tune", s);
    return kExitOk;
  }
  JsonWriter w;
  w.beginObject().field("weft", WEFT_VERSION_STRING).field("topology", a.topo).field("nodes", a.nodes);
  w.field("nRanks", tuned->comm.nRanks).field("nChannels", tuned->comm.nChannels);
  if (Status s = writeTuneJson(w, *tuned, *request); !s.isOk()) return fail("weft tune", s);
  w.endObject();
  std::printf("%s\n", w.str().c_str());
  return kExitOk;
}


// --cpu: what a communicator of CPU endpoints (no GPU: host buffers, the PyTorch backend) runs per
// collective and size, by the same rule the communicator applies (coll::hostPick), with the host
// cost model's times where it is asked (AllReduce).
coll::Coll collOf(int tuneFunc) {
  switch (tuneFunc) {
    case tune::kBroadcast: return coll::Coll::kBroadcast;
    case tune::kReduce: return coll::Coll::kReduce;
    case tune::kAllGather: return coll::Coll::kAllGather;
    case tune::kReduceScatter: return coll::Coll::kReduceScatter;
    default: return coll::Coll::kAllReduce;
  }
}

std::string pickName(const coll::HostPick& p) {
  if (!p.runs) return "-";
  return p.doubling ? "RecursiveDoubling" : config::algoName(p.algo);
}

int runTuneCpu(const TuneArgs& a) {
  const bool json = a.format == "json";
  if (!json && a.format != "text") return fail("weft tune --cpu", invalidUsage("--format must be text or json with --cpu"));
  if (a.ranks < 1) return fail("weft tune --cpu", invalidUsage("--ranks must be at least 1"));
  if (a.nodes < 1 || a.nodes > a.ranks)
    return fail("weft tune --cpu", invalidUsage(strprintf("--nodes must be 1 to --ranks (%d)", a.ranks)));
  if (!a.explain.empty()) return fail("weft tune --cpu", invalidUsage("--explain is for NCCL's model (a TOPO), not --cpu"));
  auto request = parseTuneRequest(a.colls, a.sizes, "");
  if (!request.isOk()) return fail("weft tune --cpu", request.status());
  const config::Settings settings = config::Settings::fromEnvironment();
  const config::Selection algos = settings.algorithms();
  const coll::HostDoubling mode = coll::hostDoublingMode(settings);
  int cpus = a.cpus;
  if (cpus <= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? std::max(1, CPU_COUNT(&set)) : 1;
  }
  const int perHost = (a.ranks + a.nodes - 1) / a.nodes;  // the most ranks on one host
  const bool over = perHost > cpus;
  const coll::HostCost cost = coll::hostCost(a.nodes, over);
  const bool tuner = settings.isSet("NCCL_TUNER_PLUGIN") && settings.string("NCCL_TUNER_PLUGIN") != "none";
  const char* modeName = mode == coll::HostDoubling::kAlways ? "doubling" : mode == coll::HostDoubling::kAuto ? "auto" : "nccl";
  struct Row {
    int func;
    size_t bytes;
    coll::HostPick pick;
  };
  std::vector<Row> rows;
  for (int f : request->funcs) {
    const coll::Coll c = collOf(f);
    const auto func = static_cast<config::Func>(f);  // tune::Func and config::Func are both ncclFunc_t
    const bool ring = algos.allows(func, static_cast<int>(config::Algo::kRing));
    const bool tree = c == coll::Coll::kAllReduce && algos.allows(func, static_cast<int>(config::Algo::kTree));
    for (size_t bytes : request->sizes)
      rows.push_back({f, bytes, coll::hostPick(c, bytes, a.ranks, a.nodes, ring, tree, mode, over)});
  }
  if (json) {
    JsonWriter w;
    w.beginObject().field("weft", WEFT_VERSION_STRING).field("cpu", true).field("nRanks", a.ranks).field("nNodes", a.nodes);
    w.field("cpusPerHost", cpus).field("oversubscribed", over);
    w.field("hostAlgo", modeName).field("ncclAlgo", settings.string("NCCL_ALGO"));
    w.key("model").beginObject().field("alphaUs", cost.alphaUs).field("betaNsPerByte", cost.betaUsPerByte * 1e3);
    w.field("gammaNsPerByte", cost.gammaUsPerByte * 1e3).endObject();
    w.key("choices").beginArray();
    for (const Row& r : rows) {
      w.beginObject().field("coll", tune::funcName(r.func)).field("bytes", static_cast<int64_t>(r.bytes));
      if (!r.pick.runs) {
        w.field("error", "NCCL_ALGO leaves no algorithm the host runs").endObject();
        continue;
      }
      w.field("algo", pickName(r.pick));
      if (r.pick.modeled) {
        w.key("ringUs").fixed(r.pick.times.ring, 3);
        w.key("treeUs");
        if (r.pick.times.tree >= 0) w.fixed(r.pick.times.tree, 3);
        else w.null();
        w.key("doublingUs").fixed(r.pick.times.doubling, 3);
      }
      w.endObject();
    }
    w.endArray().endObject();
    std::printf("%s\n", w.str().c_str());
    return kExitOk;
  }
  std::printf("# CPU endpoints (no GPU): %d ranks on %d host%s of %d CPUs%s; what weft's host path runs for one float32 "
              "sum\n",
              a.ranks, a.nodes, a.nodes == 1 ? "" : "s", cpus, over ? " (oversubscribed)" : "");
  std::printf("# host cost model (AllReduce): time = steps x alpha + bytes sent x beta + bytes reduced x gamma;\n");
  std::printf("#   %s: alpha %.2f us, beta %.4f ns/B, gamma %.4f ns/B%s\n",
              a.nodes > 1 ? "network (socket plugin)" : over ? "shared memory, more ranks than CPUs" : "shared memory",
              cost.alphaUs, cost.betaUsPerByte * 1e3, cost.gammaUsPerByte * 1e3,
              a.nodes > 1 ? " (guesses, not measured)" : " (fitted on a 2-core VM)");
  std::printf("# WEFT_HOST_ALGO=%s, NCCL_ALGO=%s%s\n", modeName,
              settings.isSet("NCCL_ALGO") ? settings.string("NCCL_ALGO").c_str() : "(unset)",
              a.nodes > 1 ? strprintf("; across hosts doubling only up to %zu bytes", coll::kDoublingAcrossHostsMaxBytes).c_str()
                          : "");
  if (tuner)
    std::printf("# NCCL_TUNER_PLUGIN is set: a communicator asks the plugin instead of this model (not shown here)\n");
  std::printf("# %-13s %14s %12s %12s %12s  %s\n", "coll", "bytes", "ring_us", "tree_us", "doubling_us", "runs");
  for (const Row& r : rows) {
    if (!r.pick.runs) {
      std::printf("  %-13s %14zu  error: NCCL_ALGO=%s leaves no algorithm the host runs for %s (Ring%s)\n",
                  tune::funcName(r.func), r.bytes, settings.string("NCCL_ALGO").c_str(), tune::funcName(r.func),
                  r.func == tune::kAllReduce ? " or Tree" : "");
      continue;
    }
    auto cell = [&](double v) { return r.pick.modeled && v >= 0 ? strprintf("%12.3f", v) : strprintf("%12s", "-"); };
    std::printf("  %-13s %14zu %s %s %s  %s\n", tune::funcName(r.func), r.bytes, cell(r.pick.times.ring).c_str(),
                cell(r.pick.times.tree).c_str(), cell(r.pick.times.doubling).c_str(), pickName(r.pick).c_str());
  }
  return kExitOk;
}

}  // namespace

void addTuneCommand(CLI::App& app) {
  static TuneArgs args;
  auto* cmd = app.add_subcommand("tune", "Algorithm, protocol and channels NCCL picks per collective and size");
  cmd->footer(
      "Builds the communicator `weft search` builds over all GPUs of N identical nodes of TOPO (NVLS\n"
      "searched wherever NCCL's NVLS init would enable it; no CollNet plugin), runs NCCL 2.28.9's\n"
      "cost model on rank 0 and prints its INFO lines as NCCL does with\n"
      "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,INIT,ENV: the latency/bandwidth table (µs / GB/s per\n"
      "collective, algorithm and protocol; 0.0 bandwidth = not used), threadThresholds and the\n"
      "channel summary. Then, for each collective and size, what NCCL's enqueue would choose for one\n"
      "float32 sum: algorithm, protocol, channel budget, threads per block and predicted time.\n\n"
      "Sizes are what NCCL's model receives: for AllGather and ReduceScatter the whole gathered\n"
      "buffer (nRanks x the per-rank count, nccl-tests' \"size\"). Settings apply as in NCCL:\n"
      "NCCL_ALGO, NCCL_PROTO (\"^LL128;allreduce:LL128\"), NCCL_NTHREADS, NCCL_LL128_NTHREADS,\n"
      "NCCL_PAT_ENABLE, NCCL_NET_OVERHEAD, NCCL_LL128_C2C, NCCL_THREAD_THRESHOLDS, and every\n"
      "setting of the search (NCCL_MAX_NCHANNELS, NCCL_CROSS_NIC, …).\n\n"
      "Tuner plugin: NCCL_TUNER_PLUGIN (unset: libnccl-tuner.so; none: no tuner; weft: weft's YAML\n"
      "rule tuner, rules from WEFT_TUNER_RULES_FILE or the policy's TUNER_RULES) is loaded and\n"
      "initialised right before the model, as in NCCL's init (a v5 tuner may edit the model's\n"
      "constants), and every choice goes through it. The table's \"tuner\" column names the rule\n"
      "that fired (or says \"changed\"); --explain shows the cost table before and after the tuner\n"
      "and \"tuner: rule FILE:LINE fired: …\"; JSON choices get a \"tuner\" member. A tuner that is\n"
      "missing or fails init: WARN and the model alone, or an error with WEFT_TUNER_FALLBACK=deny.\n\n"
      "CPU endpoints (--cpu --ranks N [--nodes H], no TOPO): a communicator without GPUs (host\n"
      "buffers, the PyTorch backend) does not take NCCL's model: Ring (Tree for small allreduces\n"
      "across hosts), and for AllReduce recursive doubling where weft's host cost model finds it\n"
      "faster (WEFT_HOST_ALGO=auto|doubling|nccl; NCCL_ALGO set: NCCL's algorithms only). Prints the\n"
      "model's times per algorithm and what runs, by the rule the communicator applies; rank 0 logs\n"
      "the same with NCCL_DEBUG_SUBSYS=TUNING. A host with more ranks than CPUs (--cpus, default this\n"
      "process's) is oversubscribed: a step then costs a context switch. A tuner plugin is not\n"
      "consulted here.\n\n"
      "Examples:\n"
      "  weft tune examples/topologies/hgx-h100-8gpu.xml --nodes 2\n"
      "  weft tune --cpu --ranks 4 --coll allreduce --sizes 8:1M\n"
      "  weft tune topo.xml --nodes 16 --coll allreduce --sizes 1K:64M\n"
      "  weft tune topo.xml --explain 1M          # the whole cost table at 1 MiB, per collective\n"      "  NCCL_TUNER_PLUGIN=weft WEFT_TUNER_RULES_FILE=rules.yaml weft tune topo.xml --nodes 2 --explain 16K\n"
      "  NCCL_PROTO=^LL128 weft tune topo.xml --format json | jq '.choices[] | select(.algo==\"Tree\")'");
  cmd->add_option("TOPO", args.topo, "NCCL topology XML of one node (not with --cpu)")->check(CLI::ExistingFile);
  cmd->add_option("--nodes,-n", args.nodes, "number of identical nodes (--cpu: hosts)")->default_val(1);
  cmd->add_flag("--cpu", args.cpu,
                "CPU endpoints (no GPU, no TOPO): weft's host algorithms and its host cost model instead of NCCL's");
  cmd->add_option("--ranks,-r", args.ranks, "--cpu: ranks in all")->default_val(2);
  cmd->add_option("--cpus", args.cpus,
                  "--cpu: CPUs per host the ranks may run on (default: this process's); more ranks on a host "
                  "than that is oversubscribed, with its own constants");
  cmd->add_option("--coll", args.colls, "collectives: allreduce,allgather,reducescatter,broadcast,reduce or all")
      ->default_val("all");
  cmd->add_option("--sizes", args.sizes, "sizes in bytes: MIN:MAX (powers of two) or a comma list (8,64K,1M)")
      ->default_val("8:1G");
  cmd->add_option("--format", args.format,
                  "text (NCCL's lines and a table), json, or log (the reference tuning logs' lines: inputs, "
                  "INFO, TUNE, TUNECH, COST; no tuner plugin)")
      ->default_val("text");
  cmd->add_option("--explain", args.explain,
                  "also print the whole cost table at this size (before and after a tuner plugin)");
  cmd->callback([] {
    if (int rc = runTune(args); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
