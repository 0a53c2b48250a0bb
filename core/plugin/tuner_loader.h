// Tuner plugin loading and use, as NCCL 2.28.9 does it (src/plugin/tuner.cc, plugin_open.cc)
// plus weft's plugin folders and a failure policy:
//  - NCCL_TUNER_PLUGIN: "none" (any case) disables tuners. Unset or empty: libnccl-tuner.so.
//    A value is dlopen'ed as given; then, unless it contains '/' or is already lib*.so, as
//    libnccl-tuner-<value>.so (from weft's plugin folders too, so NCCL_TUNER_PLUGIN=weft finds
//    weft's YAML rule tuner in the build or install tree). Any prefix of "STATIC_PLUGIN" (NCCL
//    compares only the given length) means the program itself.
//  - If no library opens, the net plugin's library is searched, which is how tuners that ship
//    inside a net plugin (aws-ofi-nccl) load by default.
//  - Symbols are probed ncclTunerPlugin_v5, v4, v3, v2; each version is adapted to TunerApi.
//  - NCCL's INFO lines: "TUNER/Plugin: Could not find: …", "TUNER/Plugin: Using NAME (vN)",
//    "Successfully loaded external tuner plugin PATH", "External tuner plugin X is unsupported".
//  - WEFT_TUNER_FALLBACK=allow (default): a tuner that was asked for but cannot be found,
//    has no known symbol, or whose init fails is dropped with a WARN and the cost model decides
//    alone. deny: each of these is an error. NCCL drops the first two silently (INFO) and fails
//    the communicator on the third; docs/tuner.md says why weft differs.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/config/settings.h"
#include "core/plugin/library.h"
#include "core/plugin/net_loader.h"  // Fallback, parseFallback: the same policy words
#include "core/plugin/tuner_adapter.h"
#include "core/tune/tuner_hook.h"

namespace weft::plugin {

// One tuner library and its adapter, shared by every communicator of the process.
class LoadedTuner {
 public:
  LoadedTuner(std::shared_ptr<SharedLibrary> library, std::unique_ptr<TunerApi> api, std::string symbol);
  ~LoadedTuner();
  LoadedTuner(const LoadedTuner&) = delete;
  LoadedTuner& operator=(const LoadedTuner&) = delete;

  TunerApi& api() const { return *api_; }
  int abiVersion() const { return api_->abiVersion(); }
  const std::string& path() const { return library_->path(); }
  const std::string& symbol() const { return symbol_; }  // "ncclTunerPlugin_v5"
  std::string fileName() const;
  // The plugin's own name, or "(unnamed)" when its table's name is NULL.
  const char* name() const;

 private:
  std::shared_ptr<SharedLibrary> library_;
  std::unique_ptr<TunerApi> api_;
  std::string symbol_;
};

struct TunerLoaderOptions {
  std::vector<std::string> pluginDirs = defaultPluginDirs();  // for libnccl-tuner-<name>.so
  // The chosen net plugin's library (NetInstance::plugin().path()); empty: none.
  std::string netLibraryPath;
};

// The file names tried for a NCCL_TUNER_PLUGIN value, in order (pure; for tests and logs).
std::vector<std::string> tunerCandidateFiles(std::string_view value, const std::vector<std::string>& pluginDirs);

// What a load found.
struct TunerLoad {
  std::shared_ptr<LoadedTuner> tuner;  // null: no tuner (not found, "none", or no symbol)
  Status failure;  // why a tuner that was asked for is absent (ok when none was asked for)
};

// Resolves and loads per NCCL_TUNER_PLUGIN = `value`. `setBy` says where the value came from
// ("environment", "weft.yaml:3"; empty when it was not set). Never fails by itself: the caller
// applies the fallback policy to `failure`.
TunerLoad loadTunerPlugin(std::string_view value, std::string_view setBy, const TunerLoaderOptions& options);

// What init hands the plugin (NCCL: init(&ctx, commHash, nRanks, nNodes, logger,
// &nvlDomainInfo, &tunerConstants)). `constants` must point to the model's constants: a v5
// plugin may rewrite them before the model runs. `maxChannels` is the communicator's channel
// count, the most a tuner's nChannels can obtain.
struct TunerInitArgs {
  uint64_t commId = 0;
  size_t nRanks = 1;
  size_t nNodes = 1;
  weft_nvl_domain_info_v5_t nvlDomain{};
  weft_tuner_constants_v5_t* constants = nullptr;
  int maxChannels = 0;  // 0: NCCL's MAXCHANNELS (64)
};

// An initialised tuner for one communicator: the hook the cost model calls. finalize runs on
// destruction. getCollInfo checks the plugin's answer (tuner_hook.cc and docs/tuner.md):
//  - an error return fails the operation, as in NCCL;
//  - a cell that was disabled (negative) before the call stays disabled;
//  - NaN and negative cells become IGNORE;
//  - a table left with no usable cell (where the model had one) fails the operation;
//  - nChannels < 0 is treated as 0 (keep the model's), above maxChannels it is clamped.
// Each kind of misbehaviour is one WARN per instance, not one per call.
class TunerInstance final : public tune::TunerHook {
 public:
  TunerInstance(std::shared_ptr<LoadedTuner> plugin, void* ctx, int maxChannels);
  ~TunerInstance() override;
  TunerInstance(const TunerInstance&) = delete;
  TunerInstance& operator=(const TunerInstance&) = delete;

  Status getCollInfo(const tune::CollQuery& query, float* cost, int* nChannels) override;
  const LoadedTuner& plugin() const { return *plugin_; }
  void* ctx() const { return ctx_; }

 private:
  void warnOnce(unsigned kind, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

  std::shared_ptr<LoadedTuner> plugin_;
  void* ctx_;
  int maxChannels_;
  std::atomic<unsigned> warned_{0};
};

// Calls init. The instance owns the context from then on.
Result<std::unique_ptr<TunerInstance>> initTuner(std::shared_ptr<LoadedTuner> plugin, const TunerInitArgs& args);

// NCCL_TUNER_PLUGIN, WEFT_TUNER_FALLBACK: load and init the tuner for a communicator. Null (and
// ok) when there is no tuner to use.
Result<std::unique_ptr<TunerInstance>> selectTuner(const config::Settings& settings, const TunerInitArgs& args,
                                                   const TunerLoaderOptions& options);

}  // namespace weft::plugin
