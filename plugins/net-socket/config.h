// The socket plugin's settings, read from the environment at init as NCCL's own socket
// transport does (a plugin cannot see the host's settings table).
#pragma once

#include <string>

namespace weft::socket {

// NCCL's limits: at most 16 helper threads and 64 data sockets per connection.
inline constexpr int kMaxThreads = 16;
inline constexpr int kMaxSockets = 64;

struct Config {
  std::string ifName;  // NCCL_SOCKET_IFNAME ("" = NCCL's default order)
  int family = 0;      // NCCL_SOCKET_FAMILY: AF_UNSPEC, AF_INET or AF_INET6
  int nThreads = 0;    // helper threads per connection (0: the caller's thread moves the data)
  int nSocks = 0;      // data sockets per connection, spread over the threads
};

// Reads NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY, NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD.
// `vendor` is the PCI vendor of the first device, for NCCL's automatic thread counts
// (-2, the default: AWS 0x1d0f → 2 threads × 8 sockets, Google 0x1ae0 → 4 × 1, others 0).
// Out-of-range values are clamped with a WARN, as NCCL does.
Config readConfig(unsigned vendor);

// Only the interface part (needed before devices, hence before `vendor` is known).
Config readInterfaceConfig();

}  // namespace weft::socket
