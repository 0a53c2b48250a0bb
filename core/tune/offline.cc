#include "core/tune/offline.h"

#include "core/base/log.h"
#include "core/connect/offline.h"
#include "core/topo/paths.h"
#include "core/tune/inputs.h"
#include "core/tune/plugin_tuner.h"

namespace weft::tune {

topo::OfflineOptions tuneSearchOptions(int nodes, const config::Settings& settings) {
  topo::OfflineOptions o;
  o.nodes = nodes;
  o.params = topo::Params::fromSettings(settings);
  o.nvls = true;  // the search itself finds no NVLS channels where the GPUs have no multicast
  return o;
}

Result<OfflineComm> simulateComm(const topo::TopoXml& topo, const topo::OfflineOptions& options) {
  OfflineComm out;
  WEFT_ASSIGN_OR_RETURN(out.domains, topo::simulateDomains(topo, 0, options, out.caches));
  if (out.domains.empty()) return invalidArgument(topo.source() + ": no GPU with a rank");
  for (const topo::SimulatedNode& d : out.domains) out.compCaps.push_back(topo::minCompCap(d.system));
  WEFT_ASSIGN_OR_RETURN(out.conn,
                        connect::connectOffline(out.caches, out.compCaps, out.domains.front().gpusPerNode, options,
                                                connect::rankCompCaps(out.domains)));
  return out;
}

namespace {

// Rank 0's inputs, then (when `loader` is given) the tuner, then the model, in NCCL's order.
Result<Tuned> tune(const topo::SimulatedNode& rank0, const connect::Connection& conn, const config::Settings& settings,
                   Constants constants, const plugin::TunerLoaderOptions* loader) {
  Tuned t;
  WEFT_ASSIGN_OR_RETURN(t.comm, commInputs(rank0.system, rank0.graphs, conn, P2pSettings::fromSettings(settings)));
  t.settings = TuneSettings::fromSettings(settings);
  log::ScopedDevice dev(0);
  if (loader != nullptr) {
    // Offline there is no communicator id to hash: init receives 0.
    WEFT_ASSIGN_OR_RETURN(CommTuner tuner, loadCommTuner(t.comm, settings, constants, *loader));
    t.tuner = std::move(tuner.hook);
    t.tunerName = std::move(tuner.name);
  }
  WEFT_ASSIGN_OR_RETURN(t.model, tuneModel(t.comm, constants, t.settings));
  logChannels(t.comm);
  return t;
}

}  // namespace

Result<Tuned> tuneComm(const topo::SimulatedNode& rank0, const connect::Connection& conn,
                       const config::Settings& settings, const Constants& constants) {
  return tune(rank0, conn, settings, constants, nullptr);
}

Result<Tuned> tuneCommWithTuner(const topo::SimulatedNode& rank0, const connect::Connection& conn,
                                const config::Settings& settings, const plugin::TunerLoaderOptions& options) {
  return tune(rank0, conn, settings, defaultConstants(), &options);
}

Result<Tuned> tuneCommWithTuner(const OfflineComm& comm, const config::Settings& settings,
                                const plugin::TunerLoaderOptions& options) {
  return tuneCommWithTuner(comm.domains.front(), comm.conn, settings, options);
}

}  // namespace weft::tune
