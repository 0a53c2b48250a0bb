// Loading one tuner plugin: NCCL's name resolution, the process-wide registry of loaded
// libraries, and symbol probing newest first.
#include "core/plugin/tuner_loader.h"

#include <strings.h>

#include <filesystem>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::plugin {

namespace {
constexpr uint64_t kTunerLog = log::kInit | log::kTuning;  // NCCL's subsystems for these lines
}

LoadedTuner::LoadedTuner(std::shared_ptr<SharedLibrary> library, std::unique_ptr<TunerApi> api, std::string symbol)
    : library_(std::move(library)), api_(std::move(api)), symbol_(std::move(symbol)) {}

LoadedTuner::~LoadedTuner() {
  WEFT_INFO(kTunerLog, "TUNER/Plugin: Closing tuner: '%s'", name());
  api_.reset();  // the adapter points into the library: drop it before dlclose
}

std::string LoadedTuner::fileName() const { return std::filesystem::path(path()).filename().string(); }

const char* LoadedTuner::name() const { return api_->name() != nullptr ? api_->name() : "(unnamed)"; }

std::vector<std::string> tunerCandidateFiles(std::string_view value, const std::vector<std::string>& pluginDirs) {
  std::string name(value);  // NCCL uses the value untrimmed
  if (name.empty()) return {"libnccl-tuner.so"};
  std::vector<std::string> out = {name};
  bool isFileName = startsWith(name, "lib") && name.ends_with(".so");
  if (name.find('/') != std::string::npos || isFileName) return out;
  std::string ncclName = "libnccl-tuner-" + name + ".so";
  out.push_back(ncclName);
  // weft's addition: its own plugin folders, after everything NCCL would have tried.
  for (const std::string& dir : pluginDirs) out.push_back((std::filesystem::path(dir) / ncclName).string());
  return out;
}

namespace {

bool isStaticPluginName(const std::string& name) {
  // NCCL: strncasecmp(name, "STATIC_PLUGIN", strlen(name)) == 0, so any prefix matches.
  return !name.empty() && name.size() <= 13 && strncasecmp(name.c_str(), "STATIC_PLUGIN", name.size()) == 0;
}


// Probes v5 … v2. Null (with the reason) when the library exports none of them.
Result<std::shared_ptr<LoadedTuner>> adopt(std::shared_ptr<SharedLibrary> lib) {
  for (int v = WEFT_TUNER_ABI_NEWEST; v >= WEFT_TUNER_ABI_OLDEST; --v) {
    std::string sym = WEFT_TUNER_PLUGIN_SYMBOL_PREFIX + std::to_string(v);
    const void* table = lib->symbol(sym.c_str());
    if (table == nullptr) continue;
    auto api = makeTunerAdapter(v, table);
    // A table without init or getCollInfo cannot be called; NCCL would crash on it.
    const auto* head = static_cast<const weft_tuner_v5_t*>(table);  // every version: name, init, getCollInfo, last
    if (head->init == nullptr || head->getCollInfo == nullptr || head->finalize == nullptr) {
      return internalError(lib->path() + ": " + sym + " has a NULL init, getCollInfo or " +
                           (v == 5 ? "finalize" : "destroy"));
    }
    return std::make_shared<LoadedTuner>(std::move(lib), std::move(api), std::move(sym));
  }
  std::string others;
  for (int v : {1, 6, 7}) {
    std::string sym = WEFT_TUNER_PLUGIN_SYMBOL_PREFIX + std::to_string(v);
    if (lib->symbol(sym.c_str()) != nullptr) others += (others.empty() ? "" : ", ") + sym;
  }
  std::string msg = lib->path() + ": no ncclTunerPlugin_v5 … ncclTunerPlugin_v2 symbol";
  if (!others.empty()) msg += " (it exports " + others + ", which NCCL 2.28 and weft do not load)";
  return invalidUsage(msg);
}

// Shares one LoadedTuner per resolved path.
Result<std::shared_ptr<LoadedTuner>> adoptShared(std::shared_ptr<SharedLibrary> lib) {
  auto& reg = LoadedByPath<LoadedTuner>::process();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto& slot = reg.byPath[lib->path()];
  if (auto existing = slot.lock()) return existing;  // our extra dlopen reference is dropped
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<LoadedTuner> loaded, adopt(std::move(lib)));
  slot = loaded;
  return loaded;
}

// Opens the first candidate that exists. Null when none does; logs as NCCL's openPluginLib.
std::shared_ptr<SharedLibrary> openTunerLibrary(std::string_view value, const TunerLoaderOptions& options,
                                                Status& failure) {
  std::string missing;
  for (const std::string& file : tunerCandidateFiles(value, options.pluginDirs)) {
    SharedLibrary::Opened opened = isStaticPluginName(file) ? SharedLibrary::openProgram() : SharedLibrary::open(file);
    if (opened.library) return opened.library;
    if (opened.error.notFound) {
      missing += " " + file;
    } else {
      WEFT_INFO(kTunerLog, "TUNER/Plugin: %s: %s", file.c_str(), opened.error.message.c_str());
      if (failure.isOk()) failure = internalError(file + ": " + opened.error.message);
    }
  }
  if (!missing.empty()) WEFT_INFO(kTunerLog, "TUNER/Plugin: Could not find:%s", missing.c_str());
  return nullptr;
}

}  // namespace

TunerLoad loadTunerPlugin(std::string_view value, std::string_view setBy, const TunerLoaderOptions& options) {
  TunerLoad out;
  const bool isSet = !setBy.empty();
  if (isSet) {
    WEFT_INFO(log::kEnv | log::kTuning, "NCCL_TUNER_PLUGIN set by %.*s to %.*s", static_cast<int>(setBy.size()),
              setBy.data(), static_cast<int>(value.size()), value.data());
  }
  if (isSet && iequals(value, "none")) return out;
  const bool asked = isSet && !value.empty();
  Status openFailure;
  std::shared_ptr<SharedLibrary> lib = openTunerLibrary(value, options, openFailure);
  bool fromNet = false;
  if (lib == nullptr && !options.netLibraryPath.empty()) {
    SharedLibrary::Opened opened = SharedLibrary::open(options.netLibraryPath);
    lib = opened.library;
    fromNet = lib != nullptr;
  }
  if (lib == nullptr) {
    if (asked && openFailure.isOk()) {
      std::string tried;
      for (const std::string& f : tunerCandidateFiles(value, options.pluginDirs)) tried += " " + f;
      openFailure = invalidArgument("tuner plugin '" + std::string(value) + "' not found (tried" + tried + ")");
    }
    if (asked) out.failure = std::move(openFailure);
    return out;
  }
  const std::string path = lib->path();
  Result<std::shared_ptr<LoadedTuner>> loaded = adoptShared(std::move(lib));
  if (!loaded) {
    if (!fromNet) WEFT_INFO(kTunerLog, "External tuner plugin %s is unsupported", path.c_str());
    // A net plugin without a tuner is the normal case; a tuner library without one is a fault.
    if (!fromNet && (asked || loaded.status().code() != Code::kInvalidUsage)) out.failure = loaded.status();
    return out;
  }
  out.tuner = *loaded;
  WEFT_INFO(kTunerLog, "TUNER/Plugin: Using %s (v%d)", out.tuner->name(), out.tuner->abiVersion());
  if (fromNet) {
    WEFT_INFO(kTunerLog, "TUNER/Plugin: found %s in the net plugin's library %s", out.tuner->symbol().c_str(),
              path.c_str());
  } else {
    WEFT_INFO(kTunerLog, "Successfully loaded external tuner plugin %s", path.c_str());
  }
  return out;
}

}  // namespace weft::plugin
