// The IB plugin's settings, read from the environment at init as NCCL's IB transport reads
// them (a plugin cannot see the host's settings table; weft's loader exports policy values to
// the environment before plugins load). Defaults are NCCL's.
#pragma once

#include <string>

namespace weft::ib {

struct Config {
  bool disabled = false;   // NCCL_IB_DISABLE=1: report no device
  std::string hca;         // NCCL_IB_HCA filter ("" = every active port)
  int gidIndex = -1;       // NCCL_IB_GID_INDEX (-1: chosen per port, see gid.h)
  int roceVersion = 2;     // NCCL_IB_ROCE_VERSION_NUM (1 or 2), for the automatic GID choice
  int addressFamily = 0;   // NCCL_IB_ADDR_FAMILY: AF_INET (default) or AF_INET6, same use
  int timeout = 20;        // NCCL_IB_TIMEOUT: QP ack timeout exponent, 4.096 us * 2^n
  int retryCount = 7;      // NCCL_IB_RETRY_CNT: QP retry_cnt (and rnr_retry)
};

// Reads NCCL_IB_DISABLE, NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_IB_ROCE_VERSION_NUM,
// NCCL_IB_ADDR_FAMILY, NCCL_IB_TIMEOUT and NCCL_IB_RETRY_CNT. A value that is not an integer
// in the setting's range keeps the default, with a WARN naming the setting.
Config readConfig();

}  // namespace weft::ib
