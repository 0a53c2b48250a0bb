#include "plugins/net-ofi/plugin.h"

#include <dlfcn.h>

#include <climits>
#include <mutex>
#include <string>

#include "plugins/net-ofi/comm.h"
#include "plugins/net-ofi/config.h"
#include "plugins/net-ofi/connect.h"
#include "plugins/net-ofi/devices.h"
#include "plugins/net-ofi/log.h"

namespace weft::ofi {
namespace {

struct State {
  std::mutex mutex;
  bool discovered = false;
  Config config;
  Discovery found;  // fixed after discovery
};
State& state() {
  // Destroyed when the plugin is unloaded. It holds only fi_info copies: every open libfabric
  // object belongs to a comm or listener and is closed with it.
  static State s;
  return s;
}

void logDiscovery(const State& s) {
  std::string where = s.config.fiProvider.empty() ? "" : ", FI_PROVIDER=" + s.config.fiProvider;
  if (!s.config.providers.empty()) where += ", WEFT_OFI_PROVIDER=" + s.config.providers;
  const unsigned major = FI_MAJOR(fi_version()), minor = FI_MINOR(fi_version());
  if (s.found.devices.empty()) {
    OFI_INFO("NET/OFI : No device found (libfabric %u.%u%s): %s", major, minor, where.c_str(), s.found.note.c_str());
    return;
  }
  std::string list;
  for (size_t i = 0; i < s.found.devices.size(); ++i) {
    const Device& d = *s.found.devices[i];
    list += " [" + std::to_string(i) + "]" + d.name + ":" + std::to_string(d.speedMbps) + "Mbps(" + d.speedSource + ")";
  }
  OFI_INFO("NET/OFI : Using provider %s (libfabric %u.%u%s):%s", s.found.provider.c_str(), major, minor, where.c_str(),
           list.c_str());
}

// Once loaded by the plugin, libfabric stays loaded after the plugin is unloaded (weft unloads
// a net plugin when its last user goes; NCCL never does). The provider libraries libfabric pulls
// in (psm2, infinipath, libnl) allocate in their constructors state that only they can reach:
// unloading them strands it (LeakSanitizer reports it), and each reload would allocate again.
void keepLibfabricLoaded() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&fi_getinfo), &info) == 0 || info.dli_fname == nullptr) return;
  // RTLD_NOLOAD: already loaded as the plugin's dependency; this only marks it never to unload.
  // The handle is dropped on purpose.
  (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

Device* device(int dev) {
  State& s = state();
  if (dev < 0 || static_cast<size_t>(dev) >= s.found.devices.size()) return nullptr;
  return s.found.devices[static_cast<size_t>(dev)].get();
}

template <typename T>
T* as(void* p, Kind kind) {
  auto* t = static_cast<T*>(p);
  return t != nullptr && t->kind() == kind ? t : nullptr;
}

Comm* anyComm(void* p) {
  auto* c = static_cast<Comm*>(p);
  return c != nullptr && (c->kind() == Kind::kSend || c->kind() == Kind::kRecv) ? c : nullptr;
}

}  // namespace

weft_result_t init(weft_debug_logger_t logger) {
  setLogger(logger);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.discovered) return weftSuccess;
  keepLibfabricLoaded();
  s.config = readConfig();
  s.found = discover(s.config);
  s.discovered = true;
  logDiscovery(s);
  return weftSuccess;
}

weft_result_t devices(int* ndev) {
  if (ndev == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: devices: null pointer");
  *ndev = static_cast<int>(state().found.devices.size());
  return weftSuccess;
}

weft_result_t getProperties(int dev, weft_net_properties_v11_t* props) {
  const Device* d = device(dev);
  if (d == nullptr || props == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: getProperties: bad device %d", dev);
  size_t endpoints = d->info->domain_attr->ep_cnt;
  *props = weft_net_properties_v11_t{
      .name = const_cast<char*>(d->name.c_str()),
      .pciPath = d->pciPath.empty() ? nullptr : const_cast<char*>(d->pciPath.c_str()),
      .guid = d->guid,
      .ptrSupport = WEFT_PTR_HOST,
      .regIsGlobal = 0,
      .forceFlush = 0,
      .speed = d->speedMbps,
      .port = 1,
      .latency = 0,
      // Every comm is an endpoint: the domain's endpoint count bounds them.
      .maxComms = endpoints > 0 && endpoints < 65536 ? static_cast<int>(endpoints) : 65536,
      .maxRecvs = kMaxRecvs,
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
  Device* d = device(dev);
  if (d == nullptr || handle == nullptr || listenComm == nullptr) {
    return OFI_FAIL(weftInvalidArgument, "NET/OFI: listen: bad device %d or null pointer", dev);
  }
  Listener* l = nullptr;
  weft_result_t rc = Listener::open(*d, state().config.registerAlways, static_cast<Handle*>(handle), &l);
  *listenComm = l;
  return rc;
}

weft_result_t connect(int dev, void* handle, void** sendComm) {
  auto* h = static_cast<Handle*>(handle);
  Device* d = device(dev);
  if (d == nullptr || h == nullptr || sendComm == nullptr) {
    return OFI_FAIL(weftInvalidArgument, "NET/OFI: connect: bad device %d or null pointer", dev);
  }
  if (h->magic != kHandleMagic || h->version != kWireVersion || h->addrLen == 0 || h->addrLen > kMaxHandleAddr) {
    return OFI_FAIL(weftInvalidArgument, "NET/OFI: connect: not an OFI plugin handle (or another wire version)");
  }
  SendComm* c = nullptr;
  weft_result_t rc = connectStep(*d, h, state().config, &c);
  *sendComm = c;
  return rc;
}

weft_result_t accept(void* listenComm, void** recvComm) {
  Listener* l = as<Listener>(listenComm, Kind::kListen);
  if (l == nullptr || recvComm == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: accept: not a listen comm");
  RecvComm* c = nullptr;
  weft_result_t rc = l->acceptStep(&c);
  *recvComm = c;
  return rc;
}

weft_result_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  Comm* c = anyComm(comm);
  if (c == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: regMr: not a send or receive comm");
  return c->regMr(data, size, type, mhandle);
}

weft_result_t deregMr(void* comm, void* mhandle) {
  Comm* c = anyComm(comm);
  if (c == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: deregMr: not a send or receive comm");
  return c->deregMr(mhandle);
}

weft_result_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request) {
  SendComm* c = as<SendComm>(sendComm, Kind::kSend);
  if (c == nullptr || request == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: isend: not a send comm");
  return c->isend(data, size, tag, mhandle, request);
}

weft_result_t irecv(void* recvComm, int n, void** data, const size_t* sizes, const int* tags, void** mhandles,
                    void** request) {
  RecvComm* c = as<RecvComm>(recvComm, Kind::kRecv);
  if (c == nullptr || request == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: irecv: not a receive comm");
  return c->irecv(n, data, sizes, tags, mhandles, request);
}

weft_result_t test(void* request, int* done, int* sizes) {
  auto* r = static_cast<Request*>(request);
  if (r == nullptr || done == nullptr || (r->kind != Kind::kSend && r->kind != Kind::kRecv)) {
    return OFI_FAIL(weftInvalidArgument, "NET/OFI: test: %p is not a request", request);
  }
  return r->owner->test(r, done, sizes);
}

weft_result_t closeSend(void* sendComm) {
  SendComm* c = as<SendComm>(sendComm, Kind::kSend);
  if (c == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: closeSend: not a send comm");
  delete c;
  return weftSuccess;
}

weft_result_t closeRecv(void* recvComm) {
  RecvComm* c = as<RecvComm>(recvComm, Kind::kRecv);
  if (c == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: closeRecv: not a receive comm");
  delete c;
  return weftSuccess;
}

weft_result_t closeListen(void* listenComm) {
  Listener* l = as<Listener>(listenComm, Kind::kListen);
  if (l == nullptr) return OFI_FAIL(weftInvalidArgument, "NET/OFI: closeListen: not a listen comm");
  delete l;
  return weftSuccess;
}

}  // namespace weft::ofi
