#include "plugins/net-socket/plugin.h"

#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "plugins/net-socket/comm.h"
#include "plugins/net-socket/connect.h"
#include "plugins/net-socket/interfaces.h"
#include "plugins/net-socket/log.h"

namespace weft::socket {
namespace {

constexpr size_t kMaxDevices = 16;  // NCCL's MAX_IFS

struct Device {
  Interface iface;
  std::string pciPath;  // kept alive: properties hand out c_str()
  int speedMbps;
};

struct State {
  std::mutex mutex;
  bool discovered = false;
  std::vector<Device> devices;  // fixed after discovery
  Config latest;
};
State& state() {
  // Destroyed when the plugin is unloaded, so a host that dlcloses it leaks nothing; comms
  // copy what they need from a device and never point into this state.
  static State s;
  return s;
}

void discover(State& s) {
  Config ifc = readInterfaceConfig();
  for (Interface& i : selectInterfaces(listInterfaces(), ifc.ifName, ifc.family, kMaxDevices)) {
    Device d{i, pciPath(i.name), linkSpeedMbps(i.name)};
    s.devices.push_back(std::move(d));
  }
  if (s.devices.empty()) {
    SOCK_WARN("NET/Socket: no usable interface%s%s", ifc.ifName.empty() ? "" : " matches NCCL_SOCKET_IFNAME=",
              ifc.ifName.c_str());
  }
  std::string list;
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const Device& d = s.devices[i];
    list += " [" + std::to_string(i) + "]" + d.iface.name + ":" +
            addressToString(reinterpret_cast<const sockaddr*>(&d.iface.addr), false);
  }
  SOCK_INFO("NET/Socket : Using%s", list.c_str());
  s.discovered = true;
}

const Device* device(int dev) {
  State& s = state();
  if (dev < 0 || static_cast<size_t>(dev) >= s.devices.size()) return nullptr;
  return &s.devices[static_cast<size_t>(dev)];
}

template <typename T>
T* as(void* p, Kind kind) {
  auto* t = static_cast<T*>(p);
  return t != nullptr && t->kind() == kind ? t : nullptr;
}

}  // namespace

weft_result_t init(weft_debug_logger_t logger, Config* config) {
  setLogger(logger);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.discovered) discover(s);
  s.latest = readConfig(s.devices.empty() ? 0 : pciVendor(s.devices[0].iface.name));
  SOCK_INFO("NET/Socket: %d helper threads x %d data sockets per connection", s.latest.nThreads,
            s.latest.nThreads == 0 ? 0 : s.latest.nSocks / s.latest.nThreads);
  *config = s.latest;
  return weftSuccess;
}

Config latestConfig() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.latest;
}

weft_result_t devices(int* ndev) {
  if (ndev == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: devices: null pointer");
  *ndev = static_cast<int>(state().devices.size());
  return weftSuccess;
}

weft_result_t getProperties(int dev, weft_net_properties_v11_t* props) {
  const Device* d = device(dev);
  if (d == nullptr || props == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: getProperties: bad device %d", dev);
  *props = weft_net_properties_v11_t{
      .name = const_cast<char*>(d->iface.name.c_str()),
      .pciPath = d->pciPath.empty() ? nullptr : const_cast<char*>(d->pciPath.c_str()),
      .guid = static_cast<uint64_t>(dev),
      .ptrSupport = WEFT_PTR_HOST,
      .regIsGlobal = 0,
      .forceFlush = 0,
      .speed = d->speedMbps,
      .port = 0,
      .latency = 0,
      .maxComms = 65536,
      .maxRecvs = kMaxRecvs,
      .netDeviceType = WEFT_NET_DEVICE_HOST,
      .netDeviceVersion = WEFT_NET_DEVICE_INVALID_VERSION,
      .vProps = {.ndevs = 1, .devs = {dev}},
      // 1 GiB, NCCL's usual cap: test() reports sizes as int, so INT_MAX is the hard limit.
      .maxP2pBytes = static_cast<size_t>(WEFT_NET_MAX_SIZE_DEFAULT),
      .maxCollBytes = static_cast<size_t>(WEFT_NET_MAX_SIZE_DEFAULT),
      .maxMultiRequestSize = 1,
  };
  return weftSuccess;
}

weft_result_t listen(int dev, void* handle, void** listenComm) {
  const Device* d = device(dev);
  if (d == nullptr || handle == nullptr || listenComm == nullptr) {
    return SOCK_FAIL(weftInvalidArgument, "NET/Socket: listen: bad device %d or null pointer", dev);
  }
  Listener* l = nullptr;
  weft_result_t rc = Listener::open(d->iface, static_cast<Handle*>(handle), &l);
  *listenComm = l;
  return rc;
}

weft_result_t connect(const Config& config, int dev, void* handle, void** sendComm) {
  auto* h = static_cast<Handle*>(handle);
  if (device(dev) == nullptr || h == nullptr || sendComm == nullptr) {
    return SOCK_FAIL(weftInvalidArgument, "NET/Socket: connect: bad device %d or null pointer", dev);
  }
  if (h->magic != kHandleMagic) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: connect: not a socket plugin handle");
  SendComm* c = nullptr;
  weft_result_t rc = connectStep(h, config, &c);
  *sendComm = c;
  return rc;
}

weft_result_t accept(void* listenComm, void** recvComm) {
  Listener* l = as<Listener>(listenComm, Kind::kListen);
  if (l == nullptr || recvComm == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: accept: not a listen comm");
  RecvComm* c = nullptr;
  weft_result_t rc = l->acceptStep(&c);
  *recvComm = c;
  return rc;
}

weft_result_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  auto* c = static_cast<Comm*>(comm);
  if (c == nullptr || (c->kind() != Kind::kSend && c->kind() != Kind::kRecv)) {
    return SOCK_FAIL(weftInvalidArgument, "NET/Socket: regMr: not a send or receive comm");
  }
  return c->regMr(data, size, type, mhandle);
}

weft_result_t deregMr(void* comm, void* mhandle) {
  auto* c = static_cast<Comm*>(comm);
  if (c == nullptr || (c->kind() != Kind::kSend && c->kind() != Kind::kRecv)) {
    return SOCK_FAIL(weftInvalidArgument, "NET/Socket: deregMr: not a send or receive comm");
  }
  return c->deregMr(mhandle);
}

weft_result_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request) {
  SendComm* c = as<SendComm>(sendComm, Kind::kSend);
  if (c == nullptr || request == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: isend: not a send comm");
  return c->isend(data, size, tag, mhandle, request);
}

weft_result_t irecv(void* recvComm, int n, void** data, const size_t* sizes, const int* tags, void** mhandles,
                    void** request) {
  RecvComm* c = as<RecvComm>(recvComm, Kind::kRecv);
  if (c == nullptr || request == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: irecv: not a receive comm");
  return c->irecv(n, data, sizes, tags, mhandles, request);
}

weft_result_t test(void* request, int* done, int* sizes) {
  auto* r = static_cast<Request*>(request);
  if (r == nullptr || done == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: test: null request");
  if (r->kind == Kind::kSend) return static_cast<SendComm*>(r->owner)->test(static_cast<SendRequest*>(r), done, sizes);
  if (r->kind == Kind::kRecv) return static_cast<RecvComm*>(r->owner)->test(static_cast<RecvRequest*>(r), done, sizes);
  return SOCK_FAIL(weftInvalidArgument, "NET/Socket: test: %p is not a request", request);
}

weft_result_t closeSend(void* sendComm) {
  SendComm* c = as<SendComm>(sendComm, Kind::kSend);
  if (c == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: closeSend: not a send comm");
  delete c;
  return weftSuccess;
}

weft_result_t closeRecv(void* recvComm) {
  RecvComm* c = as<RecvComm>(recvComm, Kind::kRecv);
  if (c == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: closeRecv: not a receive comm");
  delete c;
  return weftSuccess;
}

weft_result_t closeListen(void* listenComm) {
  Listener* l = as<Listener>(listenComm, Kind::kListen);
  if (l == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: closeListen: not a listen comm");
  delete l;
  return weftSuccess;
}

}  // namespace weft::socket
