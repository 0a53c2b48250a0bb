// The channels of a communicator, from weft's topology core: on emulated devices exactly what
// `weft search NCCL_TOPO_FILE --nodes N` builds; on CPU endpoints, host-level rings and trees.
#include "core/runtime/channels.h"

#include <algorithm>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/connect/log_lines.h"
#include "core/connect/offline.h"
#include "core/topo/offline.h"
#include "core/topo/paths.h"
#include "core/topo/xml.h"
#include "core/tune/inputs.h"
#include "core/tune/plugin_tuner.h"
#include "core/tune/select.h"

namespace weft::runtime {

namespace {

connect::ConnectOptions optionsFor(const Comm& comm, const topo::Params& params) {
  connect::ConnectOptions c = connect::ConnectOptions::fromParams(params);
  c.minCTAs = std::max(c.minCTAs, comm.options.minCTAs);
  c.maxCTAs = std::min(c.maxCTAs, comm.options.maxCTAs);
  if (c.minCTAs > c.maxCTAs) c.minCTAs = c.maxCTAs;
  return c;
}

// Ranks must be numbered host by host, as the offline pipeline numbers them.
Status checkNodeLayout(const Comm& comm, int gpus) {
  for (int r = 0; r < comm.nranks; ++r) {
    if (comm.rankNode[static_cast<size_t>(r)] != r / gpus)
      return invalidUsage(strprintf("NCCL_TOPO_FILE has %d GPUs with a rank, so weft emulates %d ranks per host "
                                    "numbered host by host; rank %d is on host %d (expected host %d)",
                                    gpus, gpus, r, comm.rankNode[static_cast<size_t>(r)], r / gpus));
  }
  if (comm.nranks % gpus != 0 || comm.localRanks != gpus)
    return invalidUsage(strprintf("NCCL_TOPO_FILE has %d GPUs with a rank, but this host runs %d ranks: run one "
                                  "rank per GPU of the file on every host",
                                  gpus, comm.localRanks));
  return Status::ok();
}

// The file's NET devices at both ends of each ring channel of this node (graph.inter holds the
// NET nodes' ids), for the transport's device choice and its log lines.
void recordRingNets(Comm& comm, const topo::SimulatedNode& node) {
  comm.ringNetSend.clear();
  comm.ringNetRecv.clear();
  const topo::Graph& ring = node.graphs.ring;
  auto devOf = [&](int64_t id) {
    int i = node.system.find(topo::NodeType::kNet, id);
    return i < 0 ? 0 : node.system.node(topo::NodeType::kNet, i).net.dev;
  };
  if (ring.inter.empty()) return;
  for (int c = 0; c < ring.nChannels; ++c) {
    comm.ringNetRecv.push_back(devOf(ring.inter[static_cast<size_t>(2 * c)]));
    comm.ringNetSend.push_back(devOf(ring.inter[static_cast<size_t>(2 * c + 1)]));
  }
}

// What NCCL's init does after connecting: load and init the tuner plugin (a v5 plugin may edit
// the constants), then run the model on this rank's inputs (rank 0 logs NCCL's table).
Status tuneEmulated(Comm& comm, const topo::SimulatedNode& node, const connect::Connection& conn) {
  auto t = std::make_unique<Tuning>();
  WEFT_ASSIGN_OR_RETURN(t->inputs, tune::commInputs(node.system, node.graphs, conn,
                                                    tune::P2pSettings::fromSettings(comm.settings)));
  t->inputs.rank = comm.rank;
  t->settings = tune::TuneSettings::fromSettings(comm.settings);
  tune::Constants constants = tune::defaultConstants();
  plugin::TunerLoaderOptions loader;
  if (comm.net) loader.netLibraryPath = comm.net->plugin().path();
  WEFT_ASSIGN_OR_RETURN(tune::CommTuner tuner, tune::loadCommTuner(t->inputs, comm.settings, constants, loader, comm.commHash));
  t->tuner = std::move(tuner.hook);
  WEFT_ASSIGN_OR_RETURN(t->model, tune::tuneModel(t->inputs, constants, t->settings));
  tune::logChannels(t->inputs);
  comm.tuning = std::move(t);
  return Status::ok();
}

Result<connect::Connection> emulatedChannels(Comm& comm) {
  std::string path = comm.settings.string("NCCL_TOPO_FILE");
  WEFT_ASSIGN_OR_RETURN(topo::TopoXml xml, topo::TopoXml::load(path));
  int gpus = topo::gpusPerNode(xml);
  if (gpus < 1) return invalidUsage(path + ": no <gpu> with a rank attribute: nothing to emulate");
  WEFT_TRY(checkNodeLayout(comm, gpus));
  topo::OfflineOptions o;
  o.nodes = comm.nNodes;
  o.params = topo::Params::fromSettings(comm.settings);
  std::vector<topo::SearchCache> caches;
  WEFT_ASSIGN_OR_RETURN(std::vector<topo::SimulatedNode> domains, topo::simulateDomains(xml, comm.node, o, caches));
  std::vector<int> compCaps;
  for (const topo::SimulatedNode& d : domains) compCaps.push_back(topo::minCompCap(d.system));
  recordRingNets(comm, domains.front());
  WEFT_ASSIGN_OR_RETURN(std::vector<connect::RankInput> inputs,
                        connect::offlineInputs(caches, compCaps, gpus, comm.nNodes, false, false,
                                               connect::rankCompCaps(domains)));
  WEFT_ASSIGN_OR_RETURN(connect::Connection conn, connect::connectRanks(inputs, optionsFor(comm, o.params)));
  WEFT_TRY_CTX(tuneEmulated(comm, domains.front(), conn), "tuning");
  return conn;
}

// CPU endpoints: each host's ranks in rank order form its ring and its tree chain; connect then
// links hosts into rings and double binary trees as it does GPUs' nodes.
Result<connect::Connection> cpuChannels(Comm& comm) {
  topo::Params params = topo::Params::fromSettings(comm.settings);
  connect::ConnectOptions opts = optionsFor(comm, params);
  int channels = std::clamp(kCpuChannels, std::max(1, opts.minCTAs), std::max(1, opts.maxCTAs));
  std::vector<std::vector<int>> nodeRanks(static_cast<size_t>(comm.nNodes));
  for (int r = 0; r < comm.nranks; ++r) nodeRanks[static_cast<size_t>(comm.rankNode[static_cast<size_t>(r)])].push_back(r);
  std::vector<topo::Graph> rings(nodeRanks.size());
  std::vector<topo::Graph> trees(nodeRanks.size());
  std::vector<connect::RankInput> inputs;
  for (size_t n = 0; n < nodeRanks.size(); ++n) {
    const std::vector<int>& ranks = nodeRanks[n];
    for (topo::Graph* g : {&rings[n], &trees[n]}) {
      g->resize(static_cast<int>(ranks.size()));
      g->pattern = g == &rings[n] ? topo::Pattern::kRing : topo::Pattern::kBalancedTree;
      g->id = g == &rings[n] ? topo::kGraphRing : topo::kGraphTree;
      g->nChannels = channels;
      g->bwIntra = g->bwInter = 12;  // nominal: host memory and loopback, for the tuning model
      for (int c = 0; c < channels; ++c)
        for (size_t i = 0; i < ranks.size(); ++i) g->rank(c, static_cast<int>(i)) = ranks[i];
    }
    connect::GraphSet gs;
    gs.ring = &rings[n];
    gs.tree = &trees[n];
    WEFT_TRY(connect::addRanks(inputs, gs, 0));
  }
  return connect::connectRanks(inputs, opts);
}

// CPU endpoints have no model to run, but an operator may still steer Ring and Tree with a tuner
// plugin (the YAML tuner's rules match collective, size, nodes and ranks): when NCCL_TUNER_PLUGIN
// names one, it is loaded and initialised as on emulated devices, with the communicator's ranks,
// hosts and channels.
Status loadHostTuner(Comm& comm) {
  if (comm.settings.string("NCCL_TUNER_PLUGIN").empty()) return Status::ok();
  tune::CommInputs in;
  in.rank = comm.rank;
  in.nRanks = comm.nranks;
  in.nNodes = comm.nNodes;
  in.localRanks = comm.localRanks;
  std::vector<int> perNode(static_cast<size_t>(comm.nNodes), 0);
  for (int node : comm.rankNode) ++perNode[static_cast<size_t>(node)];
  in.minLocalRanks = *std::min_element(perNode.begin(), perNode.end());
  in.maxLocalRanks = *std::max_element(perNode.begin(), perNode.end());
  in.nChannels = comm.channels.nChannels;
  tune::Constants constants = tune::defaultConstants();  // nothing reads them: no model here
  plugin::TunerLoaderOptions loader;
  if (comm.net) loader.netLibraryPath = comm.net->plugin().path();
  WEFT_ASSIGN_OR_RETURN(tune::CommTuner tuner, tune::loadCommTuner(in, comm.settings, constants, loader, comm.commHash));
  comm.hostTuner = std::move(tuner.hook);
  return Status::ok();
}

}  // namespace

Status buildChannels(Comm& comm) {
  Result<connect::Connection> conn =
      comm.mode == DeviceMode::kEmulated ? emulatedChannels(comm) : cpuChannels(comm);
  if (!conn.isOk()) return std::move(conn).takeStatus().withContext("building channels");
  comm.channels = std::move(conn).value();
  connect::logRank(comm.channels, comm.rank);
  if (comm.mode == DeviceMode::kCpu) WEFT_TRY_CTX(loadHostTuner(comm), "loading the tuner plugin");
  return Status::ok();
}

}  // namespace weft::runtime
