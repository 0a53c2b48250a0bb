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

// Both ways: the two structs have the same field names.
template <typename To, typename From>
void copyConstants(To& to, const From& from) {
  copyTable(to.baseLatencies, from.baseLatencies);
  copyTable(to.hwLatencies, from.hwLatencies);
  copyTable(to.llMaxBws, from.llMaxBws);
  copyTable(to.perChMaxRingLL128Bws, from.perChMaxRingLL128Bws);
  copyTable(to.perChMaxTreeLL128Bws, from.perChMaxTreeLL128Bws);
  copyTable(to.perChMaxTreeBws, from.perChMaxTreeBws);
  copyTable(to.perChMaxNVLSTreeBws, from.perChMaxNVLSTreeBws);
}

}  // namespace

Result<CommTuner> loadCommTuner(const CommInputs& comm, const config::Settings& settings, Constants& constants,
                                const plugin::TunerLoaderOptions& options, uint64_t commId) {
  weft_tuner_constants_v5_t abi{};
  copyConstants(abi, constants);
  plugin::TunerInitArgs args{.commId = commId,
                             .nRanks = static_cast<size_t>(comm.nRanks),
                             .nNodes = static_cast<size_t>(comm.nNodes),
                             .nvlDomain = {comm.nNodes, comm.minLocalRanks, comm.maxLocalRanks},
                             .constants = &abi,
                             .maxChannels = comm.nChannels};
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<plugin::TunerInstance> instance, plugin::selectTuner(settings, args, options));
  CommTuner out;
  if (instance == nullptr) return out;
  copyConstants(constants, abi);  // what init left there (selectTuner restores them when init fails)
  const plugin::LoadedTuner& p = instance->plugin();
  out.name = strprintf("%s (v%d, %s)", p.name(), p.abiVersion(), p.fileName().c_str());
  out.hook = std::move(instance);
  return out;
}

}  // namespace weft::tune
