// Everything the topology stages read from the settings, parsed once. Stages take a Params
// value instead of looking settings up by name, so tests can build one directly.
#pragma once

#include <optional>

#include "core/config/settings.h"
#include "core/topo/types.h"

namespace weft::topo {

enum class NetDevsPolicy { kAuto, kAll, kMax };

struct Params {
  // Paths
  std::optional<int> userP2pLevel;  // NCCL_P2P_DISABLE=1 (LOC) or NCCL_P2P_LEVEL
  std::optional<int> userGdrLevel;  // NCCL_NET_GDR_LEVEL
  int netGdrRead = -2;              // NCCL_NET_GDR_READ (-2: auto)
  bool netGdrC2c = true;            // NCCL_NET_GDR_C2C
  bool pxnDisable = false;          // NCCL_PXN_DISABLE
  bool pxnC2c = true;               // NCCL_PXN_C2C
  bool nvbDisable = false;          // NCCL_NVB_DISABLE
  int ignoreDisabledP2p = 0;        // NCCL_IGNORE_DISABLED_P2P
  bool netDisableIntra = false;     // NCCL_NET_DISABLE_INTRA
  bool shmDisable = false;          // NCCL_SHM_DISABLE
  NetDevsPolicy netDevsPolicy = NetDevsPolicy::kAuto;  // NCCL_NETDEVS_POLICY
  int netDevsMax = 0;
  // Search
  int crossNic = 2;                 // NCCL_CROSS_NIC
  int minChannels = 0;              // ncclMinNchannels()
  int maxChannels = kMaxChannels;   // ncclMaxNchannels()
  // Connect: the communicator's config.minCTAs / config.maxCTAs (NCCL_MIN_CTAS / NCCL_MAX_CTAS)
  int minCTAs = 1;
  int maxCTAs = kMaxChannels;
  int collnetNodeThreshold = 2;     // NCCL_COLLNET_NODE_THRESHOLD: fewer nodes turn CollNet off
  int nvlsEnable = 2;               // NCCL_NVLS_ENABLE: 0 never searches or connects NVLS
  int nvlsCTAs = 0;                 // config.nvlsCTAs (NCCL_NVLS_NCHANNELS above 0); 0: by GPU generation
  // Not a setting: the search keeps every link bandwidth as NCCL's float and takes no shortcut
  // (no integer arithmetic, no skipped candidates). Slow; tests compare the fast search with it.
  bool searchFloatReference = false;

  // Reads every field from `settings` with NCCL's rules (aliases, -2 = auto, level names).
  static Params fromSettings(const config::Settings& settings);
};

}  // namespace weft::topo
