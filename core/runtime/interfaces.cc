#include "core/runtime/interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>

#include <cstring>

#include "core/base/strings.h"

namespace weft::runtime {

namespace {

bool sameSubnet(const Interface& itf, const SockAddr& a) {
  if (itf.addr.family() != a.family()) return false;
  const auto* x = reinterpret_cast<const unsigned char*>(itf.addr.family() == AF_INET
                                                              ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&itf.addr.raw)->sin_addr)
                                                              : static_cast<const void*>(&itf.addr.raw.sin6_addr));
  const auto* y = reinterpret_cast<const unsigned char*>(a.family() == AF_INET
                                                              ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&a.raw)->sin_addr)
                                                              : static_cast<const void*>(&a.raw.sin6_addr));
  const auto* m = reinterpret_cast<const unsigned char*>(itf.mask.family() == AF_INET
                                                              ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&itf.mask.raw)->sin_addr)
                                                              : static_cast<const void*>(&itf.mask.raw.sin6_addr));
  size_t n = a.family() == AF_INET ? 4 : 16;
  for (size_t i = 0; i < n; ++i)
    if ((x[i] & m[i]) != (y[i] & m[i])) return false;
  return true;
}

bool hasPrefix(const std::string& name, const char* prefix) { return name.rfind(prefix, 0) == 0; }

}  // namespace

std::vector<Interface> listInterfaces() {
  std::vector<Interface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    // NCCL filters on neither flag; weft skips interfaces that are administratively down (as its
    // socket plugin does) but not those whose carrier is still coming up: a veth or a bridge port
    // reports IFF_RUNNING up to a second after `ip link set up`, and a rank started in that window
    // must still find its interface (TCP retries the connect once the carrier is there).
    if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_UP) == 0) continue;
    int fam = i->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    Interface itf;
    itf.name = i->ifa_name;
    std::memcpy(&itf.addr.raw, i->ifa_addr, fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    if (i->ifa_netmask != nullptr)
      std::memcpy(&itf.mask.raw, i->ifa_netmask, fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    if (fam == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&itf.addr.raw.sin6_addr)) continue;
    out.push_back(itf);
  }
  freeifaddrs(list);
  return out;
}

Result<Interface> findInterface(const InterfaceChoice& choice, const std::vector<Interface>& all) {
  std::vector<const Interface*> usable;
  for (const Interface& i : all)
    if (choice.family == 0 || i.addr.family() == choice.family) usable.push_back(&i);
  if (!choice.ifname.empty()) {
    for (const Interface* i : usable)
      if (choice.ifname.matches(i->name)) return *i;
    std::string names;
    for (const Interface& i : all) names += (names.empty() ? "" : ", ") + i.name;
    return invalidUsage("Bootstrap : no socket interface found: NCCL_SOCKET_IFNAME matches none of the "
                        "interfaces that are up with an address (" + names + ")");
  }
  if (choice.root) {
    for (const Interface* i : usable)
      if (sameSubnet(*i, *choice.root)) return *i;
    // The root may be reached through a router: fall through to NCCL's default order.
  }
  auto first = [&](auto pred) -> const Interface* {
    for (const Interface* i : usable)
      if (pred(i->name)) return i;
    return nullptr;
  };
  auto special = [](const std::string& n) { return hasPrefix(n, "docker") || hasPrefix(n, "lo") || hasPrefix(n, "virbr"); };
  const Interface* pick = first([](const std::string& n) { return hasPrefix(n, "ib"); });
  if (pick == nullptr) pick = first([&](const std::string& n) { return !special(n); });
  if (pick == nullptr) pick = first([](const std::string& n) { return hasPrefix(n, "docker"); });
  if (pick == nullptr) pick = first([](const std::string& n) { return hasPrefix(n, "lo"); });
  if (pick == nullptr) pick = first([](const std::string& n) { return hasPrefix(n, "virbr"); });
  if (pick == nullptr) return invalidUsage("Bootstrap : no socket interface found (no interface that is up with an address)");
  return *pick;
}

}  // namespace weft::runtime
