#include "core/topo/params.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "core/base/strings.h"

namespace weft::topo {
namespace {

std::optional<int> levelIfSet(const config::Settings& s, std::string_view name) {
  if (!s.isSet(name)) return std::nullopt;
  return config::parsePathLevel(s.string(name));
}

bool flag(const config::Settings& s, std::string_view name, bool fallback) {
  const config::Value* v = s.lookup(name);
  if (v == nullptr) return fallback;
  auto i = parseInt(v->text, 0);
  return i ? *i == 1 : fallback;
}

}  // namespace

Params Params::fromSettings(const config::Settings& s) {
  Params p;
  // NCCL_P2P_DISABLE=1 wins over NCCL_P2P_LEVEL (ncclGetLevel reads the disable variable first).
  if (s.isSet("NCCL_P2P_DISABLE") && s.integer("NCCL_P2P_DISABLE") == 1) p.userP2pLevel = val(PathType::kLoc);
  else p.userP2pLevel = levelIfSet(s, "NCCL_P2P_LEVEL");
  p.userGdrLevel = levelIfSet(s, "NCCL_NET_GDR_LEVEL");
  p.netGdrRead = static_cast<int>(s.integer("NCCL_NET_GDR_READ"));
  p.netGdrC2c = s.integer("NCCL_NET_GDR_C2C") != 0;
  p.pxnDisable = flag(s, "NCCL_PXN_DISABLE", false);
  p.pxnC2c = s.integer("NCCL_PXN_C2C") != 0;
  p.nvbDisable = s.integer("NCCL_NVB_DISABLE") != 0;
  p.ignoreDisabledP2p = static_cast<int>(s.integer("NCCL_IGNORE_DISABLED_P2P"));
  p.netDisableIntra = flag(s, "NCCL_NET_DISABLE_INTRA", false);
  p.shmDisable = flag(s, "NCCL_SHM_DISABLE", false);
  std::string policy = s.string("NCCL_NETDEVS_POLICY");
  if (iequals(policy, "ALL")) {
    p.netDevsPolicy = NetDevsPolicy::kAll;
  } else if (policy.size() > 4 && iequals(policy.substr(0, 4), "MAX:") && std::atoi(policy.c_str() + 4) > 0) {
    p.netDevsPolicy = NetDevsPolicy::kMax;
    p.netDevsMax = std::atoi(policy.c_str() + 4);
  }
  p.crossNic = static_cast<int>(s.integer("NCCL_CROSS_NIC"));
  // ncclMinNchannels/ncclMaxNchannels: -2 means unset; the values are capped at MAXCHANNELS.
  int64_t minCh = s.integer("NCCL_MIN_NCHANNELS");
  p.minChannels = minCh == -2 ? 0 : static_cast<int>(std::clamp<int64_t>(minCh, 0, kMaxChannels));
  int64_t maxCh = s.integer("NCCL_MAX_NCHANNELS");
  p.maxChannels = maxCh == -2 ? kMaxChannels : static_cast<int>(std::clamp<int64_t>(maxCh, 1, kMaxChannels));
  // config.minCTAs/maxCTAs as NCCL's init sets them: the defaults 1 and MAXCHANNELS, replaced by
  // NCCL_MIN_CTAS/NCCL_MAX_CTAS when above 0 (NCCL leaves the default for 0 or less), capped at
  // MAXCHANNELS, and a minimum above the maximum lowered to it.
  auto ctas = [&](std::string_view name, int fallback) {
    if (!s.isSet(name)) return fallback;
    const int64_t v = s.integer(name);
    return v > 0 ? static_cast<int>(std::min<int64_t>(v, kMaxChannels)) : fallback;
  };
  p.minCTAs = ctas("NCCL_MIN_CTAS", 1);
  p.maxCTAs = ctas("NCCL_MAX_CTAS", kMaxChannels);
  p.minCTAs = std::min(p.minCTAs, p.maxCTAs);
  p.nvlsEnable = static_cast<int>(s.integer("NCCL_NVLS_ENABLE"));
  // NCCL_NVLS_NCHANNELS replaces config.nvlsCTAs; init turns 0 or less back to "unset".
  if (s.isSet("NCCL_NVLS_NCHANNELS")) {
    const int64_t v = s.integer("NCCL_NVLS_NCHANNELS");
    p.nvlsCTAs = v > 0 ? static_cast<int>(std::min<int64_t>(v, std::numeric_limits<int>::max())) : 0;
  }
  p.collnetNodeThreshold = static_cast<int>(
      std::clamp<int64_t>(s.integer("NCCL_COLLNET_NODE_THRESHOLD"), 0, std::numeric_limits<int>::max()));
  return p;
}

}  // namespace weft::topo
