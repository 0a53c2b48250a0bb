// Which network interfaces the socket plugin uses, chosen as NCCL does: NCCL_SOCKET_IFNAME
// (comma list of prefixes; a leading '^' excludes, a leading '=' asks for exact names), else
// the first non-empty class of: ib*, anything but docker/lo/virbr, docker*, lo, virbr*.
// NCCL_SOCKET_FAMILY (AF_INET / AF_INET6) restricts the address family.
#pragma once

#include <sys/socket.h>

#include <string>
#include <string_view>
#include <vector>

namespace weft::socket {

// One usable address: the first one found per interface name.
struct Interface {
  std::string name;
  sockaddr_storage addr{};
  socklen_t addrLen = 0;
  int family() const { return addr.ss_family; }
};

// NCCL's interface-name filter. `spec` empty matches everything.
bool matchesIfName(std::string_view ifName, std::string_view spec);

// Picks interfaces from `all` (in getifaddrs order), at most `max`. `family` is AF_UNSPEC,
// AF_INET or AF_INET6. Pure: unit-tested with made-up lists.
std::vector<Interface> selectInterfaces(const std::vector<Interface>& all, std::string_view spec, int family,
                                        size_t max);

// This machine's interfaces that are up and have an IPv4 or (non link-local) IPv6 address.
std::vector<Interface> listInterfaces();

// "192.0.2.2:5000" / "[::1]:5000" for logs; without the port when `withPort` is false.
std::string addressToString(const sockaddr* addr, bool withPort = true);

// Link speed from /sys/class/net/<if>/speed in Mbps; 10000 (10 Gb/s) when unknown, as NCCL.
int linkSpeedMbps(const std::string& ifName);
// The PCI device behind the interface (/sys/.../device resolved), or "" (virtual interfaces).
std::string pciPath(const std::string& ifName);
// The PCI vendor id of the interface's device, or 0.
unsigned pciVendor(const std::string& ifName);

}  // namespace weft::socket
