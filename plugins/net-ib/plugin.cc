#include "plugins/net-ib/plugin.h"

#include <mutex>
#include <string>

#include "plugins/net-ib/config.h"
#include "plugins/net-ib/devices.h"
#include "plugins/net-ib/gid.h"
#include "plugins/net-ib/log.h"

namespace weft::ib {
namespace {

struct State {
  std::mutex mutex;
  bool discovered = false;
  Config config;
  Discovery found;  // fixed after discovery
};
State& state() {
  // Destroyed when the plugin is unloaded; comms hold their own references to the devices.
  static State s;
  return s;
}

void logDiscovery(const State& s) {
  if (s.found.devices.empty()) {
    IB_INFO("NET/IB : No device found: %s", s.found.note.c_str());
    return;
  }
  std::string list;
  for (size_t i = 0; i < s.found.devices.size(); ++i) {
    const Device& d = s.found.devices[i];
    list += " [" + std::to_string(i) + "]" + d.hca->name + ":" + std::to_string(d.port) + "/" +
            (d.linkLayer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB");
    if (d.linkLayer == IBV_LINK_LAYER_ETHERNET) list += "(gid " + std::to_string(d.gidIndex) + " " + gidToString(d.gid) + ")";
  }
  std::string note = s.found.note.empty() ? "" : " (" + s.found.note + ")";
  IB_INFO("NET/IB : Using%s%s", list.c_str(), note.c_str());
}

const Device* device(int dev) {
  State& s = state();
  if (dev < 0 || static_cast<size_t>(dev) >= s.found.devices.size()) return nullptr;
  return &s.found.devices[static_cast<size_t>(dev)];
}

weft_result_t notImplemented(const char* call) {
  return IB_FAIL(weftInternalError, "NET/IB: %s: the RC data path is not implemented in this build", call);
}

}  // namespace

weft_result_t init(weft_debug_logger_t logger) {
  setLogger(logger);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.discovered) return weftSuccess;
  s.config = readConfig();
  s.found = discover(s.config);
  s.discovered = true;
  logDiscovery(s);
  return weftSuccess;
}

weft_result_t devices(int* ndev) {
  if (ndev == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: devices: null pointer");
  *ndev = static_cast<int>(state().found.devices.size());
  return weftSuccess;
}

weft_result_t getProperties(int dev, weft_net_properties_v11_t* props) {
  const Device* d = device(dev);
  if (d == nullptr || props == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: getProperties: bad device %d", dev);
  *props = weft_net_properties_v11_t{
      .name = const_cast<char*>(d->name.c_str()),
      .pciPath = d->hca->pciPath.empty() ? nullptr : const_cast<char*>(d->hca->pciPath.c_str()),
      .guid = d->hca->guid,
      .ptrSupport = WEFT_PTR_HOST,
      .regIsGlobal = 0,
      .forceFlush = 0,
      .speed = d->speedMbps,
      .port = d->port,
      .latency = 0,
      .maxComms = 65536,  // one RC QP per comm: far below any HCA's QP count
      .maxRecvs = 8,
      .netDeviceType = WEFT_NET_DEVICE_HOST,
      .netDeviceVersion = WEFT_NET_DEVICE_INVALID_VERSION,
      .vProps = {.ndevs = 1, .devs = {dev}},
      .maxP2pBytes = d->maxMessage,
      .maxCollBytes = d->maxMessage,
      .maxMultiRequestSize = 1,
  };
  return weftSuccess;
}

weft_result_t listen(int dev, void* handle, void** listenComm) {
  if (device(dev) == nullptr || handle == nullptr || listenComm == nullptr) {
    return IB_FAIL(weftInvalidArgument, "NET/IB: listen: bad device %d or null pointer", dev);
  }
  return notImplemented("listen");
}
weft_result_t connect(int dev, void* handle, void** sendComm) {
  if (device(dev) == nullptr || handle == nullptr || sendComm == nullptr) {
    return IB_FAIL(weftInvalidArgument, "NET/IB: connect: bad device %d or null pointer", dev);
  }
  return notImplemented("connect");
}
weft_result_t accept(void*, void**) { return notImplemented("accept"); }
weft_result_t regMr(void*, void*, size_t, int, void**) { return notImplemented("regMr"); }
weft_result_t regMrDmaBuf(void*, void*, size_t, int, uint64_t, int, void**) { return notImplemented("regMrDmaBuf"); }
weft_result_t deregMr(void*, void*) { return notImplemented("deregMr"); }
weft_result_t isend(void*, void*, size_t, int, void*, void**) { return notImplemented("isend"); }
weft_result_t irecv(void*, int, void**, const size_t*, const int*, void**, void**) { return notImplemented("irecv"); }
weft_result_t iflush(void*, int, void**, int*, void**, void**) { return notImplemented("iflush"); }
weft_result_t test(void*, int*, int*) { return notImplemented("test"); }
weft_result_t closeSend(void*) { return notImplemented("closeSend"); }
weft_result_t closeRecv(void*) { return notImplemented("closeRecv"); }
weft_result_t closeListen(void*) { return notImplemented("closeListen"); }

}  // namespace weft::ib
