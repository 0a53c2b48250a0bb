// One adapter class template, instantiated per ABI version. Every version difference is an
// explicit `if constexpr` branch below, so what each version's adapter does is readable in
// one place (the table of differences is in include/weft/net.h).
#include "core/plugin/net_adapter.h"

#include <array>
#include <climits>
#include <mutex>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::plugin {

Status pluginStatus(const char* plugin, const char* call, int rc) {
  if (rc == 0) return Status::ok();
  if (rc < 0 || rc > static_cast<int>(Code::kInProgress)) {
    return internalError(strprintf("%s: %s returned unknown code %d", plugin, call, rc));
  }
  Code code = static_cast<Code>(rc);
  return Status(code, strprintf("%s: %s returned %s", plugin, call, codeName(code)));
}

weft_debug_logger_t hostLogger() {
  // weftPluginLog has ncclDebugLogger_t's signature with an int level; the enum is int-sized.
  return reinterpret_cast<weft_debug_logger_t>(&log::weftPluginLog);
}

namespace {

template <int V> struct Abi;
template <> struct Abi<6> { using Net = weft_net_v6_t; using Props = weft_net_properties_v6_t; };
template <> struct Abi<7> { using Net = weft_net_v7_t; using Props = weft_net_properties_v7_t; };
template <> struct Abi<8> { using Net = weft_net_v8_t; using Props = weft_net_properties_v8_t; };
template <> struct Abi<9> { using Net = weft_net_v9_t; using Props = weft_net_properties_v9_t; };
template <> struct Abi<10> { using Net = weft_net_v10_t; using Props = weft_net_properties_v10_t; };
template <> struct Abi<11> { using Net = weft_net_v11_t; using Props = weft_net_properties_v11_t; };

// Versions before v9 pass int sizes: larger values cannot be expressed.
Status checkIntSize(size_t size, const char* call) {
  if (size > static_cast<size_t>(INT_MAX)) {
    return invalidArgument(strprintf("%s: size %zu does not fit the int of ABI versions < 9", call, size));
  }
  return Status::ok();
}

template <int V>
class NetAdapter final : public NetApi {
  using Net = typename Abi<V>::Net;
  using Props = typename Abi<V>::Props;

 public:
  explicit NetAdapter(const Net* net) : net_(net) {}

  int abiVersion() const override { return V; }
  const char* name() const override { return net_->name; }

  Status init(void** ctx, uint64_t commId, int trafficClass) override {
    *ctx = nullptr;
    if constexpr (V >= 11) {
      weft_net_comm_config_v11_t config{.trafficClass = trafficClass};
      return call("init", net_->init ? net_->init(ctx, commId, &config, hostLogger(), nullptr) : -1);
    } else {
      // Pre-v11 plugins keep global state: NCCL calls their init once per process.
      std::lock_guard<std::mutex> lock(initMutex_);
      trafficClass_ = trafficClass;
      if (!initDone_) {
        if constexpr (V == 10) {
          initStatus_ = call("init", net_->init ? net_->init(hostLogger(), nullptr) : -1);
        } else {
          initStatus_ = call("init", net_->init ? net_->init(hostLogger()) : -1);
        }
        initDone_ = true;
      }
      return initStatus_;
    }
  }

  Status finalize(void* ctx) override {
    if constexpr (V >= 11) {
      if (net_->finalize == nullptr) return Status::ok();
      return call("finalize", net_->finalize(ctx));
    } else {
      return Status::ok();
    }
  }

  Status devices(int* ndev) override { return call("devices", net_->devices ? net_->devices(ndev) : -1); }

  Status getProperties(int dev, NetProperties* props) override {
    Props p{};
    WEFT_TRY(call("getProperties", net_->getProperties ? net_->getProperties(dev, &p) : -1));
    *props = toNetProperties(p, dev);
    return Status::ok();
  }

  Status listen(void* ctx, int dev, void* handle, void** listenComm) override {
    if (net_->listen == nullptr) return missing("listen");
    if constexpr (V >= 11) return call("listen", net_->listen(ctx, dev, handle, listenComm));
    else return call("listen", net_->listen(dev, handle, listenComm));
  }

  Status connect(void* ctx, int dev, void* handle, void** sendComm,
                 weft_net_device_handle_v11_t** sendDevComm) override {
    if (net_->connect == nullptr) return missing("connect");
    if constexpr (V >= 11) {
      return call("connect", net_->connect(ctx, dev, handle, sendComm, sendDevComm));
    } else if constexpr (V == 10) {
      weft_net_comm_config_v10_t config{.trafficClass = trafficClass_};
      return call("connect", net_->connect(dev, &config, handle, sendComm, sendDevComm));
    } else if constexpr (V >= 7) {
      return call("connect", net_->connect(dev, handle, sendComm, sendDevComm));
    } else {
      return call("connect", net_->connect(dev, handle, sendComm));
    }
  }

  Status accept(void* listenComm, void** recvComm, weft_net_device_handle_v11_t** recvDevComm) override {
    if (net_->accept == nullptr) return missing("accept");
    if constexpr (V >= 7) return call("accept", net_->accept(listenComm, recvComm, recvDevComm));
    else return call("accept", net_->accept(listenComm, recvComm));
  }

  Status regMr(void* comm, void* data, size_t size, int type, void** mhandle) override {
    if (net_->regMr == nullptr) return missing("regMr");
    if constexpr (V >= 8) {
      return call("regMr", net_->regMr(comm, data, size, type, mhandle));
    } else {
      WEFT_TRY(checkIntSize(size, "regMr"));
      return call("regMr", net_->regMr(comm, data, static_cast<int>(size), type, mhandle));
    }
  }

  Status regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                     void** mhandle) override {
    if (net_->regMrDmaBuf == nullptr) return missing("regMrDmaBuf");
    return call("regMrDmaBuf", net_->regMrDmaBuf(comm, data, size, type, offset, fd, mhandle));
  }

  Status deregMr(void* comm, void* mhandle) override {
    if (net_->deregMr == nullptr) return missing("deregMr");
    return call("deregMr", net_->deregMr(comm, mhandle));
  }

  Status isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
               void** request) override {
    if constexpr (V >= 10) {
      return call("isend", net_->isend(sendComm, data, size, tag, mhandle, phandle, request));
    } else if constexpr (V == 9) {
      return call("isend", net_->isend(sendComm, data, size, tag, mhandle, request));
    } else {
      WEFT_TRY(checkIntSize(size, "isend"));
      return call("isend", net_->isend(sendComm, data, static_cast<int>(size), tag, mhandle, request));
    }
  }

  Status irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
               void** phandles, void** request) override {
    if constexpr (V >= 10) {
      return call("irecv", net_->irecv(recvComm, n, data, sizes, tags, mhandles, phandles, request));
    } else if constexpr (V == 9) {
      return call("irecv", net_->irecv(recvComm, n, data, sizes, tags, mhandles, request));
    } else {
      std::array<int, WEFT_NET_MAX_REQUESTS> intSizes{};
      if (n < 0 || n > WEFT_NET_MAX_REQUESTS) {
        return invalidArgument(strprintf("irecv: n=%d outside 0..%d", n, WEFT_NET_MAX_REQUESTS));
      }
      for (int i = 0; i < n; ++i) {
        WEFT_TRY(checkIntSize(sizes[i], "irecv"));
        intSizes[i] = static_cast<int>(sizes[i]);
      }
      return call("irecv", net_->irecv(recvComm, n, data, intSizes.data(), tags, mhandles, request));
    }
  }

  Status iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) override {
    if (net_->iflush == nullptr) return missing("iflush");
    return call("iflush", net_->iflush(recvComm, n, data, sizes, mhandles, request));
  }

  Status test(void* request, int* done, int* sizes) override {
    return call("test", net_->test(request, done, sizes));
  }
  Status closeSend(void* c) override { return net_->closeSend ? call("closeSend", net_->closeSend(c)) : missing("closeSend"); }
  Status closeRecv(void* c) override { return net_->closeRecv ? call("closeRecv", net_->closeRecv(c)) : missing("closeRecv"); }
  Status closeListen(void* c) override {
    return net_->closeListen ? call("closeListen", net_->closeListen(c)) : missing("closeListen");
  }

  Status getDeviceMr(void* comm, void* mhandle, void** dptrMhandle) override {
    if constexpr (V >= 7) {
      if (net_->getDeviceMr != nullptr) return call("getDeviceMr", net_->getDeviceMr(comm, mhandle, dptrMhandle));
    }
    return missing("getDeviceMr");
  }

  Status irecvConsumed(void* recvComm, int n, void* request) override {
    if constexpr (V >= 7) {
      if (net_->irecvConsumed != nullptr) return call("irecvConsumed", net_->irecvConsumed(recvComm, n, request));
    }
    return missing("irecvConsumed");
  }

  Status makeVDevice(int* d, weft_net_vdevice_props_v11_t* props) override {
    if constexpr (V >= 9) {
      if (net_->makeVDevice != nullptr) return call("makeVDevice", net_->makeVDevice(d, props));
    }
    return missing("makeVDevice");
  }

  bool hasMakeVDevice() const override {
    if constexpr (V >= 9) return net_->makeVDevice != nullptr;
    return false;
  }

  Status setNetAttr(void* ctx, weft_net_attr_v11_t* attr) override {
    if constexpr (V >= 11) {
      if (net_->setNetAttr != nullptr) return call("setNetAttr", net_->setNetAttr(ctx, attr));
    }
    return missing("setNetAttr");
  }

 private:
  Status call(const char* what, int rc) const {
    if (rc == -1) return missing(what);
    return pluginStatus(displayName(), what, rc);
  }
  Status missing(const char* what) const {
    return internalError(strprintf("%s: ncclNetPlugin_v%d has no %s function", displayName(), V, what));
  }
  const char* displayName() const { return net_->name ? net_->name : "(unnamed plugin)"; }

  const Net* net_;
  std::mutex initMutex_;
  bool initDone_ = false;
  Status initStatus_;
  int trafficClass_ = WEFT_NET_TRAFFIC_CLASS_UNDEF;
};

}  // namespace

std::unique_ptr<NetApi> makeNetAdapter(int version, const void* table) {
  switch (version) {
    case 6: return std::make_unique<NetAdapter<6>>(static_cast<const weft_net_v6_t*>(table));
    case 7: return std::make_unique<NetAdapter<7>>(static_cast<const weft_net_v7_t*>(table));
    case 8: return std::make_unique<NetAdapter<8>>(static_cast<const weft_net_v8_t*>(table));
    case 9: return std::make_unique<NetAdapter<9>>(static_cast<const weft_net_v9_t*>(table));
    case 10: return std::make_unique<NetAdapter<10>>(static_cast<const weft_net_v10_t*>(table));
    case 11: return std::make_unique<NetAdapter<11>>(static_cast<const weft_net_v11_t*>(table));
    default: return nullptr;
  }
}

}  // namespace weft::plugin
