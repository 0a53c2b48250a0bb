// The one internal interface to a net plugin, whatever ABI version it exports. Semantics are the
// newest version's (v11): an adapter per older version converts every call and struct field by
// field (net_adapter.h). Calls pass straight through to the plugin: no locking, no copies on the
// data path; a non-success code becomes a Status naming the plugin and the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "weft/net.h"

namespace weft::plugin {

// A device's properties in the newest layout, with strings copied out of the plugin.
struct NetProperties {
  std::string name;
  std::string pciPath;  // empty when the plugin gave none
  bool hasName = false; // false when the plugin returned a NULL name
  uint64_t guid = 0;
  int ptrSupport = 0;
  int regIsGlobal = 0;
  int forceFlush = 0;
  int speedMbps = 0;
  int port = 0;
  float latency = 0;
  int maxComms = 0;
  int maxRecvs = 0;
  int netDeviceType = WEFT_NET_DEVICE_HOST;
  int netDeviceVersion = 0;
  std::vector<int> vdevs;  // physical devices behind this one
  size_t maxP2pBytes = 0;
  size_t maxCollBytes = 0;
  int maxMultiRequestSize = 1;
};

class NetApi {
 public:
  virtual ~NetApi() = default;

  virtual int abiVersion() const = 0;  // 6 … 11
  virtual const char* name() const = 0;

  // v11: one context per call. Older versions: the plugin's init runs once per process (later
  // calls return its first result) and *ctx is set to null; finalize is then a no-op.
  virtual Status init(void** ctx, uint64_t commId, int trafficClass) = 0;
  virtual Status finalize(void* ctx) = 0;
  virtual Status devices(int* ndev) = 0;
  virtual Status getProperties(int dev, NetProperties* props) = 0;

  virtual Status listen(void* ctx, int dev, void* handle, void** listenComm) = 0;
  virtual Status connect(void* ctx, int dev, void* handle, void** sendComm,
                         weft_net_device_handle_v11_t** sendDevComm) = 0;
  virtual Status accept(void* listenComm, void** recvComm,
                        weft_net_device_handle_v11_t** recvDevComm) = 0;
  virtual Status regMr(void* comm, void* data, size_t size, int type, void** mhandle) = 0;
  virtual Status regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset,
                             int fd, void** mhandle) = 0;
  virtual Status deregMr(void* comm, void* mhandle) = 0;
  virtual Status isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                       void* phandle, void** request) = 0;
  virtual Status irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags,
                       void** mhandles, void** phandles, void** request) = 0;
  virtual Status iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                        void** request) = 0;
  virtual Status test(void* request, int* done, int* sizes) = 0;
  virtual Status closeSend(void* sendComm) = 0;
  virtual Status closeRecv(void* recvComm) = 0;
  virtual Status closeListen(void* listenComm) = 0;
  virtual Status getDeviceMr(void* comm, void* mhandle, void** dptrMhandle) = 0;
  virtual Status irecvConsumed(void* recvComm, int n, void* request) = 0;
  virtual Status makeVDevice(int* d, weft_net_vdevice_props_v11_t* props) = 0;
  virtual Status setNetAttr(void* ctx, weft_net_attr_v11_t* attr) = 0;
  // Whether the plugin provides makeVDevice (NCCL skips NIC fusion when it does not).
  virtual bool hasMakeVDevice() const = 0;
};

}  // namespace weft::plugin
