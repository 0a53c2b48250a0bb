#include "plugins/net-socket/interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <cstring>
#include <fstream>

namespace weft::socket {
namespace {

std::vector<std::string_view> splitList(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

bool sameName(const std::vector<Interface>& list, const std::string& name) {
  for (const Interface& i : list)
    if (i.name == name) return true;
  return false;
}

}  // namespace

bool matchesIfName(std::string_view ifName, std::string_view spec) {
  if (spec.empty()) return true;
  bool exclude = false, exact = false;
  if (spec.front() == '^') {
    exclude = true;
    spec.remove_prefix(1);
  }
  if (!spec.empty() && spec.front() == '=') {
    exact = true;
    spec.remove_prefix(1);
  }
  bool hit = false;
  for (std::string_view item : splitList(spec)) {
    hit = hit || (exact ? ifName == item : ifName.substr(0, item.size()) == item);
  }
  return exclude ? !hit : hit;
}

std::vector<Interface> selectInterfaces(const std::vector<Interface>& all, std::string_view spec, int family,
                                        size_t max) {
  auto pick = [&](std::string_view filter) {
    std::vector<Interface> out;
    for (const Interface& i : all) {
      if (out.size() >= max) break;
      if (family != AF_UNSPEC && i.family() != family) continue;
      if (!matchesIfName(i.name, filter) || sameName(out, i.name)) continue;
      out.push_back(i);
    }
    return out;
  };
  if (!spec.empty()) return pick(spec);
  // NCCL's default preference; the NCCL_COMM_ID subnet step does not apply to a plugin.
  for (std::string_view filter : {"ib", "^docker,lo,virbr", "docker", "=lo", "virbr"}) {
    std::vector<Interface> out = pick(filter);
    if (!out.empty()) return out;
  }
  return {};
}

std::vector<Interface> listInterfaces() {
  std::vector<Interface> out;
  struct ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (struct ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || (ifa->ifa_flags & IFF_UP) == 0) continue;
    int fam = ifa->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (fam == AF_INET6) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(ifa->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr)) continue;  // not routable without a scope
    }
    Interface i;
    i.name = ifa->ifa_name;
    i.addrLen = fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&i.addr, ifa->ifa_addr, i.addrLen);
    out.push_back(std::move(i));
  }
  freeifaddrs(list);
  return out;
}

std::string addressToString(const sockaddr* addr, bool withPort) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr->sa_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
    port = ntohs(a->sin_port);
    return withPort ? std::string(host) + ":" + std::to_string(port) : std::string(host);
  }
  if (addr->sa_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
    port = ntohs(a->sin6_port);
    return withPort ? "[" + std::string(host) + "]:" + std::to_string(port) : std::string(host);
  }
  return "family " + std::to_string(addr->sa_family);
}

int linkSpeedMbps(const std::string& ifName) {
  std::ifstream f("/sys/class/net/" + ifName + "/speed");
  long speed = 0;
  // Virtual interfaces (lo, most VM NICs) give EINVAL or -1: NCCL then assumes 10 Gb/s.
  if (!(f >> speed) || speed <= 0 || speed > INT_MAX) return 10000;
  return static_cast<int>(speed);
}

std::string pciPath(const std::string& ifName) {
  std::string link = "/sys/class/net/" + ifName + "/device";
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return {};
  return resolved;
}

unsigned pciVendor(const std::string& ifName) {
  std::ifstream f("/sys/class/net/" + ifName + "/device/vendor");
  unsigned vendor = 0;
  if (!(f >> std::hex >> vendor)) return 0;
  return vendor;
}

}  // namespace weft::socket
