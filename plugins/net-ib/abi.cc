// The exported tables: ncclNetPlugin_v11, _v10 and _v8 (plugins/common/abi_tables.h), named
// "IB" like NCCL's internal InfiniBand transport, so NCCL_NET=IB picks this plugin.
#include "plugins/common/abi_tables.h"
#include "plugins/net-ib/plugin.h"

namespace weft::ib {
namespace {

struct Ops {
  static constexpr const char* kName = "IB";
  static constexpr const char* kPrefix = "NET/IB";
  static weft_result_t init(weft_debug_logger_t log) { return ib::init(log); }
  static weft_result_t devices(int* n) { return ib::devices(n); }
  static weft_result_t getProperties(int dev, weft_net_properties_v11_t* p) { return ib::getProperties(dev, p); }
  static weft_result_t listen(int dev, void* h, void** l) { return ib::listen(dev, h, l); }
  static weft_result_t connect(int dev, void* h, void** s) { return ib::connect(dev, h, s); }
  static weft_result_t accept(void* l, void** r) { return ib::accept(l, r); }
  static weft_result_t regMr(void* c, void* d, size_t s, int t, void** m) { return ib::regMr(c, d, s, t, m); }
  static weft_result_t regMrDmaBuf(void* c, void* d, size_t s, int t, uint64_t o, int fd, void** m) {
    return ib::regMrDmaBuf(c, d, s, t, o, fd, m);
  }
  static weft_result_t deregMr(void* c, void* m) { return ib::deregMr(c, m); }
  static weft_result_t isend(void* c, void* d, size_t s, int tag, void* m, void** r) { return ib::isend(c, d, s, tag, m, r); }
  static weft_result_t irecv(void* c, int n, void** d, const size_t* s, const int* t, void** m, void** r) {
    return ib::irecv(c, n, d, s, t, m, r);
  }
  static weft_result_t iflush(void* c, int n, void** d, int* s, void** m, void** r) { return ib::iflush(c, n, d, s, m, r); }
  static weft_result_t test(void* r, int* d, int* s) { return ib::test(r, d, s); }
  static weft_result_t closeSend(void* c) { return ib::closeSend(c); }
  static weft_result_t closeRecv(void* c) { return ib::closeRecv(c); }
  static weft_result_t closeListen(void* l) { return ib::closeListen(l); }
};
using Tables = netplugin::NetTables<Ops>;

}  // namespace
}  // namespace weft::ib

// `extern "C"` without braces also makes these const objects extern (exported data symbols).
extern "C" WEFT_NET_EXPORT constinit const weft_net_v11_t ncclNetPlugin_v11 = weft::ib::Tables::v11;
extern "C" WEFT_NET_EXPORT constinit const weft_net_v10_t ncclNetPlugin_v10 = weft::ib::Tables::v10;
extern "C" WEFT_NET_EXPORT constinit const weft_net_v8_t ncclNetPlugin_v8 = weft::ib::Tables::v8;
