// Field-by-field conversions of every ncclNetProperties_vN layout to NetProperties.
#include <climits>

#include "core/plugin/net_adapter.h"

namespace weft::plugin {
namespace {

// The fields v6 introduced, present in every later version under the same names.
template <typename P>
NetProperties commonFields(const P& p) {
  NetProperties out;
  out.hasName = p.name != nullptr;
  if (p.name != nullptr) out.name = p.name;
  if (p.pciPath != nullptr) out.pciPath = p.pciPath;
  out.guid = p.guid;
  out.ptrSupport = p.ptrSupport;
  out.speedMbps = p.speed;
  out.port = p.port;
  out.latency = p.latency;
  out.maxComms = p.maxComms;
  out.maxRecvs = p.maxRecvs;
  return out;
}

// What NCCL assumes for versions that predate a field.
void pre9Defaults(NetProperties& out, int dev) {
  out.vdevs = {dev};
  out.maxP2pBytes = static_cast<size_t>(WEFT_NET_MAX_SIZE_DEFAULT);
  out.maxCollBytes = static_cast<size_t>(WEFT_COLLNET_MAX_SIZE_DEFAULT);
}

template <typename V>
std::vector<int> vdevList(const V& v) {
  std::vector<int> devs;
  int n = v.ndevs < 0 ? 0 : v.ndevs > WEFT_NET_MAX_DEVS_PER_NIC ? WEFT_NET_MAX_DEVS_PER_NIC : v.ndevs;
  for (int i = 0; i < n; ++i) devs.push_back(v.devs[i]);
  return devs;
}

// The v9 layout's fields, which v10 and v11 keep.
template <typename P>
NetProperties v9Fields(const P& p) {
  NetProperties out = commonFields(p);
  out.regIsGlobal = p.regIsGlobal;
  out.forceFlush = p.forceFlush;
  out.netDeviceType = p.netDeviceType;
  out.netDeviceVersion = p.netDeviceVersion;
  out.vdevs = vdevList(p.vProps);
  out.maxP2pBytes = p.maxP2pBytes;
  out.maxCollBytes = p.maxCollBytes;
  return out;
}

}  // namespace

NetProperties toNetProperties(const weft_net_properties_v6_t& p, int dev) {
  NetProperties out = commonFields(p);
  pre9Defaults(out, dev);
  return out;
}

NetProperties toNetProperties(const weft_net_properties_v7_t& p, int dev) {
  NetProperties out = commonFields(p);
  out.netDeviceType = p.netDeviceType;
  out.netDeviceVersion = p.netDeviceVersion;
  pre9Defaults(out, dev);
  return out;
}

NetProperties toNetProperties(const weft_net_properties_v8_t& p, int dev) {
  NetProperties out = commonFields(p);
  out.regIsGlobal = p.regIsGlobal;
  out.netDeviceType = p.netDeviceType;
  out.netDeviceVersion = p.netDeviceVersion;
  pre9Defaults(out, dev);
  return out;
}

NetProperties toNetProperties(const weft_net_properties_v9_t& p, int dev) { return v9Fields(p); }

NetProperties toNetProperties(const weft_net_properties_v11_t& p, int dev) {
  NetProperties out = v9Fields(p);
  out.maxMultiRequestSize = p.maxMultiRequestSize;
  return out;
}

}  // namespace weft::plugin
