// The bootstrap's network interface, chosen as NCCL's ncclFindInterfaces does: NCCL_SOCKET_IFNAME
// when set, else ib*, then anything but docker/lo/virbr, then docker*, lo*, virbr*; with
// NCCL_COMM_ID, the interface on the root's subnet first. NCCL_SOCKET_FAMILY forces the family.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/config/values.h"
#include "core/runtime/socket.h"

namespace weft::runtime {

struct Interface {
  std::string name;
  SockAddr addr;  // port 0
  SockAddr mask;
};

// Running interfaces with an IPv4 or IPv6 (not link-local) address, in the kernel's order.
std::vector<Interface> listInterfaces();

struct InterfaceChoice {
  config::IfList ifname;     // NCCL_SOCKET_IFNAME (empty: unset)
  int family = 0;            // AF_INET, AF_INET6, or 0 for any (NCCL_SOCKET_FAMILY)
  std::optional<SockAddr> root;  // NCCL_COMM_ID's address: prefer its subnet
};

// The interface the bootstrap listens on. Errors name the setting that excluded everything.
Result<Interface> findInterface(const InterfaceChoice& choice, const std::vector<Interface>& all);

}  // namespace weft::runtime
