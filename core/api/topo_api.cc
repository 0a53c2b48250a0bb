// C ABI over the offline topology pipeline (include/weft/topo.h).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/api/last_error.h"
#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/config/settings.h"
#include "core/plugin/tuner_loader.h"
#include "core/topo/bound.h"
#include "core/topo/offline.h"
#include "core/tune/offline.h"
#include "core/tune/select.h"
#include "weft/topo.h"

struct weft_topo_run {
  weft::topo::SimulatedNode node;
  std::string log;
  // What weft_topo_tune needs, and its communicator and model once built (on first use).
  weft::topo::TopoXml xml;
  weft::config::Settings settings;
  int nodes = 1;
  std::once_flag tuneOnce;
  weft::Status tuneStatus;
  std::unique_ptr<weft::tune::Tuned> tuned;
  std::mutex tunerMutex;  // a tuner plugin is called by one thread at a time, as NCCL calls it
};

namespace weft::api {
namespace {

Result<topo::OfflineOptions> toOptions(const weft_topo_options_t* o, config::Settings& settings) {
  topo::OfflineOptions out;
  if (o != nullptr) {
    if (o->nodes < 1) return invalidArgument("weft_topo_options_t.nodes must be at least 1");
    out.nodes = o->nodes;
    out.collnet = o->search_collnet != 0;
    out.nvls = o->search_nvls != 0;
    for (const char* const* s = o->settings; s != nullptr && *s != nullptr; ++s) {
      std::string_view kv(*s);
      size_t eq = kv.find('=');
      if (eq == std::string_view::npos) return invalidArgument("setting \"" + std::string(kv) + "\": expected NAME=VALUE");
      WEFT_TRY(settings.set(kv.substr(0, eq), std::string(kv.substr(eq + 1)), config::Source::kOverride, "api"));
    }
  }
  out.params = topo::Params::fromSettings(settings);
  return out;
}

// Runs node 0 and keeps the INFO lines it logs (on a private logger sink).
Status run(const topo::TopoXml& xml, const weft_topo_options_t* options, weft_topo_run_t** out) {
  auto result = std::make_unique<weft_topo_run>();
  WEFT_ASSIGN_OR_RETURN(topo::OfflineOptions o, toOptions(options, result->settings));
  result->xml = xml;
  result->nodes = o.nodes;
  std::vector<std::string> lines;
  log::ScopedRecorder recorder(&lines, log::kGraph);
  WEFT_ASSIGN_OR_RETURN(result->node, topo::simulateNode(xml, 0, o));
  for (const std::string& l : lines) result->log += "[" + std::to_string(result->node.firstRank) + "] NCCL INFO " + l + "\n";
  *out = result.release();
  return Status::ok();
}

const topo::Graph* graphOf(const weft_topo_run_t* r, int id) {
  const topo::NodeGraphs& g = r->node.graphs;
  switch (id) {
    case WEFT_GRAPH_RING: return &g.ring;
    case WEFT_GRAPH_TREE: return &g.tree;
    case WEFT_GRAPH_COLLNET_CHAIN: return &g.collnetChain;
    case WEFT_GRAPH_NVLS: return &g.nvls;
    case WEFT_GRAPH_COLLNET_DIRECT: return &g.collnetDirect;
  }
  return nullptr;
}

// The communicator of the run, connected and tuned once. Its INFO lines go to the process
// logger only (weft_topo_log keeps node 0's search lines).
Status tuneRun(weft_topo_run_t& r) {
  WEFT_ASSIGN_OR_RETURN(tune::OfflineComm comm, tune::simulateComm(r.xml, tune::tuneSearchOptions(r.nodes, r.settings)));
  // NCCL_TUNER_PLUGIN of the run's settings, loaded and initialised before the model as in NCCL.
  WEFT_ASSIGN_OR_RETURN(tune::Tuned t, tune::tuneCommWithTuner(comm, r.settings, plugin::TunerLoaderOptions{}));
  r.tuned = std::make_unique<tune::Tuned>(std::move(t));
  return Status::ok();
}

char* copyOut(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p != nullptr) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

}  // namespace
}  // namespace weft::api

using weft::api::guard;

extern "C" {

WEFT_API weft_result_t weft_topo_run_file(const char* path, const weft_topo_options_t* options, weft_topo_run_t** run) {
  if (run != nullptr) *run = nullptr;
  return guard("weft_topo_run_file", [&]() -> weft::Status {
    if (path == nullptr || run == nullptr) return weft::invalidArgument("weft_topo_run_file: path and run must not be NULL");
    WEFT_ASSIGN_OR_RETURN(weft::topo::TopoXml xml, weft::topo::TopoXml::load(path));
    return weft::api::run(xml, options, run);
  });
}

WEFT_API weft_result_t weft_topo_run_xml(const char* text, size_t len, const char* name,
                                         const weft_topo_options_t* options, weft_topo_run_t** run) {
  if (run != nullptr) *run = nullptr;
  return guard("weft_topo_run_xml", [&]() -> weft::Status {
    if (text == nullptr || run == nullptr) return weft::invalidArgument("weft_topo_run_xml: xml and run must not be NULL");
    WEFT_ASSIGN_OR_RETURN(weft::topo::TopoXml xml,
                          weft::topo::TopoXml::parse(std::string_view(text, len), name ? name : "<memory>"));
    return weft::api::run(xml, options, run);
  });
}

WEFT_API void weft_topo_run_free(weft_topo_run_t* run) { delete run; }

WEFT_API int weft_topo_gpus_per_node(const weft_topo_run_t* run) { return run ? run->node.gpusPerNode : 0; }

WEFT_API weft_result_t weft_topo_bound(const weft_topo_run_t* run, int coll, weft_bound_t* bound) {
  return guard("weft_topo_bound", [&]() -> weft::Status {
    if (run == nullptr || bound == nullptr) return weft::invalidArgument("weft_topo_bound: run and bound must not be NULL");
    if (coll != WEFT_COLL_ALLREDUCE && coll != WEFT_COLL_ALLGATHER)
      return weft::invalidArgument(weft::strprintf("weft_topo_bound: collective %d has no bound (WEFT_COLL_ALLREDUCE %d or "
                                                   "WEFT_COLL_ALLGATHER %d)",
                                                   coll, WEFT_COLL_ALLREDUCE, WEFT_COLL_ALLGATHER));
    const weft::topo::MachineBound& m = run->node.bound;
    const weft::topo::CollectiveBound& b = coll == WEFT_COLL_ALLREDUCE ? m.allreduce : m.allgather;
    weft::topo::RingFigure rings = weft::topo::ringFigure(run->node.graphs.ring, run->nodes);
    *bound = weft_bound_t{m.defined ? b.busBw : 0.0f, rings.busBw, rings.channels, rings.channelBw,
                          b.partsPerNode, b.gpusPerPart, b.limit.c_str()};
    return weft::Status::ok();
  });
}

WEFT_API weft_result_t weft_topo_graph_info(const weft_topo_run_t* run, int graph, weft_graph_info_t* info) {
  return guard("weft_topo_graph_info", [&]() -> weft::Status {
    const weft::topo::Graph* g = run ? weft::api::graphOf(run, graph) : nullptr;
    if (g == nullptr || info == nullptr) return weft::invalidArgument(weft::strprintf("weft_topo_graph_info: no graph %d", graph));
    *info = weft_graph_info_t{g->id, static_cast<int>(g->pattern), g->nChannels, g->bwIntra, g->bwInter,
                              g->typeIntra, g->typeInter, g->crossNic, g->sameChannels};
    return weft::Status::ok();
  });
}

WEFT_API weft_result_t weft_topo_graph_channel(const weft_topo_run_t* run, int graph, int channel, int* ranks,
                                               int64_t* net_in, int64_t* net_out) {
  return guard("weft_topo_graph_channel", [&]() -> weft::Status {
    const weft::topo::Graph* g = run ? weft::api::graphOf(run, graph) : nullptr;
    if (g == nullptr || ranks == nullptr) return weft::invalidArgument("weft_topo_graph_channel: bad run, graph or ranks");
    if (channel < 0 || channel >= g->nChannels)
      return weft::invalidArgument(weft::strprintf("weft_topo_graph_channel: channel %d of %d", channel, g->nChannels));
    for (int i = 0; i < g->ngpus; ++i) ranks[i] = (graph == WEFT_GRAPH_NVLS && i > 0) ? -1 : g->rank(channel, i);
    bool inter = run->node.system.inter;
    if (net_in) *net_in = inter ? g->inter[static_cast<size_t>(2 * channel)] : 0;
    if (net_out) *net_out = inter ? g->inter[static_cast<size_t>(2 * channel + 1)] : 0;
    return weft::Status::ok();
  });
}

WEFT_API weft_result_t weft_topo_graphs_xml(const weft_topo_run_t* run, char** xml) {
  if (xml != nullptr) *xml = nullptr;
  return guard("weft_topo_graphs_xml", [&]() -> weft::Status {
    if (run == nullptr || xml == nullptr) return weft::invalidArgument("weft_topo_graphs_xml: NULL argument");
    WEFT_ASSIGN_OR_RETURN(weft::topo::TopoXml doc,
                          weft::topo::graphsToXml(run->node.system, run->node.graphs.dumpOrder()));
    *xml = weft::api::copyOut(doc.toString());
    return *xml ? weft::Status::ok() : weft::systemError("out of memory");
  });
}

WEFT_API weft_result_t weft_topo_log(const weft_topo_run_t* run, char** text) {
  if (text != nullptr) *text = nullptr;
  return guard("weft_topo_log", [&]() -> weft::Status {
    if (run == nullptr || text == nullptr) return weft::invalidArgument("weft_topo_log: NULL argument");
    *text = weft::api::copyOut(run->log);
    return *text ? weft::Status::ok() : weft::systemError("out of memory");
  });
}

WEFT_API weft_result_t weft_topo_tune(const weft_topo_run_t* run, int coll, size_t bytes, weft_tune_choice_t* choice) {
  return guard("weft_topo_tune", [&]() -> weft::Status {
    if (run == nullptr || choice == nullptr) return weft::invalidArgument("weft_topo_tune: run and choice must not be NULL");
    if (coll < WEFT_COLL_BROADCAST || coll > WEFT_COLL_ALLREDUCE)
      return weft::invalidArgument(weft::strprintf("weft_topo_tune: collective %d is not WEFT_COLL_BROADCAST..ALLREDUCE", coll));
    // The tuned communicator is built once; the run stays logically const.
    auto* r = const_cast<weft_topo_run_t*>(run);
    std::call_once(r->tuneOnce, [r] { r->tuneStatus = weft::api::tuneRun(*r); });
    if (!r->tuneStatus.isOk()) return r->tuneStatus;
    weft::tune::Operation op;
    op.func = coll;
    op.bytes = bytes;
    const weft::tune::Tuned& t = *r->tuned;
    std::unique_lock<std::mutex> oneCaller(r->tunerMutex, std::defer_lock);
    if (t.tuner != nullptr) oneCaller.lock();
    WEFT_ASSIGN_OR_RETURN(weft::tune::Choice c, weft::tune::choose(t.comm, t.model, t.settings, op, t.tuner.get()));
    *choice = weft_tune_choice_t{c.algo, c.proto, c.nMaxChannels, c.nThreads, c.timeUs,
                                 weft::tune::algoName(c.algo), weft::tune::protoName(c.proto)};
    return weft::Status::ok();
  });
}

WEFT_API void weft_free(void* p) { std::free(p); }

}  // extern "C"
