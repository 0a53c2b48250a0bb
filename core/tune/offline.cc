#include "core/tune/offline.h"

#include "core/base/log.h"
#include "core/connect/offline.h"
#include "core/topo/paths.h"
#include "core/tune/inputs.h"

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
                        connect::connectOffline(out.caches, out.compCaps, out.domains.front().gpusPerNode, options));
  return out;
}

Result<Tuned> tuneComm(const topo::SimulatedNode& rank0, const connect::Connection& conn,
                       const config::Settings& settings, const Constants& constants) {
  Tuned t;
  WEFT_ASSIGN_OR_RETURN(t.comm, commInputs(rank0.system, rank0.graphs, conn, P2pSettings::fromSettings(settings)));
  t.settings = TuneSettings::fromSettings(settings);
  log::ScopedDevice dev(0);
  WEFT_ASSIGN_OR_RETURN(t.model, tuneModel(t.comm, constants, t.settings));
  logChannels(t.comm);
  return t;
}

}  // namespace weft::tune
