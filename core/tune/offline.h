// The tuning of a communicator over N identical nodes, offline: node 0 simulated (each of its
// trim domains searched once), every rank connected, then rank 0's model, as `weft tune`,
// `weft search --tune`, the C API and the tests run it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/config/settings.h"
#include "core/connect/connection.h"
#include "core/topo/offline.h"
#include "core/topo/xml.h"
#include "core/tune/model.h"
#include "core/tune/tuner_hook.h"

namespace weft::plugin {
struct TunerLoaderOptions;
}

namespace weft::tune {

// Node 0's search and the connected communicator.
struct OfflineComm {
  std::vector<topo::SearchCache> caches;
  std::vector<int> compCaps;
  std::vector<topo::SimulatedNode> domains;  // node 0's trim domains; domains[0] is rank 0's
  connect::Connection conn;
};

// The search options of a communicator being tuned: NVLS searched wherever NCCL's NVLS init
// would enable it; no CollNet plugin.
topo::OfflineOptions tuneSearchOptions(int nodes, const config::Settings& settings);

// Simulates node 0 and connects all ranks.
Result<OfflineComm> simulateComm(const topo::TopoXml& topo, const topo::OfflineOptions& options);

// Rank 0's model and what the choice needs.
struct Tuned {
  CommInputs comm;
  TuneSettings settings;
  Model model;
  // The tuner plugin (tuneCommWithTuner), to pass to every choose(); null: none. Its finalize
  // runs when the Tuned is destroyed, as NCCL's at communicator destruction.
  std::unique_ptr<TunerHook> tuner;
  std::string tunerName;  // "weft-yaml (v5, libnccl-tuner-weft.so)"; empty without a tuner
};

// Builds rank 0's inputs from its simulated node (rank0: its system and graphs) and the
// connected communicator, and runs the model, logging NCCL's lines for rank 0 ("[0]"): the
// table, threadThresholds and the channel summary. `constants` are the model's constants
// (defaults, or as a tuner plugin edited them).
Result<Tuned> tuneComm(const topo::SimulatedNode& rank0, const connect::Connection& conn,
                       const config::Settings& settings, const Constants& constants = defaultConstants());
inline Result<Tuned> tuneComm(const OfflineComm& comm, const config::Settings& settings,
                              const Constants& constants = defaultConstants()) {
  return tuneComm(comm.domains.front(), comm.conn, settings, constants);
}

// As tuneComm from the default constants, with NCCL_TUNER_PLUGIN's tuner loaded and initialised
// between the inputs and the model, as NCCL 2.28.9's init does (loadCommTuner): the loader's and
// the plugin's init lines come before the model's, a v5 plugin's edited constants are the
// model's, and Tuned::tuner is set. Fails when the tuner fails under WEFT_TUNER_FALLBACK=deny.
Result<Tuned> tuneCommWithTuner(const topo::SimulatedNode& rank0, const connect::Connection& conn,
                                const config::Settings& settings, const plugin::TunerLoaderOptions& options);
Result<Tuned> tuneCommWithTuner(const OfflineComm& comm, const config::Settings& settings,
                                const plugin::TunerLoaderOptions& options);

}  // namespace weft::tune
