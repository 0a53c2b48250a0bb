// Checks of the calls around data movement: init, properties, handles, connection setup and
// argument checking.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "core/base/strings.h"
#include "core/plugin/conformance_checks.h"
#include "core/plugin/conformance_support.h"

namespace weft::plugin::conformance {
namespace {

// Redirects fds 1 and 2 to a temporary file while alive; bytes() says what was written there.
class StdioTrap {
 public:
  StdioTrap() {
    std::fflush(stdout);
    std::fflush(stderr);
    char path[] = "/tmp/weft-net-test-XXXXXX";
    file_ = mkstemp(path);
    unlink(path);
    saved1_ = dup(1);
    saved2_ = dup(2);
    dup2(file_, 1);
    dup2(file_, 2);
  }
  ~StdioTrap() { restore(); close(file_); }
  long bytes() {
    restore();
    return lseek(file_, 0, SEEK_END);
  }

 private:
  void restore() {
    if (saved1_ < 0) return;
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(saved1_, 1);
    dup2(saved2_, 2);
    close(saved1_);
    close(saved2_);
    saved1_ = saved2_ = -1;
  }
  int file_, saved1_, saved2_;
};

}  // namespace

std::string checkInit(const Plugin& plugin, const Options& o) {
  long written = 0;
  {
    StdioTrap trap;  // a plugin logs through the host's logger, never to stdout/stderr
    Session first(plugin, o);
    void* ctx2 = nullptr;
    requireOk(plugin->api().init(&ctx2, 2, WEFT_NET_TRAFFIC_CLASS_UNDEF), "second init");
    int n = -1;
    requireOk(plugin->api().devices(&n), "devices after a second init");
    require(n == first.deviceCount(), strprintf("device count changed from %d to %d", first.deviceCount(), n));
    requireOk(plugin->api().finalize(ctx2), "finalize of the second context");
    written = trap.bytes();
  }
  require(written == 0, strprintf("the plugin wrote %ld bytes to stdout/stderr instead of the logger", written));
  return strprintf("ABI v%d, init/finalize twice, nothing printed outside the logger", plugin->abiVersion());
}

std::string checkProperties(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  const int n = s.deviceCount();
  for (int d = 0; d < n; ++d) {
    NetProperties p;
    requireOk(s.api().getProperties(d, &p), strprintf("getProperties(%d)", d));
    std::string at = strprintf("device %d: ", d);
    require(p.hasName && !p.name.empty(), at + "no name");
    require(p.speedMbps > 0, at + strprintf("speed %d Mbps (0 would make NCCL's model ignore the NIC)", p.speedMbps));
    require(p.ptrSupport != 0 && (p.ptrSupport & ~(WEFT_PTR_HOST | WEFT_PTR_CUDA | WEFT_PTR_DMABUF)) == 0,
            at + strprintf("ptrSupport 0x%x", p.ptrSupport));
    require(p.maxComms > 0, at + strprintf("maxComms %d", p.maxComms));
    require(p.maxRecvs >= 1 && p.maxRecvs <= WEFT_NET_MAX_REQUESTS, at + strprintf("maxRecvs %d", p.maxRecvs));
    require(p.latency >= 0, at + "negative latency");
    require(p.netDeviceType == WEFT_NET_DEVICE_HOST || p.netDeviceType == WEFT_NET_DEVICE_UNPACK,
            at + strprintf("netDeviceType %d", p.netDeviceType));
    require(!p.vdevs.empty(), at + "vProps lists no device");
    for (int v : p.vdevs) require(v >= 0 && v < n, at + strprintf("vProps names device %d of %d", v, n));
    require(p.maxP2pBytes > 0 && p.maxP2pBytes <= static_cast<size_t>(WEFT_NET_MAX_SIZE_BYTES), at + "maxP2pBytes out of range");
    require(p.maxMultiRequestSize >= 1, at + "maxMultiRequestSize < 1");
  }
  const NetProperties& p = s.props();
  return strprintf("%d device%s; dev %d: %s, %d Mbps, maxRecvs %d, ptrSupport 0x%x", n, n == 1 ? "" : "s", o.dev,
                   p.name.c_str(), p.speedMbps, p.maxRecvs, p.ptrSupport);
}

std::string checkHandle(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  unsigned char buf[2 * WEFT_NET_HANDLE_MAXSIZE];
  std::memset(buf, 0xa5, sizeof(buf));
  void* listen = nullptr;
  requireOk(s.api().listen(s.ctx(), s.dev(), buf, &listen), "listen");
  int used = 0;
  for (int i = 0; i < WEFT_NET_HANDLE_MAXSIZE; ++i) used += buf[i] != 0xa5;
  for (size_t i = WEFT_NET_HANDLE_MAXSIZE; i < sizeof(buf); ++i) {
    require(buf[i] == 0xa5, strprintf("listen wrote byte %zu of the handle, past the %d-byte limit", i, WEFT_NET_HANDLE_MAXSIZE));
  }
  require(used > 0, "listen left the handle untouched");
  requireOk(s.api().closeListen(listen), "closeListen");
  return strprintf("the handle fits in %d bytes", WEFT_NET_HANDLE_MAXSIZE);
}

std::string checkConnect(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  // Several connections through one listen comm, each set up by looping on both calls from one
  // thread: a plugin whose connect waits for accept (or the reverse) never gets here.
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  requireOk(s.api().listen(s.ctx(), s.dev(), handle, &listen), "listen");
  Pair pairs[3];
  int calls = 0;
  for (Pair& p : pairs) {
    char h[WEFT_NET_HANDLE_MAXSIZE];
    std::memcpy(h, handle, sizeof(h));
    Deadline d = s.deadline();
    weft_net_device_handle_v11_t* dh = nullptr;
    while (p.send == nullptr || p.recv == nullptr) {
      require(!d.expired(), "connect/accept did not complete");
      if (p.send == nullptr) requireOk(s.api().connect(s.ctx(), s.dev(), h, &p.send, &dh), "connect");
      if (p.recv == nullptr) requireOk(s.api().accept(listen, &p.recv, &dh), "accept");
      ++calls;
    }
  }
  for (int i = 0; i < 3; ++i) s.transfer(pairs[i], 1000 + static_cast<size_t>(i), i);
  for (Pair& p : pairs) s.close(p);
  requireOk(s.api().closeListen(listen), "closeListen");
  return strprintf("3 connections through one listen comm in %d calls", calls);
}

std::string checkBadArguments(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  expectWarn("");  // every call below is meant to fail, and plugins may say so in a WARN
  NetProperties p;
  require(!s.api().getProperties(-1, &p).isOk(), "getProperties(-1) succeeded");
  require(!s.api().getProperties(s.deviceCount(), &p).isOk(), "getProperties(ndev) succeeded");
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  require(!s.api().listen(s.ctx(), s.deviceCount(), handle, &listen).isOk(), "listen on device ndev succeeded");
  Pair pair = s.connect();
  Buffer b(4096);
  void* data = b.data();
  size_t size = b.size();
  int tag = 0;
  void* req = nullptr;
  int tooMany = s.props().maxRecvs + 1;
  std::vector<void*> datas(static_cast<size_t>(tooMany), data);
  std::vector<size_t> sizes(static_cast<size_t>(tooMany), size);
  std::vector<int> tags(static_cast<size_t>(tooMany), 0);
  require(!s.api().irecv(pair.recv, 0, &data, &size, &tag, nullptr, nullptr, &req).isOk(), "irecv of n=0 succeeded");
  require(!s.api().irecv(pair.recv, tooMany, datas.data(), sizes.data(), tags.data(), nullptr, nullptr, &req).isOk(),
          strprintf("irecv of n=%d (maxRecvs + 1) succeeded", tooMany));
  if ((s.props().ptrSupport & WEFT_PTR_CUDA) == 0) {
    void* mh = nullptr;
    require(!s.api().regMr(pair.send, data, size, WEFT_PTR_CUDA, &mh).isOk(),
            "regMr of CUDA memory succeeded on a device without ptrSupport CUDA");
  }
  s.transfer(pair, 100, 1);  // the comm still works after the refused calls
  s.close(pair);
  return "bad devices, receive counts and memory types are refused; the comm still works";
}

}  // namespace weft::plugin::conformance
