// `weft search`: simulate a communicator over N identical nodes offline and print what NCCL
// prints: each node's system block, paths and graphs.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/base/json.h"
#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/config/loader.h"
#include "core/config/settings.h"
#include "core/connect/log_lines.h"
#include "core/connect/offline.h"
#include "core/plugin/tuner_loader.h"
#include "core/topo/bound.h"
#include "core/topo/paths.h"
#include "core/topo/offline.h"
#include "core/topo/system_print.h"
#include "core/tune/offline.h"
#include "tools/weft/commands.h"
#include "tools/weft/output.h"
#include "tools/weft/picture_dot.h"
#include "tools/weft/picture_search.h"
#include "tools/weft/picture_topo.h"
#include "tools/weft/search_connect.h"
#include "tools/weft/search_json.h"
#include "tools/weft/tune_output.h"
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
  int rank = -1;
  bool quiet = false;
  std::string picture;
  std::string pictureChannels = "all";
  std::string pictureGraphs = "ring,tree";
  bool tune = false;
};

Result<topo::OfflineOptions> offlineOptions(const SearchArgs& a, const config::Settings& settings) {
  topo::OfflineOptions o;
  if (a.nodes < 1) return invalidUsage("--nodes must be at least 1");
  if (a.format != "text" && a.format != "json") return invalidUsage("--format must be text or json");
  o.nodes = a.nodes;
  o.nvls = a.tune;  // --tune: the graphs NCCL's tuning reads, NVLS where NCCL's NVLS init enables it
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

// Wall and CPU time since construction, and the process's peak resident memory.
class Stopwatch {
 public:
  Stopwatch() : wall0_(std::chrono::steady_clock::now()), cpu0_(cpuSeconds()) {}
  double wall() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count(); }
  double cpu() const { return cpuSeconds() - cpu0_; }
  static double peakMb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
  }

 private:
  static double cpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
    return s(u.ru_utime) + s(u.ru_stime);
  }
  std::chrono::steady_clock::time_point wall0_;
  double cpu0_;
};

// What the search phase leaves for connect: one search per trim domain of a node (identical
// nodes share them), each domain's compute capability, and node 0's first domain for output.
struct SearchPhase {
  std::vector<topo::SearchCache> caches;
  std::vector<int> compCaps;
  std::vector<int> rankCompCaps;  // each rank's own GPU (connect::rankCompCaps)
  std::optional<topo::SimulatedNode> first;
  double seconds = 0;
  // The machine's bound beside NCCL's rings (the ring graph of node 0's first domain).
  topo::MachineBound bound;
  topo::RingFigure rings;
};

// The bound is the machine's (node 0's system before NCCL trims it), beside node 0's rings.
void computeBound(int nodes, SearchPhase& sp) {
  sp.bound = sp.first->bound;
  sp.rings = topo::ringFigure(sp.first->graphs.ring, nodes);
}

// "# bound: allreduce (reductions on GPUs): rings 4 x 20.0 GB/s = 80.0 GB/s of a 96.0 GB/s
// bound (83%): limited by …", and the same for allgather.
void printBoundText(const SearchPhase& sp) {
  if (!sp.bound.defined) {
    std::printf("# bound: a single rank moves nothing\n");
    return;
  }
  std::printf("# bound: allreduce (reductions on GPUs): %s\n", topo::boundLine(sp.rings, sp.bound.allreduce).c_str());
  std::printf("# bound: allgather: %s\n", topo::boundLine(sp.rings, sp.bound.allgather).c_str());
}

// Simulates every node (only node 0 with --quiet: the others are node 0 moved to their ranks).
Status runNodes(const SearchArgs& a, const topo::TopoXml& topo, const topo::OfflineOptions& o,
                const std::vector<topo::SearchStep>& trace, JsonWriter* w, SearchPhase& out) {
  Stopwatch clock;
  int simulated = a.quiet ? 1 : a.nodes;
  for (int n = 0; n < simulated; ++n) {
    WEFT_ASSIGN_OR_RETURN(std::vector<topo::SimulatedNode> domains, topo::simulateDomains(topo, n, o, out.caches));
    for (size_t d = 0; d < domains.size(); ++d) {
      if (w != nullptr) writeNodeJson(*w, domains[d], n == 0 && d == 0);
      if (n == 0) out.compCaps.push_back(topo::minCompCap(domains[d].system));
    }
    if (n != 0) continue;
    if (a.explain && w == nullptr && !a.quiet) printExplain(trace);
    out.rankCompCaps = connect::rankCompCaps(domains);
    out.first = std::move(domains.front());
  }
  out.seconds = clock.wall();
  return Status::ok();
}

Result<connect::Connection> runConnect(const topo::OfflineOptions& o, const SearchPhase& sp) {
  return connect::connectOffline(sp.caches, sp.compCaps, sp.first->gpusPerNode, o, sp.rankCompCaps);
}

// Wall and CPU seconds of the connect phase.
struct Phase {
  double wall = 0;
  double cpu = 0;
};

// --tune's part of the output: the table of choices (text), or a "tune" member (JSON).
Status printTune(const tune::Tuned* tuned, JsonWriter* w) {
  if (tuned == nullptr) return Status::ok();
  WEFT_ASSIGN_OR_RETURN(TuneRequest request, parseTuneRequest("all", "8:1G", ""));
  if (w == nullptr) return printTuneText(*tuned, request);
  w->key("tune").beginObject();
  WEFT_TRY(writeTuneJson(*w, *tuned, request));
  w->endObject();
  return Status::ok();
}

Status printSummary(const SearchArgs& a, const connect::Connection& conn, const SearchPhase& sp, Phase connectPhase,
                    const Stopwatch& total, const tune::Tuned* tuned) {
  double wall = total.wall();
  if (a.format == "json") {
    JsonWriter w;
    w.beginObject().field("weft", WEFT_VERSION_STRING).field("topology", a.topo).field("nodes", a.nodes);
    w.field("gpusPerNode", sp.first->gpusPerNode).field("nRanks", conn.nRanks);
    WEFT_TRY(printTune(tuned, &w));
    w.key("bound");
    writeBoundJson(w, sp.bound, sp.rings);
    w.key("connect");
    writeConnectJson(w, conn);
    w.key("seconds").beginObject().field("wall", wall).field("cpu", total.cpu());
    w.field("search", sp.seconds).field("connect", connectPhase.wall).field("connectCpu", connectPhase.cpu).endObject();
    w.field("peakMemoryMB", Stopwatch::peakMb());
    w.endObject();
    std::printf("%s\n", w.str().c_str());
    return Status::ok();
  }
  // Connect's nodes are the ranks' trim domains: the topology's nodes, or single GPUs without P2P and SHM.
  std::printf("ranks %d (%d x %d GPUs), nodes %d, channels %d (%d connected across nodes), tree depth %d\n", conn.nRanks,
              a.nodes, sp.first->gpusPerNode, conn.nNodes, conn.nChannels, conn.baseChannels, conn.treeDepth);
  std::printf("time %.3f s wall, %.3f s cpu (search %.3f s, connect %.3f s wall %.3f s cpu), %.2f us per rank; "
              "peak memory %.1f MB\n",
              wall, total.cpu(), sp.seconds, connectPhase.wall, connectPhase.cpu, wall * 1e6 / conn.nRanks,
              Stopwatch::peakMb());
  printBoundText(sp);
  return printTune(tuned, nullptr);
}

Status checkRankArg(const SearchArgs& a, const topo::TopoXml& topo) {
  int nRanks = topo::gpusPerNode(topo) * a.nodes;
  if (a.rank < -1 || a.rank >= nRanks)
    return invalidUsage(strprintf("--rank %d: the communicator has ranks 0..%d", a.rank, nRanks - 1));
  if (!a.picture.empty() && a.nodes > kPictureMaxNodes)
    return invalidUsage(strprintf("--picture draws at most %d nodes (--nodes %d)", kPictureMaxNodes, a.nodes));
  return Status::ok();
}

Status writeGraphOut(const SearchArgs& a, const SearchPhase& sp) {
  if (a.graphOut.empty()) return Status::ok();
  WEFT_ASSIGN_OR_RETURN(topo::TopoXml xml, topo::graphsToXml(sp.first->system, sp.first->graphs.dumpOrder()));
  return xml.save(a.graphOut);
}

// Prints every rank's (or --rank's) connect lines as NCCL logs them, or their JSON.
void printRanks(const SearchArgs& a, const connect::Connection& conn, JsonWriter* w) {
  if (w == nullptr) {
    for (int r = 0; r < conn.nRanks; ++r)
      if (a.rank < 0 || r == a.rank) connect::logRank(conn, r);
    return;
  }
  w->key("connect");
  writeConnectJson(*w, conn);
  w->endObject();
  std::string head = w->str();
  head.pop_back();  // reopen the document to stream the ranks into it
  streamRanksJson(stdout, head, conn, a.rank);
}

// --picture: node 0's graphs and every rank's channels, drawn.
Status writeSearchPicture(const SearchArgs& a, const topo::TopoXml& topo, const connect::Connection& conn,
                          const SearchPhase& sp) {
  if (a.picture.empty()) return Status::ok();
  SearchPicture p;
  p.node = &*sp.first;
  p.conn = &conn;
  p.nodes = a.nodes;
  WEFT_ASSIGN_OR_RETURN(p.channels, parseChannelList(a.pictureChannels, conn.nChannels));
  p.rings = p.trees = false;
  for (std::string_view g : split(a.pictureGraphs, ',')) {
    g = trim(g);
    if (g == "ring") p.rings = true;
    else if (g == "tree") p.trees = true;
    else return invalidUsage("--picture-graphs: unknown graph '" + std::string(g) + "' (expected ring, tree)");
  }
  p.title = std::filesystem::path(a.topo).filename().string();
  p.netNames = netNamesOf(topo);
  WEFT_ASSIGN_OR_RETURN(std::string dot, searchDot(p));
  return writePicture(dot, a.picture, pictureFormat(a.picture));
}

int runSearch(const SearchArgs& a) {
  Stopwatch total;
  bool json = a.format == "json";
  // In text mode the INFO lines of the GRAPH and INIT subsystems are this command's output (the
  // connect phase logs "Channel" and "Trees" under INIT). In JSON mode, and with --quiet, only
  // warnings go to the log.
  // --tune adds NCCL's tuning lines (TUNING, and ENV for the settings it reads).
  configureOfflineLogger(log::kGraph | log::kInit | (a.tune ? log::kTuning | log::kEnv : 0), json || a.quiet);
  auto topo = topo::TopoXml::load(a.topo);
  if (!topo.isOk()) return fail("weft search", topo.status());
  auto resolved = offlineSettings(*topo, a.nodes);
  if (!resolved.isOk()) return fail("weft search: settings", resolved.status());
  const config::Settings& settings = *resolved;
  auto options = offlineOptions(a, settings);
  if (!options.isOk()) return fail("weft search", options.status());
  if (Status s = checkRankArg(a, *topo); !s.isOk()) return fail("weft search", s);
  std::optional<topo::TopoXml> graphFile;
  if (std::string f = settings.string("NCCL_GRAPH_FILE"); !f.empty()) {
    auto g = topo::TopoXml::load(f);
    if (!g.isOk()) return fail("weft search: NCCL_GRAPH_FILE", g.status());
    graphFile = std::move(*g);
    options->graphFile = &*graphFile;
  }
  std::vector<topo::SearchStep> trace;
  if (a.explain) options->trace = &trace;

  JsonWriter w;
  bool streamJson = json && !a.quiet;
  if (streamJson) {
    w.beginObject().field("weft", WEFT_VERSION_STRING).field("topology", a.topo).field("nodes", a.nodes);
    w.key("node").beginArray();
  }
  SearchPhase sp;
  if (Status s = runNodes(a, *topo, *options, trace, streamJson ? &w : nullptr, sp); !s.isOk()) return fail("weft search", s);
  computeBound(a.nodes, sp);
  if (Status s = writeGraphOut(a, sp); !s.isOk()) return fail("weft search: --graph-out", s);
  Stopwatch connectClock;
  auto conn = runConnect(*options, sp);
  if (!conn.isOk()) return fail("weft search: connect", conn.status());
  Phase connectPhase{connectClock.wall(), connectClock.cpu()};
  // --tune: the tuner plugin and NCCL's model run (and log their lines) after the connect lines, as in
  // NCCL's init.
  std::optional<tune::Tuned> tuned;
  auto runTune = [&]() -> Status {
    if (!a.tune) return Status::ok();
    exportOfflineTunerArch(*topo, settings);  // the tuner's `arch` rules: the topology's sm
    WEFT_ASSIGN_OR_RETURN(tuned, tune::tuneCommWithTuner(*sp.first, *conn, settings, plugin::TunerLoaderOptions{}));
    return Status::ok();
  };
  if (a.quiet || streamJson) {
    if (Status s = runTune(); !s.isOk()) return fail("weft search: tune", s);
  }
  const tune::Tuned* tp = tuned ? &*tuned : nullptr;
  if (a.quiet) {
    if (Status s = printSummary(a, *conn, sp, connectPhase, total, tp); !s.isOk()) return fail("weft search: tune", s);
  } else if (streamJson) {
    w.endArray();
    if (a.explain) {
      w.key("explain");
      writeTraceJson(w, trace);
    }
    w.field("gpusPerNode", sp.first->gpusPerNode).field("nRanks", conn->nRanks);
    w.key("bound");
    writeBoundJson(w, sp.bound, sp.rings);
    if (Status s = printTune(tp, &w); !s.isOk()) return fail("weft search: tune", s);
  }
  if (!a.quiet) printRanks(a, *conn, streamJson ? &w : nullptr);
  if (!a.quiet && !streamJson) printBoundText(sp);
  if (!a.quiet && !streamJson) {
    if (Status s = runTune(); !s.isOk()) return fail("weft search: tune", s);
    if (Status s = printTune(tuned ? &*tuned : nullptr, nullptr); !s.isOk()) return fail("weft search: tune", s);
  }
  std::fflush(stdout);
  // The picture is drawn after the output, so that the summary's times are the search's.
  if (Status s = writeSearchPicture(a, *topo, *conn, sp); !s.isOk()) return fail("weft search: --picture", s);
  return kExitOk;
}

}  // namespace

void addSearchCommand(CLI::App& app) {
  static SearchArgs args;
  auto* cmd = app.add_subcommand("search", "Search the rings and trees NCCL builds on N identical nodes");
  cmd->footer(
      "Simulates a communicator over all GPUs of N identical nodes built from TOPO (ranks numbered\n"
      "node by node) and runs, per node, what NCCL's first rank of that node runs: paths, trimming,\n"
      "paths again, and the ring and tree searches. Then connects all ranks as NCCL's preset,\n"
      "AllGather3 and postset do: rings and double binary trees across nodes, channel duplication\n"
      "and limits. Prints NCCL's INFO lines with the \"[rank] NCCL INFO \" prefix: each node's system\n"
      "block, paths and graphs, then for every rank its Tree, Channel (rank 0), Ring and Trees lines.\n\n"
      "Identical nodes share one search: node 0 searches, the others reuse its graphs. When GPUs of a\n"
      "node cannot talk without the network (NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL=LOC with\n"
      "NCCL_SHM_DISABLE=1), each GPU is its own domain and connects as its own \"node\", as in NCCL.\n"
      "NCCL_* settings apply as in NCCL: NCCL_CROSS_NIC, NCCL_P2P_LEVEL, NCCL_P2P_DISABLE,\n"
      "NCCL_NET_GDR_LEVEL, NCCL_PXN_DISABLE, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_GRAPH_FILE, …\n\n"
      "--patterns collnet searches and connects as NCCL with NCCL_COLLNET_ENABLE=1 and a CollNet\n"
      "plugin; nvls as NCCL on GPUs with NVLS multicast, so not with NCCL_NVLS_ENABLE=0 or on a system\n"
      "of two GPUs or fewer (ncclNvlsInit), and with NCCL_NVLS_NCHANNELS channels when set.\n\n"
      "--quiet searches node 0 only, connects every rank, and prints a summary: nodes, ranks,\n"
      "channels, time and peak memory (the connect phase is linear in ranks: a million ranks take\n"
      "a second or two).\n\n"
      "Last come two \"# bound:\" lines (JSON: \"bound\"): NCCL's rings beside an upper bound on the\n"
      "bus bandwidth any allreduce (reducing on GPUs) or allgather could reach on these nodes, from\n"
      "the links' capacities, and the links that bind (a cut bound; README, \"How far from the\n"
      "machine's bound\").\n\n"
      "--picture FILE draws the channels (FILE's extension picks svg, png, pdf or dot), for up to 8\n"
      "nodes: one panel per channel and graph, GPUs boxed by node, arrows in ring order (tree: parent\n"
      "to child) through the network ports where a channel leaves and enters a node, each arrow\n"
      "labelled and coloured with its path type; the caption gives the graph's bandwidth and types.\n"
      "weft places every box; Graphviz (package graphviz, `dot`, or WEFT_DOT) draws them, within\n"
      "WEFT_DOT_TIMEOUT seconds (60); without it the DOT text is written instead.\n\n"
      "Examples:\n"
      "  weft search examples/topologies/hgx-h100-8gpu.xml --nodes 2\n"
      "  weft search examples/topologies/hgx-h100-8gpu.xml --nodes 4 --rank 9   # one rank's rings/trees\n"
      "  weft search examples/topologies/hgx-h100-8gpu.xml --nodes 12500 --quiet\n"
      "  NCCL_CROSS_NIC=0 weft search topo.xml --nodes 2 --graph-out graphs.xml\n"
      "  weft search topo.xml --explain          # which relaxations were tried, and why it stopped\n"
      "  weft search topo.xml --nodes 2 -q --picture channels.svg --picture-channels 0-1\n"
      "  weft search topo.xml --nodes 2 --tune   # then NCCL's tuning table and choices (weft tune)\n"
      "  weft search topo.xml --nodes 2 --format json | jq '.ranks[3].ring'");
  cmd->add_option("TOPO", args.topo, "NCCL topology XML of one node")->required()->check(CLI::ExistingFile);
  cmd->add_option("--nodes,-n", args.nodes, "number of identical nodes")->default_val(1);
  cmd->add_option("--graph-out,-o", args.graphOut, "write node 0's graphs in NCCL_GRAPH_DUMP_FILE format");
  cmd->add_option("--patterns", args.patterns, "graphs to search: ring,tree[,collnet][,nvls]")->default_val("ring,tree");
  cmd->add_option("--format", args.format, "text (NCCL's log lines) or json")->default_val("text");
  cmd->add_flag("--explain", args.explain, "show every search the relaxation schedule tried and why it stopped");
  cmd->add_option("--rank", args.rank, "print the connect lines (or JSON) of this rank only")->default_val(-1);
  cmd->add_flag("--quiet,-q", args.quiet, "search node 0 only, connect all ranks, print a summary");
  cmd->add_option("--picture", args.picture, "draw the channels to this file (.svg, .png, .pdf, .dot)");
  cmd->add_option("--picture-channels", args.pictureChannels, "channels to draw: all, or a list like 0,2-3")
      ->default_val("all");
  cmd->add_option("--picture-graphs", args.pictureGraphs, "graphs to draw per channel: ring,tree")->default_val("ring,tree");
  cmd->add_flag("--tune", args.tune,
                "also search NVLS and print NCCL's tuning lines and choices, as `weft tune` (all collectives, 8 B-1 GiB; "
                "through NCCL_TUNER_PLUGIN's tuner)");
  cmd->callback([] {
    if (int rc = runSearch(args); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
