#include "core/topo/detect_sysfs.h"

#include <dirent.h>
#include <stdlib.h>

#include <cctype>
#include <cstdio>
#include <memory>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::topo {
namespace {

// 255: NCCL's MAX_STR_LEN, the most it reads of an attribute file.
constexpr size_t kMaxAttrLen = 255;

std::optional<std::string> realPath(const std::string& path) {
  std::unique_ptr<char, decltype(&::free)> real(::realpath(path.c_str(), nullptr), &::free);
  if (!real) return std::nullopt;
  return std::string(real.get());
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

}  // namespace

bool isBdf(std::string_view t) {
  if (t.size() != 12 || t[4] != ':' || t[7] != ':' || t[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11})
    if (!std::isxdigit(static_cast<unsigned char>(t[i]))) return false;
  return true;
}

std::optional<std::string> Sysfs::pciPath(std::string_view busId) const {
  if (!isBdf(busId)) return std::nullopt;
  std::string id = toLower(busId);
  return realPath(root_ + "/class/pci_bus/" + id.substr(0, 7) + "/../../" + id);
}

std::string Sysfs::read(const std::string& dir, std::string_view file) const {
  std::string path = dir + "/" + std::string(file);
  std::string value;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buf[kMaxAttrLen];
    size_t n = std::fread(buf, 1, sizeof(buf), f);
    std::fclose(f);
    value.assign(buf, n);
  }
  if (value.empty()) {
    WEFT_INFO(log::kGraph, "Topology detection : could not read %s, ignoring", path.c_str());
    return value;
  }
  value.pop_back();
  return value;
}

std::string Sysfs::subsystem(const std::string& dir) const {
  auto real = realPath(dir + "/subsystem");
  if (!real) return "";
  return real->substr(real->rfind('/') + 1);
}

std::vector<std::string> Sysfs::bcmLinks(std::string_view busId) const {
  std::vector<std::string> peers;
  std::string dir = root_ + "/kernel/pci_switch_link/virtual_switch_links/" + toLower(busId);
  std::unique_ptr<DIR, DirCloser> d(::opendir(dir.c_str()));
  if (!d) return peers;
  while (const dirent* e = ::readdir(d.get())) {
    std::string name = e->d_name;
    if (name.size() == 12 && pciPath(name)) peers.push_back(name);
  }
  return peers;
}

std::string Sysfs::numaCpumap(std::string_view numaId) const {
  return read(root_ + "/devices/system/node/node" + std::string(numaId), "cpumap");
}

}  // namespace weft::topo
