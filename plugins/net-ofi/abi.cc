// The exported tables: ncclNetPlugin_v11, _v10 and _v8 (plugins/common/abi_tables.h), named
// "OFI": NCCL_NET=OFI is the name HPE's Slingshot documentation uses and aws-ofi-nccl answers
// to, while aws-ofi-nccl's own default name is "Libfabric", so NCCL_NET can tell the two apart.
#include "plugins/common/abi_tables.h"
#include "plugins/net-ofi/log.h"
#include "plugins/net-ofi/plugin.h"

namespace weft::ofi {
namespace {

struct Ops {
  static constexpr const char* kName = "OFI";
  static constexpr const char* kPrefix = "NET/OFI";
  static weft_result_t init(weft_debug_logger_t log) { return ofi::init(log); }
  static weft_result_t devices(int* n) { return ofi::devices(n); }
  static weft_result_t getProperties(int dev, weft_net_properties_v11_t* p) { return ofi::getProperties(dev, p); }
  static weft_result_t listen(int dev, void* h, void** l) { return ofi::listen(dev, h, l); }
  static weft_result_t connect(int dev, void* h, void** s) { return ofi::connect(dev, h, s); }
  static weft_result_t accept(void* l, void** r) { return ofi::accept(l, r); }
  static weft_result_t regMr(void* c, void* d, size_t s, int t, void** m) { return ofi::regMr(c, d, s, t, m); }
  static weft_result_t regMrDmaBuf(void*, void*, size_t, int, uint64_t, int, void**) {
    return OFI_FAIL(weftInternalError, "NET/OFI: regMrDmaBuf is not supported (host memory only)");
  }
  static weft_result_t deregMr(void* c, void* m) { return ofi::deregMr(c, m); }
  static weft_result_t isend(void* c, void* d, size_t s, int tag, void* m, void** r) { return ofi::isend(c, d, s, tag, m, r); }
  static weft_result_t irecv(void* c, int n, void** d, const size_t* s, const int* t, void** m, void** r) {
    return ofi::irecv(c, n, d, s, t, m, r);
  }
  // Host memory only: nothing reaches memory the CPU cannot see, so there is nothing to flush.
  static weft_result_t iflush(void*, int, void**, int*, void**, void**) {
    return OFI_FAIL(weftInternalError, "NET/OFI: iflush is not supported (host memory only)");
  }
  static weft_result_t test(void* r, int* d, int* s) { return ofi::test(r, d, s); }
  static weft_result_t closeSend(void* c) { return ofi::closeSend(c); }
  static weft_result_t closeRecv(void* c) { return ofi::closeRecv(c); }
  static weft_result_t closeListen(void* l) { return ofi::closeListen(l); }
};
using Tables = netplugin::NetTables<Ops>;

}  // namespace
}  // namespace weft::ofi

// `extern "C"` without braces also makes these const objects extern (exported data symbols).
extern "C" WEFT_NET_EXPORT constinit const weft_net_v11_t ncclNetPlugin_v11 = weft::ofi::Tables::v11;
extern "C" WEFT_NET_EXPORT constinit const weft_net_v10_t ncclNetPlugin_v10 = weft::ofi::Tables::v10;
extern "C" WEFT_NET_EXPORT constinit const weft_net_v8_t ncclNetPlugin_v8 = weft::ofi::Tables::v8;
