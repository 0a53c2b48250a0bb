#include "plugins/net-ib/config.h"

#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

#include "plugins/net-ib/log.h"

namespace weft::ib {
namespace {

// The ranges are the settings table's (core/config/table.cc), which the verbs fields bound:
// timeout and retry_cnt are 5- and 3-bit fields of ibv_qp_attr.
int envInt(const char* name, int fallback, long min, long max) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 0);
  if (end == v || *end != '\0' || x < min || x > max) {
    IB_WARN("NET/IB: %s=%s: expected an integer in %ld..%ld; using %d", name, v, min, max, fallback);
    return fallback;
  }
  return static_cast<int>(x);
}

}  // namespace

Config readConfig() {
  Config c;
  c.disabled = envInt("NCCL_IB_DISABLE", 0, 0, 1) == 1;
  if (const char* v = std::getenv("NCCL_IB_HCA")) c.hca = v;
  c.gidIndex = envInt("NCCL_IB_GID_INDEX", c.gidIndex, -1, 255);
  c.roceVersion = envInt("NCCL_IB_ROCE_VERSION_NUM", c.roceVersion, 1, 2);
  c.timeout = envInt("NCCL_IB_TIMEOUT", c.timeout, 1, 31);
  c.retryCount = envInt("NCCL_IB_RETRY_CNT", c.retryCount, 0, 7);
  c.addressFamily = AF_INET;
  if (const char* v = std::getenv("NCCL_IB_ADDR_FAMILY"); v != nullptr && *v != '\0') {
    if (std::strcmp(v, "AF_INET6") == 0) c.addressFamily = AF_INET6;
    else if (std::strcmp(v, "AF_INET") != 0) IB_WARN("NET/IB: NCCL_IB_ADDR_FAMILY=%s: expected AF_INET or AF_INET6; using AF_INET", v);
  }
  return c;
}

}  // namespace weft::ib
