// A loaded tuner as the cost model's hook: init, the checks on every getCollInfo answer, and
// selection with the fallback policy. What each check does and why: docs/tuner.md.
#include <cmath>
#include <cstdarg>
#include <cstring>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/plugin/net_adapter.h"  // pluginStatus, hostLogger
#include "core/plugin/tuner_loader.h"

namespace weft::plugin {

namespace {

constexpr int kCells = tune::kNumAlgorithms * tune::kNumProtocols;
// NCCL's pick starts from 3600000000 µs: a cell at or above it is never chosen.
constexpr float kNeverPicked = 3600000000.0f;
constexpr int kMaxChannels = 64;  // MAXCHANNELS in NCCL 2.28

enum WarnKind : unsigned {
  kWarnDisabledCell = 1u << 0,
  kWarnBadCell = 1u << 1,
  kWarnNoCell = 1u << 2,
  kWarnNegativeChannels = 1u << 3,
  kWarnError = 1u << 4,
};

bool usable(float c) { return c >= 0.0f && c < kNeverPicked; }  // false for NaN

const char* funcName(int func) {
  static const char* const kNames[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
  return func >= 0 && func < tune::kNumFuncs ? kNames[func] : "collective";
}

const char* cellName(int i) {
  static const char* const kCellNames[kCells] = {
      "Tree/LL", "Tree/LL128", "Tree/Simple", "Ring/LL", "Ring/LL128", "Ring/Simple",
      "CollNetDirect/LL", "CollNetDirect/LL128", "CollNetDirect/Simple", "CollNetChain/LL", "CollNetChain/LL128",
      "CollNetChain/Simple", "NVLS/LL", "NVLS/LL128", "NVLS/Simple", "NVLSTree/LL", "NVLSTree/LL128",
      "NVLSTree/Simple", "PAT/LL", "PAT/LL128", "PAT/Simple"};
  return kCellNames[i];
}

}  // namespace

TunerInstance::TunerInstance(std::shared_ptr<LoadedTuner> plugin, void* ctx, int maxChannels)
    : plugin_(std::move(plugin)), ctx_(ctx), maxChannels_(maxChannels) {}

TunerInstance::~TunerInstance() {
  int rc = plugin_->api().finalize(ctx_);
  if (rc != 0) {
    WEFT_WARN("TUNER/Plugin: %s", pluginStatus(plugin_->name(), plugin_->abiVersion() == 5 ? "finalize" : "destroy", rc)
                                      .message()
                                      .c_str());
  }
}

void TunerInstance::warnOnce(unsigned kind, const char* fmt, ...) {
  if ((warned_.fetch_or(kind, std::memory_order_relaxed) & kind) != 0) return;
  char text[log::kNcclLineMax + 1];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  WEFT_WARN("TUNER/Plugin: %s (%s): %s (reported once)", plugin_->name(), plugin_->fileName().c_str(), text);
}

Status TunerInstance::getCollInfo(const tune::CollQuery& q, float* cost, int* nChannels) {
  float before[kCells];
  std::memcpy(before, cost, sizeof(before));
  int channels = 0;
  int rc = plugin_->api().getCollInfo(ctx_, q.func, q.bytes, q.numPipeOps, cost, tune::kNumAlgorithms,
                                      tune::kNumProtocols, q.regBuff, &channels);
  if (rc != 0) {
    // NCCL propagates the error and the operation fails; so does weft (never a silent retune).
    std::memcpy(cost, before, sizeof(before));
    Status s = pluginStatus(plugin_->name(), "getCollInfo", rc);
    warnOnce(kWarnError, "getCollInfo(%s, %zu bytes) returned %d: the operation fails, as in NCCL", funcName(q.func),
             q.bytes, rc);
    return std::move(s).withContext(strprintf("tuner for %s of %zu bytes", funcName(q.func), q.bytes));
  }
  bool hadUsable = false;
  bool hasUsable = false;
  for (int i = 0; i < kCells; ++i) {
    hadUsable = hadUsable || usable(before[i]);
    if (cost[i] == before[i]) {  // most cells: untouched (a NaN never compares equal)
      hasUsable = hasUsable || usable(cost[i]);
      continue;
    }
    if (!(before[i] >= 0.0f) && !std::isnan(cost[i]) && cost[i] >= 0.0f) {
      // Disabled or unsupported before the call (any negative: also fp8's -1024): NCCL would
      // run it; weft keeps it off.
      warnOnce(kWarnDisabledCell, "getCollInfo(%s, %zu bytes) enabled %s, which is disabled here; ignored",
               funcName(q.func), q.bytes, cellName(i));
      cost[i] = before[i];
    } else if (std::isnan(cost[i]) || cost[i] < 0.0f) {
      if (before[i] >= 0.0f && cost[i] != tune::kIgnore) {
        warnOnce(kWarnBadCell, "getCollInfo(%s, %zu bytes) wrote %g to %s; read as IGNORE, as NCCL skips it",
                 funcName(q.func), q.bytes, static_cast<double>(cost[i]), cellName(i));
      }
      cost[i] = before[i] < 0.0f ? before[i] : tune::kIgnore;
    }
    hasUsable = hasUsable || usable(cost[i]);
  }
  if (hadUsable && !hasUsable) {
    warnOnce(kWarnNoCell, "getCollInfo(%s, %zu bytes) left no usable algorithm/protocol", funcName(q.func), q.bytes);
    return internalError(strprintf("tuner %s (%s): no algorithm/protocol available for %s of %zu bytes after "
                                   "getCollInfo (every cell negative, NaN or above 3.6e9 µs)",
                                   plugin_->name(), plugin_->fileName().c_str(), funcName(q.func), q.bytes));
  }
  if (channels < 0) {
    warnOnce(kWarnNegativeChannels, "getCollInfo(%s, %zu bytes) set nChannels=%d; keeping the model's channels",
             funcName(q.func), q.bytes, channels);
    channels = 0;
  }
  // NCCL's scheduler clamps a task's channels to the communicator's: the same, done here
  // (MAXCHANNELS when the caller did not say).
  const int limit = maxChannels_ > 0 ? maxChannels_ : kMaxChannels;
  if (channels > limit) channels = limit;
  *nChannels = channels;
  return Status::ok();
}

Result<std::unique_ptr<TunerInstance>> initTuner(std::shared_ptr<LoadedTuner> plugin, const TunerInitArgs& args) {
  if (args.constants == nullptr) return invalidArgument("tuner init: no cost-model constants to hand the plugin");
  weft_nvl_domain_info_v5_t domain = args.nvlDomain;
  void* ctx = nullptr;
  int rc = plugin->api().init(&ctx, args.commId, args.nRanks, args.nNodes, hostLogger(), &domain, args.constants);
  if (rc != 0) return pluginStatus(plugin->name(), "init", rc).withContext(plugin->fileName());
  return std::make_unique<TunerInstance>(std::move(plugin), ctx, args.maxChannels);
}

Result<std::unique_ptr<TunerInstance>> selectTuner(const config::Settings& settings, const TunerInitArgs& args,
                                                   const TunerLoaderOptions& options) {
  if (args.constants == nullptr) return invalidArgument("tuner: no cost-model constants to hand the plugin");
  WEFT_ASSIGN_OR_RETURN(Fallback policy, parseFallback(settings.string("WEFT_TUNER_FALLBACK")));
  exportPluginEnvironment(settings);  // WEFT_TUNER_RULES_FILE etc. set by the YAML policy
  std::string setBy;
  if (settings.isSet("NCCL_TUNER_PLUGIN")) {
    const config::Value v = settings.history("NCCL_TUNER_PLUGIN").front();  // history() is a copy
    setBy = v.source == config::Source::kEnv ? "environment" : v.where;  // NCCL's wording for the environment
  }
  TunerLoad load = loadTunerPlugin(settings.string("NCCL_TUNER_PLUGIN"), setBy, options);
  Status failure = std::move(load.failure);
  if (load.tuner) {
    // The constants are the model's: a failed init must not leave them half rewritten.
    weft_tuner_constants_v5_t saved = *args.constants;
    auto instance = initTuner(load.tuner, args);
    if (instance) return std::move(*instance);
    *args.constants = saved;
    failure = instance.status();
  }
  if (failure.isOk()) return std::unique_ptr<TunerInstance>();
  if (policy == Fallback::kDeny) {
    WEFT_WARN("TUNER/Plugin: %s (WEFT_TUNER_FALLBACK=deny)", failure.message().c_str());
    return std::move(failure).withContext("tuner plugin (WEFT_TUNER_FALLBACK=deny)");
  }
  WEFT_WARN("TUNER/Plugin: %s; using the cost model without a tuner", failure.message().c_str());
  return std::unique_ptr<TunerInstance>();
}

}  // namespace weft::plugin
