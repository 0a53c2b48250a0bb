// The exported tables of weft's own net plugins, built from one set of operations in the newest
// form: ncclNetPlugin_v11 and _v10 (what NCCL 2.28 loads) and _v8 (NCCL 2.19 … 2.22). Every
// entry converts its version's arguments field by field and runs the operation inside guard(),
// so no exception crosses the C ABI. makeVDevice is NULL in every table: the ABI reads NULL as
// "no NIC fusion".
//
// `Ops` provides static members:
//   kName ("OFI": the table's name, what NCCL_NET matches), kPrefix ("NET/OFI", for messages);
//   init(weft_debug_logger_t)            process-wide; later calls reuse the first discovery
//   devices(int*), getProperties(int, weft_net_properties_v11_t*)
//   listen(int dev, void* handle, void** listenComm), connect(int dev, void* handle, void** sendComm)
//   accept(void* listenComm, void** recvComm)
//   regMr(void* comm, void* data, size_t, int type, void** mhandle)
//   regMrDmaBuf(void* comm, void* data, size_t, int type, uint64_t offset, int fd, void** mhandle)
//   deregMr(void* comm, void* mhandle)
//   isend(void* comm, void* data, size_t, int tag, void* mhandle, void** request)
//   irecv(void* comm, int n, void** data, const size_t* sizes, const int* tags, void** mhandles, void** request)
//   iflush(void* comm, int n, void** data, int* sizes, void** mhandles, void** request)
//   test(void* request, int* done, int* sizes), closeSend(void*), closeRecv(void*), closeListen(void*)
// each returning weft_result_t.
#pragma once

#include <cstdint>
#include <exception>
#include <new>

#include "plugins/common/plugin_log.h"
#include "weft/net.h"

namespace weft::netplugin {

// Runs `body`, turning any exception into an error code with a WARN naming `call`.
template <typename F>
weft_result_t guard(const char* prefix, const char* call, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return WEFT_PLUGIN_FAIL(weftSystemError, "%s: %s: out of memory", prefix, call);
  } catch (const std::exception& e) {
    return WEFT_PLUGIN_FAIL(weftInternalError, "%s: %s: %s", prefix, call, e.what());
  } catch (...) {
    return WEFT_PLUGIN_FAIL(weftInternalError, "%s: %s: unknown exception", prefix, call);
  }
}

// v9/v10 properties lack maxMultiRequestSize; v8 also lacks forceFlush, vProps and the limits.
inline weft_net_properties_v10_t toV10(const weft_net_properties_v11_t& q) {
  return weft_net_properties_v10_t{.name = q.name, .pciPath = q.pciPath, .guid = q.guid, .ptrSupport = q.ptrSupport,
                                   .regIsGlobal = q.regIsGlobal, .forceFlush = q.forceFlush, .speed = q.speed,
                                   .port = q.port, .latency = q.latency, .maxComms = q.maxComms,
                                   .maxRecvs = q.maxRecvs, .netDeviceType = q.netDeviceType,
                                   .netDeviceVersion = q.netDeviceVersion, .vProps = q.vProps,
                                   .maxP2pBytes = q.maxP2pBytes, .maxCollBytes = q.maxCollBytes};
}
inline weft_net_properties_v8_t toV8(const weft_net_properties_v11_t& q) {
  return weft_net_properties_v8_t{.name = q.name, .pciPath = q.pciPath, .guid = q.guid, .ptrSupport = q.ptrSupport,
                                  .regIsGlobal = q.regIsGlobal, .speed = q.speed, .port = q.port,
                                  .latency = q.latency, .maxComms = q.maxComms, .maxRecvs = q.maxRecvs,
                                  .netDeviceType = q.netDeviceType, .netDeviceVersion = q.netDeviceVersion};
}

template <typename Ops>
struct NetTables {
  // A v11 context: the plugins' state is per process; the context proves that finalize and
  // connect get what init gave.
  struct Context {
    uint32_t magic;
  };
  static constexpr uint32_t kContextMagic = 0x5443574e;  // "NWCT"

  template <typename F>
  static weft_result_t run(const char* call, F&& body) noexcept {
    return guard(Ops::kPrefix, call, body);
  }
  static bool validContext(void* ctx) { return ctx != nullptr && static_cast<Context*>(ctx)->magic == kContextMagic; }

  // Shared by every version.
  static weft_result_t devices(int* n) { return run("devices", [&] { return Ops::devices(n); }); }
  static weft_result_t accept(void* l, void** r, weft_net_device_handle_v7_t**) { return run("accept", [&] { return Ops::accept(l, r); }); }
  static weft_result_t regMr(void* c, void* d, size_t s, int t, void** m) { return run("regMr", [&] { return Ops::regMr(c, d, s, t, m); }); }
  static weft_result_t regMrDmaBuf(void* c, void* d, size_t s, int t, uint64_t o, int fd, void** m) {
    return run("regMrDmaBuf", [&] { return Ops::regMrDmaBuf(c, d, s, t, o, fd, m); });
  }
  static weft_result_t deregMr(void* c, void* m) { return run("deregMr", [&] { return Ops::deregMr(c, m); }); }
  static weft_result_t iflush(void* c, int n, void** d, int* s, void** m, void** r) {
    return run("iflush", [&] { return Ops::iflush(c, n, d, s, m, r); });
  }
  static weft_result_t test(void* r, int* d, int* s) { return run("test", [&] { return Ops::test(r, d, s); }); }
  static weft_result_t closeSend(void* c) { return run("closeSend", [&] { return Ops::closeSend(c); }); }
  static weft_result_t closeRecv(void* c) { return run("closeRecv", [&] { return Ops::closeRecv(c); }); }
  static weft_result_t closeListen(void* l) { return run("closeListen", [&] { return Ops::closeListen(l); }); }
  static weft_result_t listen(int dev, void* h, void** l) { return run("listen", [&] { return Ops::listen(dev, h, l); }); }
  static weft_result_t connect(int dev, void* h, void** s) { return run("connect", [&] { return Ops::connect(dev, h, s); }); }
  static weft_result_t isend(void* c, void* d, size_t s, int tag, void* m, void*, void** r) {
    return run("isend", [&] { return Ops::isend(c, d, s, tag, m, r); });
  }
  static weft_result_t irecv(void* c, int n, void** d, size_t* s, int* t, void** m, void**, void** r) {
    return run("irecv", [&] { return Ops::irecv(c, n, d, s, t, m, r); });
  }
  // Device offload calls: these plugins drive host-proxied devices only (netDeviceType HOST).
  static weft_result_t getDeviceMr(void*, void*, void**) { return unsupported("getDeviceMr"); }
  static weft_result_t irecvConsumed(void*, int, void*) { return unsupported("irecvConsumed"); }
  static weft_result_t unsupported(const char* call) {
    return WEFT_PLUGIN_FAIL(weftInternalError, "%s: %s is not supported (no device offload)", Ops::kPrefix, call);
  }

  // v11.
  static weft_result_t initV11(void** ctx, uint64_t, weft_net_comm_config_v11_t*, weft_debug_logger_t log,
                               weft_profiler_callback_t) {
    return run("init", [&] {
      if (ctx == nullptr) return WEFT_PLUGIN_FAIL(weftInvalidArgument, "%s: init: null ctx pointer", Ops::kPrefix);
      weft_result_t rc = Ops::init(log);
      if (rc == weftSuccess) *ctx = new Context{kContextMagic};
      return rc;
    });
  }
  static weft_result_t finalizeV11(void* ctx) {
    return run("finalize", [&] {
      if (!validContext(ctx)) return WEFT_PLUGIN_FAIL(weftInvalidArgument, "%s: finalize: bad ctx", Ops::kPrefix);
      static_cast<Context*>(ctx)->magic = 0;
      delete static_cast<Context*>(ctx);
      return weftSuccess;
    });
  }
  static weft_result_t getPropertiesV11(int dev, weft_net_properties_v11_t* p) {
    return run("getProperties", [&] { return Ops::getProperties(dev, p); });
  }
  static weft_result_t listenV11(void*, int dev, void* h, void** l) { return listen(dev, h, l); }
  static weft_result_t connectV11(void* ctx, int dev, void* h, void** s, weft_net_device_handle_v11_t**) {
    if (!validContext(ctx)) return WEFT_PLUGIN_FAIL(weftInvalidArgument, "%s: connect: bad ctx", Ops::kPrefix);
    return connect(dev, h, s);
  }
  // The attributes are traffic hints, which these plugins do not need.
  static weft_result_t setNetAttrV11(void* ctx, weft_net_attr_v11_t* attr) {
    if (!validContext(ctx) || attr == nullptr) return WEFT_PLUGIN_FAIL(weftInvalidArgument, "%s: setNetAttr: bad argument", Ops::kPrefix);
    return weftSuccess;
  }

  // v10 and v8: no context.
  static weft_result_t initV10(weft_debug_logger_t log, weft_profiler_callback_t) { return run("init", [&] { return Ops::init(log); }); }
  static weft_result_t initV8(weft_debug_logger_t log) { return initV10(log, nullptr); }
  static weft_result_t connectV10(int dev, weft_net_comm_config_v10_t*, void* h, void** s, weft_net_device_handle_v10_t**) {
    return connect(dev, h, s);
  }
  static weft_result_t connectV8(int dev, void* h, void** s, weft_net_device_handle_v8_t**) { return connect(dev, h, s); }
  static weft_result_t getPropertiesV10(int dev, weft_net_properties_v10_t* p) {
    return run("getProperties", [&] {
      weft_net_properties_v11_t q;
      weft_result_t rc = Ops::getProperties(dev, &q);
      if (rc == weftSuccess) *p = toV10(q);
      return rc;
    });
  }
  static weft_result_t getPropertiesV8(int dev, weft_net_properties_v8_t* p) {
    return run("getProperties", [&] {
      weft_net_properties_v11_t q;
      weft_result_t rc = Ops::getProperties(dev, &q);
      if (rc == weftSuccess) *p = toV8(q);
      return rc;
    });
  }
  // v8 isend/irecv pass int sizes.
  static weft_result_t isendV8(void* c, void* d, int size, int tag, void* m, void** r) {
    if (size < 0) return WEFT_PLUGIN_FAIL(weftInvalidArgument, "%s: isend: negative size %d", Ops::kPrefix, size);
    return isend(c, d, static_cast<size_t>(size), tag, m, nullptr, r);
  }
  static weft_result_t irecvV8(void* c, int n, void** d, int* sizes, int* t, void** m, void** r) {
    return run("irecv", [&] {
      size_t wide[WEFT_NET_MAX_REQUESTS];
      if (sizes == nullptr || n < 1 || n > WEFT_NET_MAX_REQUESTS) {
        return WEFT_PLUGIN_FAIL(weftInvalidArgument, "%s: irecv: n=%d or null sizes", Ops::kPrefix, n);
      }
      for (int i = 0; i < n; ++i) {
        if (sizes[i] < 0) return WEFT_PLUGIN_FAIL(weftInvalidArgument, "%s: irecv: negative size %d", Ops::kPrefix, sizes[i]);
        wide[i] = static_cast<size_t>(sizes[i]);
      }
      return Ops::irecv(c, n, d, wide, t, m, r);
    });
  }

  static constexpr weft_net_v11_t v11 = {
      .name = Ops::kName, .init = initV11, .devices = devices, .getProperties = getPropertiesV11,
      .listen = listenV11, .connect = connectV11, .accept = accept, .regMr = regMr, .regMrDmaBuf = regMrDmaBuf,
      .deregMr = deregMr, .isend = isend, .irecv = irecv, .iflush = iflush, .test = test, .closeSend = closeSend,
      .closeRecv = closeRecv, .closeListen = closeListen, .getDeviceMr = getDeviceMr,
      .irecvConsumed = irecvConsumed, .makeVDevice = nullptr, .finalize = finalizeV11, .setNetAttr = setNetAttrV11,
  };
  static constexpr weft_net_v10_t v10 = {
      .name = Ops::kName, .init = initV10, .devices = devices, .getProperties = getPropertiesV10, .listen = listen,
      .connect = connectV10, .accept = accept, .regMr = regMr, .regMrDmaBuf = regMrDmaBuf, .deregMr = deregMr,
      .isend = isend, .irecv = irecv, .iflush = iflush, .test = test, .closeSend = closeSend, .closeRecv = closeRecv,
      .closeListen = closeListen, .getDeviceMr = getDeviceMr, .irecvConsumed = irecvConsumed, .makeVDevice = nullptr,
  };
  static constexpr weft_net_v8_t v8 = {
      .name = Ops::kName, .init = initV8, .devices = devices, .getProperties = getPropertiesV8, .listen = listen,
      .connect = connectV8, .accept = accept, .regMr = regMr, .regMrDmaBuf = regMrDmaBuf, .deregMr = deregMr,
      .isend = isendV8, .irecv = irecvV8, .iflush = iflush, .test = test, .closeSend = closeSend,
      .closeRecv = closeRecv, .closeListen = closeListen, .getDeviceMr = getDeviceMr, .irecvConsumed = irecvConsumed,
  };
};

}  // namespace weft::netplugin
