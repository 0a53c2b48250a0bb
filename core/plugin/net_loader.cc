// Loading one net plugin: file name resolution, the process-wide registry that shares (and
// reference-counts) loaded libraries, and symbol probing newest first.
#include "core/plugin/net_loader.h"

#include <filesystem>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/plugin/net_adapter.h"

namespace weft::plugin {

LoadedNet::LoadedNet(std::shared_ptr<SharedLibrary> library, std::unique_ptr<NetApi> api,
                     std::string symbol)
    : library_(std::move(library)), api_(std::move(api)), symbol_(std::move(symbol)) {}

LoadedNet::~LoadedNet() {
  WEFT_INFO(log::kNet | log::kInit, "NET/Plugin: unloading %s", fileName().c_str());
  api_.reset();  // the adapter points into the library: drop it before dlclose
}

std::string LoadedNet::fileName() const { return std::filesystem::path(path()).filename().string(); }

std::vector<std::string> candidateFiles(std::string_view entry, const std::vector<std::string>& pluginDirs) {
  std::string name(trim(entry));
  if (name.empty()) return {"libnccl-net.so"};
  std::vector<std::string> out = {name};
  // NCCL: a bare name that is not already lib*.so is also tried as libnccl-net-<name>.so.
  bool isFileName = startsWith(name, "lib") && name.size() > 3 && name.ends_with(".so");
  if (name.find('/') != std::string::npos || isFileName) return out;
  out.push_back("libnccl-net-" + name + ".so");
  // weft's own plugins are weft-<kind> (their NCCL name is libnccl-net-weft-<kind>.so): their
  // files, libweft-net-<kind>.so, from weft's plugin folders first, then the linker's path.
  // Other names are NCCL's alone: "ofi" is aws-ofi-nccl's libnccl-net-ofi.so, never weft's.
  if (!startsWith(name, kWeftPluginPrefix) || name.size() == std::string_view(kWeftPluginPrefix).size()) return out;
  std::string weftName = "libweft-net-" + name.substr(std::string_view(kWeftPluginPrefix).size()) + ".so";
  for (const std::string& dir : pluginDirs) out.push_back((std::filesystem::path(dir) / weftName).string());
  out.push_back(weftName);
  return out;
}

namespace {


template <typename Net>
Status checkTable(const Net* t, const std::string& file, const std::string& symbol) {
  if (t->name == nullptr) return internalError(file + ": " + symbol + ".name is NULL");
  struct Field { const char* name; const void* fn; };
  const Field required[] = {
      {"init", reinterpret_cast<const void*>(t->init)},
      {"devices", reinterpret_cast<const void*>(t->devices)},
      {"getProperties", reinterpret_cast<const void*>(t->getProperties)},
      {"listen", reinterpret_cast<const void*>(t->listen)},
      {"connect", reinterpret_cast<const void*>(t->connect)},
      {"accept", reinterpret_cast<const void*>(t->accept)},
      {"regMr", reinterpret_cast<const void*>(t->regMr)},
      {"deregMr", reinterpret_cast<const void*>(t->deregMr)},
      {"isend", reinterpret_cast<const void*>(t->isend)},
      {"irecv", reinterpret_cast<const void*>(t->irecv)},
      {"test", reinterpret_cast<const void*>(t->test)},
      {"closeSend", reinterpret_cast<const void*>(t->closeSend)},
      {"closeRecv", reinterpret_cast<const void*>(t->closeRecv)},
      {"closeListen", reinterpret_cast<const void*>(t->closeListen)},
  };
  for (const Field& f : required) {
    if (f.fn == nullptr) return internalError(file + ": " + symbol + "." + f.name + " is NULL");
  }
  return Status::ok();
}

Status checkTable(int version, const void* table, const std::string& file, const std::string& symbol) {
  switch (version) {
    case 6: return checkTable(static_cast<const weft_net_v6_t*>(table), file, symbol);
    case 7: return checkTable(static_cast<const weft_net_v7_t*>(table), file, symbol);
    case 8: return checkTable(static_cast<const weft_net_v8_t*>(table), file, symbol);
    case 9: return checkTable(static_cast<const weft_net_v9_t*>(table), file, symbol);
    case 10: return checkTable(static_cast<const weft_net_v10_t*>(table), file, symbol);
    default: return checkTable(static_cast<const weft_net_v11_t*>(table), file, symbol);
  }
}

// "no ncclNetPlugin_v6 … v11 symbol (it exports ncclNetPlugin_v12, ncclNetPlugin_v5)"
Status noKnownSymbol(const SharedLibrary& lib) {
  std::string others;
  for (int v = 20; v >= 1; --v) {
    if (v >= WEFT_NET_ABI_OLDEST && v <= WEFT_NET_ABI_NEWEST) continue;
    std::string sym = WEFT_NET_PLUGIN_SYMBOL_PREFIX + std::to_string(v);
    if (lib.symbol(sym.c_str()) != nullptr) others += (others.empty() ? "" : ", ") + sym;
  }
  std::string msg = lib.path() + ": no ncclNetPlugin_v6 … ncclNetPlugin_v11 symbol";
  if (!others.empty()) msg += " (it exports " + others + ", which weft does not load)";
  return internalError(msg);
}

Result<std::shared_ptr<LoadedNet>> adopt(std::shared_ptr<SharedLibrary> lib) {
  for (int v = WEFT_NET_ABI_NEWEST; v >= WEFT_NET_ABI_OLDEST; --v) {
    std::string sym = WEFT_NET_PLUGIN_SYMBOL_PREFIX + std::to_string(v);
    const void* table = lib->symbol(sym.c_str());
    if (table == nullptr) continue;
    WEFT_TRY(checkTable(v, table, lib->path(), sym));
    auto api = makeNetAdapter(v, table);
    return std::make_shared<LoadedNet>(std::move(lib), std::move(api), std::move(sym));
  }
  return noKnownSymbol(*lib);
}

}  // namespace

namespace {

// " (weft's own libfabric plugin is 'weft-ofi')" when a bare name misses and weft has a plugin
// of that kind: names like ofi belong to other projects since weft stopped taking them.
std::string weftNameHint(const std::string& entry, const std::vector<std::string>& pluginDirs) {
  std::string name(trim(entry));
  if (name.empty() || name.find('/') != std::string::npos || startsWith(name, kWeftPluginPrefix)) return {};
  std::string file = "libweft-net-" + name + ".so";
  for (const std::string& dir : pluginDirs) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::path(dir) / file, ec)) {
      return "; weft's own plugin of that kind is '" + std::string(kWeftPluginPrefix) + name + "' (" +
             (std::filesystem::path(dir) / file).string() + ")";
    }
  }
  return {};
}

}  // namespace

Result<std::shared_ptr<LoadedNet>> loadNetPlugin(std::string_view entry, const NetLoaderOptions& options) {
  std::vector<std::string> tried;
  for (const std::string& file : candidateFiles(entry, options.pluginDirs)) {
    SharedLibrary::Opened opened = SharedLibrary::open(file);
    if (!opened.library) {
      if (!opened.error.notFound) return internalError(file + ": " + opened.error.message);
      tried.push_back(file);
      continue;
    }
    auto& reg = LoadedByPath<LoadedNet>::process();
    std::lock_guard<std::mutex> lock(reg.mutex);
    auto& slot = reg.byPath[opened.library->path()];
    if (auto existing = slot.lock()) return existing;  // our extra dlopen reference is dropped
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<LoadedNet> loaded, adopt(std::move(opened.library)));
    slot = loaded;
    WEFT_INFO(log::kNet | log::kInit, "NET/Plugin: '%s' loads %s (%s, name %s)", std::string(trim(entry)).c_str(),
              loaded->path().c_str(), loaded->symbol().c_str(), loaded->api().name());
    return loaded;
  }
  std::string list;
  for (const std::string& t : tried) list += (list.empty() ? "" : ", ") + t;
  return invalidArgument("net plugin '" + std::string(entry) + "' not found (tried " + list + ")" +
                         weftNameHint(std::string(entry), options.pluginDirs));
}

}  // namespace weft::plugin
