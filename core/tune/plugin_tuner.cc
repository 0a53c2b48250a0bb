#include "core/tune/plugin_tuner.h"

#include <cstring>

#include "core/base/strings.h"

namespace weft::tune {

namespace {

// tune::Constants and the ABI's weft_tuner_constants_v5_t are both ncclTunerConstants_v5_t;
// copied table by table so that a change to either shows up here at compile time.
template <typename To, typename From>
void copyTable(To& to, const From& from) {
  static_assert(sizeof(To) == sizeof(From), "constants tables differ in size");
  std::memcpy(&to, &from, sizeof(To));
}

weft_tuner_constants_v5_t toAbi(const Constants& c) {
  weft_tuner_constants_v5_t out{};
  copyTable(out.baseLatencies, c.baseLatencies);
  copyTable(out.hwLatencies, c.hwLatencies);
  copyTable(out.llMaxBws, c.llMaxBws);
  copyTable(out.perChMaxRingLL128Bws, c.perChMaxRingLL128Bws);
  copyTable(out.perChMaxTreeLL128Bws, c.perChMaxTreeLL128Bws);
  copyTable(out.perChMaxTreeBws, c.perChMaxTreeBws);
  copyTable(out.perChMaxNVLSTreeBws, c.perChMaxNVLSTreeBws);
  return out;
}

void fromAbi(const weft_tuner_constants_v5_t& a, Constants& c) {
  copyTable(c.baseLatencies, a.baseLatencies);
  copyTable(c.hwLatencies, a.hwLatencies);
  copyTable(c.llMaxBws, a.llMaxBws);
  copyTable(c.perChMaxRingLL128Bws, a.perChMaxRingLL128Bws);
  copyTable(c.perChMaxTreeLL128Bws, a.perChMaxTreeLL128Bws);
  copyTable(c.perChMaxTreeBws, a.perChMaxTreeBws);
  copyTable(c.perChMaxNVLSTreeBws, a.perChMaxNVLSTreeBws);
}

}  // namespace

Result<CommTuner> loadCommTuner(const CommInputs& comm, const config::Settings& settings, Constants& constants,
                                const plugin::TunerLoaderOptions& options, uint64_t commId) {
  weft_tuner_constants_v5_t abi = toAbi(constants);
  plugin::TunerInitArgs args{.commId = commId,
                             .nRanks = static_cast<size_t>(comm.nRanks),
                             .nNodes = static_cast<size_t>(comm.nNodes),
                             .nvlDomain = {comm.nNodes, comm.minLocalRanks, comm.maxLocalRanks},
                             .constants = &abi,
                             .maxChannels = comm.nChannels};
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<plugin::TunerInstance> instance, plugin::selectTuner(settings, args, options));
  CommTuner out;
  if (instance == nullptr) return out;
  fromAbi(abi, constants);  // what init left there (selectTuner restores them when init fails)
  const plugin::LoadedTuner& p = instance->plugin();
  out.name = strprintf("%s (v%d, %s)", p.name(), p.abiVersion(), p.fileName().c_str());
  out.hook = std::move(instance);
  return out;
}

}  // namespace weft::tune
