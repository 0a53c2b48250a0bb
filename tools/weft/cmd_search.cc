// `weft search`: simulate a communicator over N identical nodes offline and print what NCCL
// prints: each node's system block, paths and graphs.
#include <cstdio>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/config/settings.h"
#include "core/topo/offline.h"
#include "core/topo/system_print.h"
#include "tools/weft/commands.h"
#include "tools/weft/output.h"

namespace weft::tool {
namespace {

struct SearchArgs {
  std::string topo;
  int nodes = 1;
  std::string graphOut;
  std::string patterns = "ring,tree";
};

void configureLogger() {
  log::Logger& logger = log::processLogger();
  log::Options o = logger.options();
  o.prefix = log::Prefix::kRank;
  // The INFO lines of the GRAPH subsystem are this command's output; NCCL_DEBUG and
  // NCCL_DEBUG_SUBSYS still widen or narrow them.
  if (std::getenv("NCCL_DEBUG") == nullptr) o.level = log::Level::kInfo;
  if (std::getenv("NCCL_DEBUG_SUBSYS") == nullptr) o.mask = log::kGraph;
  logger.setOptions(o);
}

Result<topo::OfflineOptions> offlineOptions(const SearchArgs& a, const config::Settings& settings) {
  topo::OfflineOptions o;
  if (a.nodes < 1) return invalidUsage("--nodes must be at least 1");
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

int runSearch(const SearchArgs& a) {
  configureLogger();
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
  std::optional<topo::SimulatedNode> first;
  for (int n = 0; n < a.nodes; ++n) {
    auto node = topo::simulateNode(*topo, n, *options);
    if (!node.isOk()) return fail("weft search", node.status());
    if (n == 0) first = std::move(*node);
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
      "NCCL_* settings apply as in NCCL: NCCL_CROSS_NIC, NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL,\n"
      "NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_GRAPH_FILE, …\n\n"
      "Examples:\n"
      "  weft search examples/topologies/hgx-h100-8gpu.xml --nodes 2\n"
      "  NCCL_CROSS_NIC=0 weft search topo.xml --nodes 2 --graph-out graphs.xml");
  cmd->add_option("TOPO", args.topo, "NCCL topology XML of one node")->required()->check(CLI::ExistingFile);
  cmd->add_option("--nodes,-n", args.nodes, "number of identical nodes")->default_val(1);
  cmd->add_option("--graph-out,-o", args.graphOut, "write node 0's graphs in NCCL_GRAPH_DUMP_FILE format");
  cmd->add_option("--patterns", args.patterns, "graphs to search: ring,tree[,collnet][,nvls]")->default_val("ring,tree");
  cmd->callback([] {
    if (int rc = runSearch(args); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
