#include "plugins/net-socket/config.h"

#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

#include "plugins/net-socket/log.h"

namespace weft::socket {
namespace {

// NCCL's -2 means "automatic"; anything unparsable is treated the same, with a WARN.
long envInt(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 0);
  if (end == v || *end != '\0') {
    SOCK_WARN("NET/Socket: %s=%s is not an integer; using the automatic value", name, v);
    return fallback;
  }
  return x;
}

}  // namespace

Config readInterfaceConfig() {
  Config c;
  if (const char* v = std::getenv("NCCL_SOCKET_IFNAME")) c.ifName = v;
  if (const char* v = std::getenv("NCCL_SOCKET_FAMILY")) {
    if (std::strcmp(v, "AF_INET") == 0) c.family = AF_INET;
    else if (std::strcmp(v, "AF_INET6") == 0) c.family = AF_INET6;
    else if (*v != '\0') SOCK_WARN("NET/Socket: NCCL_SOCKET_FAMILY=%s: expected AF_INET or AF_INET6; ignored", v);
  }
  return c;
}

Config readConfig(unsigned vendor) {
  Config c = readInterfaceConfig();
  long nThreads = envInt("NCCL_SOCKET_NTHREADS", -2);
  long nSocksPerThread = envInt("NCCL_NSOCKS_PERTHREAD", -2);
  long autoThreads = 0, autoSocks = 1;
  if (vendor == 0x1d0f) autoThreads = 2, autoSocks = 8;  // AWS ENA
  if (vendor == 0x1ae0) autoThreads = 4, autoSocks = 1;  // Google gVNIC
  if (nThreads < 0) nThreads = autoThreads;
  if (nSocksPerThread < 0) nSocksPerThread = autoSocks;
  if (nThreads > kMaxThreads) {
    SOCK_WARN("NET/Socket: NCCL_SOCKET_NTHREADS=%ld is above %d; using %d", nThreads, kMaxThreads, kMaxThreads);
    nThreads = kMaxThreads;
  }
  long nSocks = nThreads * nSocksPerThread;
  if (nSocks > kMaxSockets) {
    nSocksPerThread = kMaxSockets / nThreads;
    SOCK_WARN("NET/Socket: NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD is above %d; using %ld sockets per thread",
              kMaxSockets, nSocksPerThread);
    nSocks = nThreads * nSocksPerThread;
  }
  c.nThreads = static_cast<int>(nThreads);
  // Threads without sockets would have nothing to do: no sockets means no threads.
  c.nSocks = static_cast<int>(nSocks);
  if (c.nSocks == 0) c.nThreads = 0;
  return c;
}

}  // namespace weft::socket
