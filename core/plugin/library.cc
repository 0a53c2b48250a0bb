#include "core/plugin/library.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace weft::plugin {

SharedLibrary::Opened SharedLibrary::open(const std::string& name) {
  dlerror();  // clear a stale message so the one read below belongs to this call
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    std::string message = err ? err : "dlopen failed";
    // glibc reports a missing file as ENOENT's text; anything else means the file was found.
    bool notFound = message.find("No such file or directory") != std::string::npos;
    return Opened{nullptr, OpenError{notFound, std::move(message)}};
  }
  std::string path = name;
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    path = map->l_name;
  }
  return Opened{std::shared_ptr<SharedLibrary>(new SharedLibrary(handle, std::move(path))), {}};
}

SharedLibrary::Opened SharedLibrary::openProgram() {
  dlerror();
  void* handle = dlopen(nullptr, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return Opened{nullptr, OpenError{false, err ? err : "dlopen(NULL) failed"}};
  }
  return Opened{std::shared_ptr<SharedLibrary>(new SharedLibrary(handle, "STATIC_PLUGIN")), {}};
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* SharedLibrary::symbol(const char* name) const { return dlsym(handle_, name); }

namespace {

std::string directoryOfThisObject() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&defaultPluginDirs), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::error_code ec;
  auto p = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string() : p.parent_path().string();
}

std::string programLibDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (exe.parent_path().parent_path() / "lib").string();
}

}  // namespace

std::vector<std::string> defaultPluginDirs() {
  std::vector<std::string> candidates = {directoryOfThisObject(), programLibDir(),
                                         WEFT_PLUGIN_BUILD_DIR, WEFT_PLUGIN_INSTALL_DIR};
  std::vector<std::string> dirs;
  for (std::string& d : candidates) {
    std::error_code ec;
    if (d.empty() || !std::filesystem::is_directory(d, ec)) continue;
    bool seen = false;
    for (const std::string& e : dirs) seen = seen || std::filesystem::equivalent(e, d, ec);
    if (!seen) dirs.push_back(std::move(d));
  }
  return dirs;
}

}  // namespace weft::plugin
