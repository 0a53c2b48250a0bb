// `weft search`: simulate a communicator over N identical nodes offline and print what NCCL
// prints: each node's system block, paths and graphs.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/base/json.h"
#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/config/settings.h"
#include "core/topo/offline.h"
#include "core/topo/system_print.h"
#include "tools/weft/commands.h"
#include "tools/weft/output.h"
#include "tools/weft/search_json.h"
#include "weft/config.h"

namespace weft::tool {
namespace {

struct SearchArgs {
  std::string topo;
  int nodes = 1;
  std::string graphOut;
  std::string patterns = "ring,tree";
  std::string format = "text";
  bool explain = false;
};

void configureLogger(bool json) {
  log::Logger& logger = log::processLogger();
  log::Options o = logger.options();
  o.prefix = log::Prefix::kRank;
  // In text mode the INFO lines of the GRAPH subsystem are this command's output; NCCL_DEBUG
  // and NCCL_DEBUG_SUBSYS still widen or narrow them. In JSON mode only warnings go to the log.
  if (std::getenv("NCCL_DEBUG") == nullptr) o.level = json ? log::Level::kWarn : log::Level::kInfo;
  if (std::getenv("NCCL_DEBUG_SUBSYS") == nullptr) o.mask = log::kGraph;
  if (json) o.file = o.file.empty() ? std::string() : o.file;
  logger.setOptions(o);
}

Result<topo::OfflineOptions> offlineOptions(const SearchArgs& a, const config::Settings& settings) {
  topo::OfflineOptions o;
  if (a.nodes < 1) return invalidUsage("--nodes must be at least 1");
  if (a.format != "text" && a.format != "json") return invalidUsage("--format must be text or json");
  o.nodes = a.nodes;
  o.params = topo::Params::fromSettings(settings);
  for (std::string_view p : split(a.patterns, ',')) {
    p = trim(p);
    if (p == "ring" || p == "tree") continue;
    if (p == "collnet") o.collnet = true;
    else if (p == "nvls") o.nvls = true;
    else return invalidUsage("--patterns: unknown pattern '" + std::string(p) + "' (expected ring, tree, collnet, nvls)");
  }
  return o;
}

const char* graphLabel(int id) {
  switch (id) {
    case topo::kGraphRing: return "ring";
    case topo::kGraphTree: return "tree";
    case topo::kGraphCollnetChain: return "collnet chain";
    case topo::kGraphNvls: return "nvls";
    default: return "collnet direct";
  }
}

std::string typeName(int t) { return std::string(topo::pathTypeName(static_cast<topo::PathType>(t))); }

// --explain in text: one table per graph of the searches tried, and why the result was kept.
void printExplain(const std::vector<topo::SearchStep>& trace) {
  int current = -1, n = 0;
  for (const topo::SearchStep& t : trace) {
    if (t.graphId != current) {
      current = t.graphId;
      n = 0;
      std::printf("# explain: %s graph (id %d)\n", graphLabel(t.graphId), t.graphId);
      std::printf("#  %3s %-12s %7s %15s %11s %8s %4s %6s %6s   %s\n", "#", "step", "pattern", "bw intra/inter",
                  "type", "crossNic", "same", "budget", "left", "best so far");
    }
    if (startsWith(t.what, "result")) {
      std::printf("#  %s\n#  => %d channels, bw %.2f/%.2f GB/s, type %s/%s, pattern %d\n", t.what.c_str(), t.nChannels,
                  static_cast<double>(t.bestBwIntra), static_cast<double>(t.bestBwInter), typeName(t.typeIntra).c_str(),
                  typeName(t.typeInter).c_str(), t.pattern);
      continue;
    }
    std::string left = t.left == -1 ? "max" : std::to_string(t.left);
    std::printf("#  %3d %-12s %7d %7.2f/%-7.2f %5s/%-5s %8d %4d %6d %6s   %d x %.2f/%.2f\n", ++n, t.what.c_str(),
                t.pattern, static_cast<double>(t.bwIntra), static_cast<double>(t.bwInter), typeName(t.typeIntra).c_str(),
                typeName(t.typeInter).c_str(), t.crossNic, t.sameChannels, t.budget, left.c_str(), t.nChannels,
                static_cast<double>(t.bestBwIntra), static_cast<double>(t.bestBwInter));
  }
}

int runSearch(const SearchArgs& a) {
  bool json = a.format == "json";
  configureLogger(json);
  config::Settings settings = config::Settings::fromEnvironment();
  auto options = offlineOptions(a, settings);
  if (!options.isOk()) return fail("weft search", options.status());
  auto topo = topo::TopoXml::load(a.topo);
  if (!topo.isOk()) return fail("weft search", topo.status());
  std::optional<topo::TopoXml> graphFile;
  if (std::string f = settings.string("NCCL_GRAPH_FILE"); !f.empty()) {
    auto g = topo::TopoXml::load(f);
    if (!g.isOk()) return fail("weft search: NCCL_GRAPH_FILE", g.status());
    graphFile = std::move(*g);
    options->graphFile = &*graphFile;
  }
  std::vector<topo::SearchStep> trace;
  if (a.explain) options->trace = &trace;
  topo::SearchCache cache;
  options->cache = &cache;

  JsonWriter w;
  if (json) {
    w.beginObject().field("weft", WEFT_VERSION_STRING).field("topology", a.topo).field("nodes", a.nodes);
    w.key("node").beginArray();
  }
  std::optional<topo::SimulatedNode> first;
  for (int n = 0; n < a.nodes; ++n) {
    auto node = topo::simulateNode(*topo, n, *options);
    if (!node.isOk()) return fail("weft search", node.status());
    if (json) writeNodeJson(w, *node, n == 0);
    if (n == 0) {
      if (a.explain && !json) printExplain(trace);
      first = std::move(*node);
    }
  }
  if (json) {
    w.endArray();
    if (a.explain) {
      w.key("explain");
      writeTraceJson(w, trace);
    }
    w.field("gpusPerNode", first->gpusPerNode).field("nRanks", first->gpusPerNode * a.nodes);
    w.endObject();
    std::printf("%s\n", w.str().c_str());
  }
  if (!a.graphOut.empty()) {
    auto xml = topo::graphsToXml(first->system, first->graphs.dumpOrder());
    if (!xml.isOk()) return fail("weft search: --graph-out", xml.status());
    if (Status s = xml->save(a.graphOut); !s.isOk()) return fail("weft search: --graph-out", s);
  }
  return kExitOk;
}

}  // namespace

void addSearchCommand(CLI::App& app) {
  static SearchArgs args;
  auto* cmd = app.add_subcommand("search", "Search the rings and trees NCCL builds on N identical nodes");
  cmd->footer(
      "Simulates a communicator over all GPUs of N identical nodes built from TOPO (ranks numbered\n"
      "node by node) and runs, per node, what NCCL's first rank of that node runs: paths, trimming,\n"
      "paths again, and the ring and tree searches. Prints NCCL's INFO lines (system block, paths,\n"
      "GPU Direct RDMA decisions, graphs) with the \"[rank] NCCL INFO \" prefix.\n\n"
      "Identical nodes share one search: node 0 searches, the others reuse its graphs.\n"
      "NCCL_* settings apply as in NCCL: NCCL_CROSS_NIC, NCCL_P2P_LEVEL, NCCL_P2P_DISABLE,\n"
      "NCCL_NET_GDR_LEVEL, NCCL_PXN_DISABLE, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_GRAPH_FILE, …\n\n"
      "Examples:\n"
      "  weft search examples/topologies/hgx-h100-8gpu.xml --nodes 2\n"
      "  NCCL_CROSS_NIC=0 weft search topo.xml --nodes 2 --graph-out graphs.xml\n"
      "  weft search topo.xml --explain          # which relaxations were tried, and why it stopped\n"
      "  weft search topo.xml --format json | jq '.node[0].graphs[0].channels'");
  cmd->add_option("TOPO", args.topo, "NCCL topology XML of one node")->required()->check(CLI::ExistingFile);
  cmd->add_option("--nodes,-n", args.nodes, "number of identical nodes")->default_val(1);
  cmd->add_option("--graph-out,-o", args.graphOut, "write node 0's graphs in NCCL_GRAPH_DUMP_FILE format");
  cmd->add_option("--patterns", args.patterns, "graphs to search: ring,tree[,collnet][,nvls]")->default_val("ring,tree");
  cmd->add_option("--format", args.format, "text (NCCL's log lines) or json")->default_val("text");
  cmd->add_flag("--explain", args.explain, "show every search the relaxation schedule tried and why it stopped");
  cmd->callback([] {
    if (int rc = runSearch(args); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
