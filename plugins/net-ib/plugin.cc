#include "plugins/net-ib/plugin.h"

#include <mutex>
#include <string>

#include "plugins/net-ib/comm.h"
#include "plugins/net-ib/config.h"
#include "plugins/net-ib/connect.h"
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
  const Device* d = device(dev);
  if (d == nullptr || handle == nullptr || listenComm == nullptr) {
    return IB_FAIL(weftInvalidArgument, "NET/IB: listen: bad device %d or null pointer", dev);
  }
  Listener* l = nullptr;
  weft_result_t rc = Listener::open(*d, state().config, handle, &l);
  *listenComm = l;
  return rc;
}

weft_result_t connect(int dev, void* handle, void** sendComm) {
  const Device* d = device(dev);
  if (d == nullptr || handle == nullptr || sendComm == nullptr) {
    return IB_FAIL(weftInvalidArgument, "NET/IB: connect: bad device %d or null pointer", dev);
  }
  SendComm* c = nullptr;
  weft_result_t rc = connectStep(*d, handle, state().config, &c);
  *sendComm = c;
  return rc;
}

weft_result_t accept(void* listenComm, void** recvComm) {
  Listener* l = as<Listener>(listenComm, Kind::kListen);
  if (l == nullptr || recvComm == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: accept: not a listen comm");
  RecvComm* c = nullptr;
  weft_result_t rc = l->acceptStep(&c);
  *recvComm = c;
  return rc;
}

weft_result_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  Comm* c = anyComm(comm);
  if (c == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: regMr: not a send or receive comm");
  return c->regMr(data, size, type, mhandle);
}

weft_result_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle) {
  Comm* c = anyComm(comm);
  if (c == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: regMrDmaBuf: not a send or receive comm");
  return c->regMrDmaBuf(data, size, type, offset, fd, mhandle);
}

weft_result_t deregMr(void* comm, void* mhandle) {
  Comm* c = anyComm(comm);
  if (c == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: deregMr: not a send or receive comm");
  return c->deregMr(mhandle);
}

weft_result_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request) {
  SendComm* c = as<SendComm>(sendComm, Kind::kSend);
  if (c == nullptr || request == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: isend: not a send comm");
  return c->isend(data, size, tag, mhandle, request);
}

weft_result_t irecv(void* recvComm, int n, void** data, const size_t* sizes, const int* tags, void** mhandles,
                    void** request) {
  RecvComm* c = as<RecvComm>(recvComm, Kind::kRecv);
  if (c == nullptr || request == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: irecv: not a receive comm");
  return c->irecv(n, data, sizes, tags, mhandles, request);
}

// Host memory only: the HCA writes it before the completion that reports it, and the CPU sees
// it then, so there is nothing to flush. A null request tells the host that nothing is pending.
weft_result_t iflush(void* recvComm, int, void**, int*, void**, void** request) {
  if (as<RecvComm>(recvComm, Kind::kRecv) == nullptr || request == nullptr) {
    return IB_FAIL(weftInvalidArgument, "NET/IB: iflush: not a receive comm");
  }
  *request = nullptr;
  return weftSuccess;
}

weft_result_t test(void* request, int* done, int* sizes) {
  auto* r = static_cast<Request*>(request);
  if (r == nullptr || done == nullptr || (r->kind != Kind::kSend && r->kind != Kind::kRecv) || r->owner == nullptr) {
    return IB_FAIL(weftInvalidArgument, "NET/IB: test: %p is not a live request", request);
  }
  return r->owner->test(r, done, sizes);
}

weft_result_t closeSend(void* sendComm) {
  SendComm* c = as<SendComm>(sendComm, Kind::kSend);
  if (c == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: closeSend: not a send comm");
  delete c;
  return weftSuccess;
}

weft_result_t closeRecv(void* recvComm) {
  RecvComm* c = as<RecvComm>(recvComm, Kind::kRecv);
  if (c == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: closeRecv: not a receive comm");
  delete c;
  return weftSuccess;
}

weft_result_t closeListen(void* listenComm) {
  Listener* l = as<Listener>(listenComm, Kind::kListen);
  if (l == nullptr) return IB_FAIL(weftInvalidArgument, "NET/IB: closeListen: not a listen comm");
  delete l;
  return weftSuccess;
}

}  // namespace weft::ib
