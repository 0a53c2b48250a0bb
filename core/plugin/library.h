// A dlopen'ed shared library, owned: dlclose runs when the last owner lets go. Used by the
// plugin loader only; plugins themselves never see it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace weft::plugin {

class SharedLibrary {
 public:
  // Why an open failed: the file is not there (a normal case when probing candidate names), or
  // it is there and could not be loaded (missing dependency, wrong architecture…).
  struct OpenError {
    bool notFound = false;
    std::string message;  // dlerror()'s text
  };
  struct Opened {
    std::shared_ptr<SharedLibrary> library;  // null on failure
    OpenError error;
  };

  // dlopen(name, RTLD_NOW | RTLD_LOCAL). `name` is searched like dlopen does when it has no '/'.
  static Opened open(const std::string& name);
  // dlopen(NULL): the program and the libraries it loaded globally (NCCL's STATIC_PLUGIN).
  static Opened openProgram();

  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The address of an exported symbol, or null. Never logs.
  void* symbol(const char* name) const;
  // The file the dynamic linker actually loaded (absolute when found through a search path).
  const std::string& path() const { return path_; }
  void* nativeHandle() const { return handle_; }

 private:
  SharedLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

// Loaded plugins of one kind (net, tuner) by resolved path, shared by the whole process. The
// weak_ptr never keeps a library alive; the registry itself is never destroyed, since plugins
// may unload during exit.
template <typename Loaded>
struct LoadedByPath {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<Loaded>> byPath;
  static LoadedByPath& process() {
    static LoadedByPath* r = new LoadedByPath();
    return *r;
  }
};

// Directories where weft looks for its own plugins (libweft-net-*.so) before the dynamic
// linker's search path: next to the library or program that contains the loader, ../lib from
// the program, the build tree's plugin folder and the install libdir. Existing folders only.
std::vector<std::string> defaultPluginDirs();

}  // namespace weft::plugin
