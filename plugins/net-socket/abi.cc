// The exported tables: ncclNetPlugin_v11 and _v10 (what NCCL 2.28 loads) and _v8 (NCCL
// 2.19 … 2.22). Each entry converts its version's arguments field by field to plugin.h's calls,
// inside guard(). Calls a host-memory-only plugin never receives point to explicit
// "unsupported" functions; makeVDevice is NULL because the ABI reads NULL as "no NIC fusion".
#include <climits>

#include "plugins/net-socket/plugin.h"

namespace weft::socket {
namespace {

constexpr uint32_t kContextMagic = 0x43545853;  // "SXTC"

weft_result_t unsupported(const char* call) {
  return SOCK_FAIL(weftInternalError, "NET/Socket: %s is not supported (host memory only, no offload)", call);
}
weft_result_t regMrDmaBuf(void*, void*, size_t, int, uint64_t, int, void**) { return unsupported("regMrDmaBuf"); }
weft_result_t iflush(void*, int, void**, int*, void**, void**) { return unsupported("iflush"); }
weft_result_t getDeviceMr(void*, void*, void**) { return unsupported("getDeviceMr"); }
weft_result_t irecvConsumed(void*, int, void*) { return unsupported("irecvConsumed"); }

// Shared by every version.
weft_result_t devicesC(int* n) { return guard("devices", [&] { return devices(n); }); }
weft_result_t acceptV7(void* l, void** r, weft_net_device_handle_v7_t**) { return guard("accept", [&] { return accept(l, r); }); }
weft_result_t deregMrC(void* c, void* m) { return guard("deregMr", [&] { return deregMr(c, m); }); }
weft_result_t regMrC(void* c, void* d, size_t s, int t, void** m) { return guard("regMr", [&] { return regMr(c, d, s, t, m); }); }
weft_result_t testC(void* r, int* d, int* s) { return guard("test", [&] { return test(r, d, s); }); }
weft_result_t closeSendC(void* c) { return guard("closeSend", [&] { return closeSend(c); }); }
weft_result_t closeRecvC(void* c) { return guard("closeRecv", [&] { return closeRecv(c); }); }
weft_result_t closeListenC(void* l) { return guard("closeListen", [&] { return closeListen(l); }); }
weft_result_t listenNoCtx(int dev, void* h, void** l) { return guard("listen", [&] { return listen(dev, h, l); }); }
weft_result_t isendSize(void* c, void* d, size_t s, int tag, void* m, void*, void** r) {
  return guard("isend", [&] { return isend(c, d, s, tag, m, r); });
}
weft_result_t irecvSize(void* c, int n, void** d, size_t* s, int* t, void** m, void**, void** r) {
  return guard("irecv", [&] { return irecv(c, n, d, s, t, m, r); });
}

// v11: a context per host communicator.
weft_result_t initV11(void** ctx, uint64_t, weft_net_comm_config_v11_t*, weft_debug_logger_t log, weft_profiler_callback_t) {
  return guard("init", [&] {
    if (ctx == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: init: null ctx pointer");
    Config config;
    weft_result_t rc = init(log, &config);
    if (rc == weftSuccess) *ctx = new Context{kContextMagic, config};
    return rc;
  });
}
weft_result_t finalizeV11(void* ctx) {
  return guard("finalize", [&] {
    auto* c = static_cast<Context*>(ctx);
    if (c == nullptr || c->magic != kContextMagic) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: finalize: bad ctx");
    c->magic = 0;
    delete c;
    return weftSuccess;
  });
}
weft_result_t getPropertiesV11(int dev, weft_net_properties_v11_t* p) {
  return guard("getProperties", [&] { return getProperties(dev, p); });
}
weft_result_t listenV11(void*, int dev, void* h, void** l) { return listenNoCtx(dev, h, l); }
weft_result_t connectV11(void* ctx, int dev, void* h, void** s, weft_net_device_handle_v11_t**) {
  return guard("connect", [&] {
    auto* c = static_cast<Context*>(ctx);
    if (c == nullptr || c->magic != kContextMagic) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: connect: bad ctx");
    return connect(c->config, dev, h, s);
  });
}
// The attributes are traffic hints; this plugin's striping is fixed per connection.
weft_result_t setNetAttrV11(void* ctx, weft_net_attr_v11_t* attr) {
  if (ctx == nullptr || attr == nullptr) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: setNetAttr: null argument");
  return weftSuccess;
}

// v10 and v8: one process-wide configuration.
weft_result_t initV10(weft_debug_logger_t log, weft_profiler_callback_t) {
  return guard("init", [&] { Config c; return init(log, &c); });
}
weft_result_t initV8(weft_debug_logger_t log) { return initV10(log, nullptr); }
weft_result_t connectV10(int dev, weft_net_comm_config_v10_t*, void* h, void** s, weft_net_device_handle_v10_t**) {
  return guard("connect", [&] { return connect(latestConfig(), dev, h, s); });
}
weft_result_t connectV8(int dev, void* h, void** s, weft_net_device_handle_v8_t** d) { return connectV10(dev, nullptr, h, s, d); }

// Older properties, field by field (plugins/common/abi_tables.h).
weft_result_t getPropertiesV10(int dev, weft_net_properties_v10_t* p) {
  return guard("getProperties", [&] {
    weft_net_properties_v11_t q;
    weft_result_t rc = getProperties(dev, &q);
    if (rc == weftSuccess) *p = netplugin::toV10(q);
    return rc;
  });
}
weft_result_t getPropertiesV8(int dev, weft_net_properties_v8_t* p) {
  return guard("getProperties", [&] {
    weft_net_properties_v11_t q;
    weft_result_t rc = getProperties(dev, &q);
    if (rc == weftSuccess) *p = netplugin::toV8(q);
    return rc;
  });
}
// v8 passes int sizes.
weft_result_t isendV8(void* c, void* d, int size, int tag, void* m, void** r) {
  if (size < 0) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: isend: negative size %d", size);
  return isendSize(c, d, static_cast<size_t>(size), tag, m, nullptr, r);
}
weft_result_t irecvV8(void* c, int n, void** d, int* sizes, int* t, void** m, void** r) {
  return guard("irecv", [&] {
    size_t wide[WEFT_NET_MAX_REQUESTS];
    if (sizes == nullptr || n < 1 || n > WEFT_NET_MAX_REQUESTS) {
      return SOCK_FAIL(weftInvalidArgument, "NET/Socket: irecv: n=%d or null sizes", n);
    }
    for (int i = 0; i < n; ++i) {
      if (sizes[i] < 0) return SOCK_FAIL(weftInvalidArgument, "NET/Socket: irecv: negative size %d", sizes[i]);
      wide[i] = static_cast<size_t>(sizes[i]);
    }
    return irecv(c, n, d, wide, t, m, r);
  });
}

}  // namespace
}  // namespace weft::socket

using namespace weft::socket;  // NOLINT: the tables below name many of this file's functions

extern "C" WEFT_NET_EXPORT const weft_net_v11_t ncclNetPlugin_v11 = {
    .name = "Socket",
    .init = initV11,
    .devices = devicesC,
    .getProperties = getPropertiesV11,
    .listen = listenV11,
    .connect = connectV11,
    .accept = acceptV7,
    .regMr = regMrC,
    .regMrDmaBuf = regMrDmaBuf,
    .deregMr = deregMrC,
    .isend = isendSize,
    .irecv = irecvSize,
    .iflush = iflush,
    .test = testC,
    .closeSend = closeSendC,
    .closeRecv = closeRecvC,
    .closeListen = closeListenC,
    .getDeviceMr = getDeviceMr,
    .irecvConsumed = irecvConsumed,
    .makeVDevice = nullptr,
    .finalize = finalizeV11,
    .setNetAttr = setNetAttrV11,
};

extern "C" WEFT_NET_EXPORT const weft_net_v10_t ncclNetPlugin_v10 = {
    .name = "Socket",
    .init = initV10,
    .devices = devicesC,
    .getProperties = getPropertiesV10,
    .listen = listenNoCtx,
    .connect = connectV10,
    .accept = acceptV7,
    .regMr = regMrC,
    .regMrDmaBuf = regMrDmaBuf,
    .deregMr = deregMrC,
    .isend = isendSize,
    .irecv = irecvSize,
    .iflush = iflush,
    .test = testC,
    .closeSend = closeSendC,
    .closeRecv = closeRecvC,
    .closeListen = closeListenC,
    .getDeviceMr = getDeviceMr,
    .irecvConsumed = irecvConsumed,
    .makeVDevice = nullptr,
};

extern "C" WEFT_NET_EXPORT const weft_net_v8_t ncclNetPlugin_v8 = {
    .name = "Socket",
    .init = initV8,
    .devices = devicesC,
    .getProperties = getPropertiesV8,
    .listen = listenNoCtx,
    .connect = connectV8,
    .accept = acceptV7,
    .regMr = regMrC,
    .regMrDmaBuf = regMrDmaBuf,
    .deregMr = deregMrC,
    .isend = isendV8,
    .irecv = irecvV8,
    .iflush = iflush,
    .test = testC,
    .closeSend = closeSendC,
    .closeRecv = closeRecvC,
    .closeListen = closeListenC,
    .getDeviceMr = getDeviceMr,
    .irecvConsumed = irecvConsumed,
};
