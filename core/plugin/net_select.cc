// Choosing the net plugin: the candidate list, NCCL_NET name matching, init and device checks,
// and the fallback policy.
#include <cstdlib>
#include <set>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/plugin/net_loader.h"

namespace weft::plugin {

NetInstance::~NetInstance() {
  Status s = plugin_->api().finalize(ctx_);
  if (!s) WEFT_WARN("NET/Plugin: %s", s.message().c_str());
}

Result<Fallback> parseFallback(std::string_view text) {
  if (text.empty() || iequals(text, "allow")) return Fallback::kAllow;
  if (iequals(text, "deny")) return Fallback::kDeny;
  return invalidArgument("WEFT_NET_FALLBACK=" + std::string(text) + ": expected allow or deny");
}

Result<std::unique_ptr<NetInstance>> initNet(std::shared_ptr<LoadedNet> plugin, uint64_t commId) {
  NetApi& api = plugin->api();
  const std::string file = plugin->fileName();
  void* ctx = nullptr;
  WEFT_TRY_CTX(api.init(&ctx, commId, WEFT_NET_TRAFFIC_CLASS_UNDEF), file);
  // From here on the context must be finalized whatever happens: the instance owns it.
  auto instance = std::make_unique<NetInstance>(std::move(plugin), ctx, 0);
  int ndev = 0;
  WEFT_TRY_CTX(api.devices(&ndev), file);
  if (ndev < 0) return internalError(strprintf("%s: devices() returned %d devices", file.c_str(), ndev));
  if (ndev == 0) return invalidUsage(file + ": " + api.name() + " found no device");
  NetProperties props;
  WEFT_TRY_CTX(api.getProperties(0, &props), file);
  if (!props.hasName) return internalError(file + ": getProperties(0) returned a NULL name");
  // NCCL drives host-proxied devices, and UNPACK offload at its one supported version only.
  bool unpackOk = props.netDeviceType == WEFT_NET_DEVICE_UNPACK &&
                  props.netDeviceVersion == WEFT_NET_DEVICE_UNPACK_VERSION;
  if (props.netDeviceType != WEFT_NET_DEVICE_HOST && !unpackOk) {
    return invalidUsage(strprintf("%s: device 0 has offload type %d version %d, which weft cannot drive",
                                  file.c_str(), props.netDeviceType, props.netDeviceVersion));
  }
  instance->ndev_ = ndev;
  return instance;
}

namespace {

struct Candidate {
  std::string entry;
  bool requested;  // named by the user (NCCL_NET_PLUGIN), as opposed to a default
};

std::vector<Candidate> candidates(const config::Settings& settings, const NetLoaderOptions& options) {
  std::vector<Candidate> out;
  if (settings.isSet("NCCL_NET_PLUGIN")) {
    std::string list = settings.string("NCCL_NET_PLUGIN");
    if (!iequals(trim(list), "none")) {
      for (std::string_view e : split(list, ',')) {
        if (!trim(e).empty()) out.push_back({std::string(trim(e)), true});
      }
    }
  } else {
    out.push_back({"libnccl-net.so", false});
  }
  for (const std::string& b : options.builtins) out.push_back({b, false});
  return out;
}

// Tries one candidate. Returns the instance, or null with `failure` set when it was found but
// unusable, or null with `failure` ok when it is absent or not the one NCCL_NET names.
std::unique_ptr<NetInstance> tryCandidate(const Candidate& c, const std::string& netName,
                                          const NetLoaderOptions& options, uint64_t commId,
                                          std::set<std::string>& seen, Status& failure) {
  auto loaded = loadNetPlugin(c.entry, options);
  if (!loaded) {
    bool absent = loaded.status().code() == Code::kInvalidArgument;
    if (absent && !c.requested) {
      WEFT_INFO(log::kNet | log::kInit, "NET/Plugin: %s", loaded.status().message().c_str());
      return nullptr;
    }
    failure = loaded.status();
    return nullptr;
  }
  std::shared_ptr<LoadedNet> plugin = *loaded;
  if (!seen.insert(plugin->path()).second) return nullptr;  // already tried under another name
  if (!netName.empty() && !iequals(plugin->api().name(), netName)) {
    WEFT_INFO(log::kNet | log::kInit, "NET/Plugin: skipping %s (%s): NCCL_NET=%s", plugin->fileName().c_str(),
              plugin->api().name(), netName.c_str());
    return nullptr;
  }
  auto instance = initNet(plugin, commId);
  if (instance) return std::move(*instance);
  failure = instance.status();
  return nullptr;
}

void logChosen(const NetInstance& n) {
  WEFT_INFO(log::kNet | log::kInit, "NET/Plugin: using %s from %s (%s), %d device%s", n.api().name(),
            n.plugin().path().c_str(), n.plugin().symbol().c_str(), n.deviceCount(),
            n.deviceCount() == 1 ? "" : "s");
}

}  // namespace

// Plugins read their settings (NCCL_SOCKET_*, NCCL_IB_*, …) from the environment, as NCCL's do.
// Values from the YAML policy or the conf files reach them the way NCCL's conf files reach
// NCCL: exported before the plugins load, never overwriting the process environment.
void exportPluginEnvironment(const config::Settings& settings) {
  for (const auto& [name, value] : settings.pluginEnvironment()) setenv(name.c_str(), value.c_str(), 0);
}

Result<std::unique_ptr<NetInstance>> selectNet(const config::Settings& settings,
                                               const NetLoaderOptions& options, uint64_t commId) {
  WEFT_ASSIGN_OR_RETURN(Fallback policy, parseFallback(settings.string("WEFT_NET_FALLBACK")));
  exportPluginEnvironment(settings);
  const std::string netName(trim(settings.string("NCCL_NET")));
  std::set<std::string> seen;
  for (const Candidate& c : candidates(settings, options)) {
    Status failure;
    std::unique_ptr<NetInstance> chosen = tryCandidate(c, netName, options, commId, seen, failure);
    if (chosen) {
      logChosen(*chosen);
      return chosen;
    }
    if (failure.isOk()) continue;
    if (policy == Fallback::kDeny) {
      WEFT_WARN("NET/Plugin: %s (WEFT_NET_FALLBACK=deny: not trying other plugins)", failure.message().c_str());
      return std::move(failure).withContext("net plugin '" + c.entry + "' (WEFT_NET_FALLBACK=deny)");
    }
    // A missing device is routine on hosts without that hardware; anything else is a real fault.
    if (failure.code() == Code::kInvalidUsage) {
      WEFT_INFO(log::kNet | log::kInit, "NET/Plugin: %s; trying the next plugin", failure.message().c_str());
    } else {
      WEFT_WARN("NET/Plugin: %s; trying the next plugin", failure.message().c_str());
    }
  }
  std::string why = netName.empty() ? "" : " named NCCL_NET=" + netName;
  WEFT_WARN("NET/Plugin: failed to initialize any NET plugin%s", why.c_str());
  return invalidUsage("no usable net plugin" + why);
}

}  // namespace weft::plugin
