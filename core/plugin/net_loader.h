// Net plugin loading and selection, as NCCL 2.28 does it plus weft's own plugin names and a
// fallback policy:
//  - NCCL_NET_PLUGIN: comma list tried in order ("none": no external plugin; unset: the single
//    default libnccl-net.so). Each entry is dlopen'ed as given, then as libnccl-net-<name>.so
//    (NCCL's rule). weft's own plugins are named weft-<kind> (weft-socket, weft-ofi, weft-ib):
//    their files libweft-net-<kind>.so are found in weft's plugin folders, and their NCCL names
//    libnccl-net-weft-<kind>.so on the linker's path. Names without "weft-" are NCCL's only, so
//    "ofi" means aws-ofi-nccl's libnccl-net-ofi.so and never weft's plugin.
//  - weft's own ib and socket plugins follow the external ones, like NCCL's internal IB/Socket.
//  - Symbols are probed newest first, ncclNetPlugin_v11 … v6; each version is adapted to NetApi.
//  - NCCL_NET picks a plugin by its name (case-insensitive); others are skipped.
//  - WEFT_NET_FALLBACK=allow (default, NCCL's behaviour): a plugin that cannot be loaded,
//    initialised, or finds no device lets the next one be tried. deny: that is an error. The
//    implicit default libnccl-net.so and a weft plugin that is not built are "absent", not failed.
// One INFO line says which file a name loaded, another names the chosen file, ABI version and
// device count; a WARN names the symbol or call that failed for any plugin that was found but
// could not be used.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/config/settings.h"
#include "core/plugin/library.h"
#include "core/plugin/net_api.h"

namespace weft::plugin {

// One plugin library and its adapter. Shared by every user in the process; the library is
// dlclosed when the last shared_ptr goes (the adapter is destroyed first).
class LoadedNet {
 public:
  LoadedNet(std::shared_ptr<SharedLibrary> library, std::unique_ptr<NetApi> api, std::string symbol);
  ~LoadedNet();
  LoadedNet(const LoadedNet&) = delete;
  LoadedNet& operator=(const LoadedNet&) = delete;

  NetApi& api() const { return *api_; }
  int abiVersion() const { return api_->abiVersion(); }
  const std::string& path() const { return library_->path(); }
  const std::string& symbol() const { return symbol_; }  // "ncclNetPlugin_v11"
  // The file name without folders, for log lines.
  std::string fileName() const;

 private:
  std::shared_ptr<SharedLibrary> library_;
  std::unique_ptr<NetApi> api_;
  std::string symbol_;
};

// The prefix of weft's own plugin names: weft-socket is libweft-net-socket.so.
inline constexpr const char* kWeftPluginPrefix = "weft-";

struct NetLoaderOptions {
  std::vector<std::string> pluginDirs = defaultPluginDirs();    // for libweft-net-<kind>.so
  std::vector<std::string> builtins = {"weft-ib", "weft-socket"};  // weft's own, in this order
};

// The file names tried for one NCCL_NET_PLUGIN entry, in order (pure; for tests and logs).
std::vector<std::string> candidateFiles(std::string_view entry, const std::vector<std::string>& pluginDirs);

// Loads one plugin by NCCL_NET_PLUGIN-style name or path. kInvalidArgument when no candidate
// file exists (the message lists what was tried); kInternalError when a file was found but is
// not a usable plugin (message names the file and the symbol or field at fault).
Result<std::shared_ptr<LoadedNet>> loadNetPlugin(std::string_view entry, const NetLoaderOptions& options);

class NetInstance;
// Initialises `plugin` for one user: init, devices > 0, device 0 of a kind weft can drive.
Result<std::unique_ptr<NetInstance>> initNet(std::shared_ptr<LoadedNet> plugin, uint64_t commId);

// A plugin chosen for use, initialised, with its context. finalize() runs on destruction.
class NetInstance {
 public:
  NetInstance(std::shared_ptr<LoadedNet> plugin, void* ctx, int ndev)
      : plugin_(std::move(plugin)), ctx_(ctx), ndev_(ndev) {}
  ~NetInstance();
  NetInstance(const NetInstance&) = delete;
  NetInstance& operator=(const NetInstance&) = delete;

  NetApi& api() const { return plugin_->api(); }
  const LoadedNet& plugin() const { return *plugin_; }
  void* ctx() const { return ctx_; }
  int deviceCount() const { return ndev_; }

 private:
  friend Result<std::unique_ptr<NetInstance>> initNet(std::shared_ptr<LoadedNet>, uint64_t);
  std::shared_ptr<LoadedNet> plugin_;
  void* ctx_;
  int ndev_;
};

enum class Fallback { kAllow, kDeny };
Result<Fallback> parseFallback(std::string_view text);

// Picks the net plugin per NCCL_NET_PLUGIN, NCCL_NET and WEFT_NET_FALLBACK in `settings`.
// Exports the settings plugins read from their environment (set by the YAML policy or a conf
// file) without overwriting the process environment. selectNet calls it first.
void exportPluginEnvironment(const config::Settings& settings);

Result<std::unique_ptr<NetInstance>> selectNet(const config::Settings& settings,
                                               const NetLoaderOptions& options, uint64_t commId = 0);

}  // namespace weft::plugin
