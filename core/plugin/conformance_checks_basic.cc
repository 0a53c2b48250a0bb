// Checks of the calls around data movement: init, properties, handles and connection setup,
// and the strict extras about listen comms and argument checking.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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
  int devices = 0;
  {
    StdioTrap trap;  // a plugin should log through the host's logger, not to stdout/stderr
    Session first(plugin, o);
    devices = first.deviceCount();
    // NCCL 2.28 calls init once per communicator (v11: a context each) and finalize per context.
    void* ctx2 = nullptr;
    requireOk(plugin->api().init(&ctx2, 2, WEFT_NET_TRAFFIC_CLASS_UNDEF), "init for a second communicator",
              "NCCL: the second communicator's init fails");
    int n = -1;
    requireOk(plugin->api().devices(&n), "devices after a second init", "NCCL: the second communicator's init fails");
    require(n == devices, strprintf("device count changed from %d to %d", devices, n),
            "NCCL: the second communicator sees other devices than the first");
    requireOk(plugin->api().finalize(ctx2), "finalize of the second context", "NCCL: ncclCommDestroy returns the error");
    written = trap.bytes();
  }
  requireStrict(written == 0, strprintf("the plugin wrote %ld bytes to stdout/stderr instead of the logger", written),
                "NCCL prints them as they come, outside NCCL_DEBUG and NCCL_DEBUG_FILE");
  return strprintf("ABI v%d, %d device%s, init/finalize for two communicators", plugin->abiVersion(), devices,
                   devices == 1 ? "" : "s");
}

namespace {

// The properties NCCL 2.28 cannot work with: each fails the check and says what NCCL does.
void requireUsableProperties(const NetProperties& p, int d) {
  std::string at = strprintf("device %d: ", d);
  require(p.hasName && !p.name.empty(), at + "no name",
          "NCCL: the name keys the NIC in its topology (ncclTopoFillNet); a NULL one crashes it");
  require(p.ptrSupport & (WEFT_PTR_HOST | WEFT_PTR_CUDA), at + strprintf("ptrSupport 0x%x: neither host nor CUDA memory", p.ptrSupport),
          "NCCL: no buffer it could register");
  require(p.maxRecvs >= 1, at + strprintf("maxRecvs %d", p.maxRecvs),
          "NCCL: it groups up to maxRecvs receives per irecv (recvProxyProgress); below 1 the grouping breaks");
  bool unpackOk = p.netDeviceType == WEFT_NET_DEVICE_UNPACK && p.netDeviceVersion == WEFT_NET_DEVICE_UNPACK_VERSION;
  require(p.netDeviceType == WEFT_NET_DEVICE_HOST || unpackOk,
          at + strprintf("netDeviceType %d version %d", p.netDeviceType, p.netDeviceVersion),
          "NCCL: ncclNetCheckDeviceVersion refuses it and the plugin is not used");
  require(p.maxP2pBytes > 0 && p.maxP2pBytes <= static_cast<size_t>(WEFT_NET_MAX_SIZE_BYTES),
          at + strprintf("maxP2pBytes %zu", p.maxP2pBytes),
          "NCCL: sendProxySetup WARNs 'invalid value for maxP2pBytes' and the connection fails");
}

// weft's stricter expectations: with --strict they fail; otherwise each becomes one note (for
// all the devices it concerns) that says what NCCL makes of the value.
struct StrictProperty {
  bool (*holds)(const NetProperties& p, int ndev);
  std::string (*value)(const NetProperties& p);
  const char* ncclDoes;
};

const StrictProperty kStrictProperties[] = {
    {[](const NetProperties& p, int) { return p.speedMbps > 0; },
     [](const NetProperties& p) { return strprintf("speed %d Mbps", p.speedMbps); },
     "NCCL 2.28 takes a speed of 0 or less as 10000 Mbps (ncclTopoAddNet), so its model assumes 10 Gb/s"},
    {[](const NetProperties& p, int) { return (p.ptrSupport & ~(WEFT_PTR_HOST | WEFT_PTR_CUDA | WEFT_PTR_DMABUF)) == 0; },
     [](const NetProperties& p) { return strprintf("ptrSupport 0x%x has unknown bits", p.ptrSupport); }, "NCCL ignores them"},
    {[](const NetProperties& p, int) { return p.maxComms > 0; },
     [](const NetProperties& p) { return strprintf("maxComms %d", p.maxComms); },
     "NCCL 2.28 records it in its topology but never limits connections by it"},
    {[](const NetProperties& p, int) { return p.maxRecvs <= WEFT_NET_MAX_REQUESTS; },
     [](const NetProperties& p) { return strprintf("maxRecvs %d", p.maxRecvs); },
     "NCCL groups at most as many receives as it has channels on the comm"},
    {[](const NetProperties& p, int) { return p.latency >= 0; },
     [](const NetProperties& p) { return strprintf("latency %g us", static_cast<double>(p.latency)); },
     "NCCL adds it to its inter-node latency model, which a negative value skews"},
    {[](const NetProperties& p, int n) {
       bool ok = !p.vdevs.empty();
       for (int v : p.vdevs) ok = ok && v >= 0 && v < n;
       return ok;
     },
     [](const NetProperties&) { return std::string("vProps lists no device, or one that does not exist"); },
     "NCCL reads vProps of virtual NICs only (makeVDevice)"},
    {[](const NetProperties& p, int) { return p.maxMultiRequestSize >= 1; },
     [](const NetProperties& p) { return strprintf("maxMultiRequestSize %d", p.maxMultiRequestSize); },
     "NCCL 2.28 does not use it"},
};

void expectStrictProperties(const std::vector<NetProperties>& props) {
  const int n = static_cast<int>(props.size());
  for (const StrictProperty& e : kStrictProperties) {
    std::string devices, value;
    for (int d = 0; d < n; ++d) {
      if (e.holds(props[static_cast<size_t>(d)], n)) continue;
      devices += (devices.empty() ? "" : ", ") + std::to_string(d);
      if (value.empty()) value = e.value(props[static_cast<size_t>(d)]);
    }
    bool many = devices.find(',') != std::string::npos;
    requireStrict(devices.empty(), (many ? "devices " : "device ") + devices + ": " + value, e.ncclDoes);
  }
}

}  // namespace

std::string checkProperties(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  const int n = s.deviceCount();
  std::vector<NetProperties> props(static_cast<size_t>(n));
  for (int d = 0; d < n; ++d) {
    NetProperties& p = props[static_cast<size_t>(d)];
    requireOk(s.api().getProperties(d, &p), strprintf("getProperties(%d)", d), nccl::kInitFails);
    requireUsableProperties(p, d);
  }
  expectStrictProperties(props);
  const NetProperties& p = s.props();
  std::string speed = p.speedMbps > 0 ? strprintf("%d Mbps", p.speedMbps)
                                      : strprintf("speed %d (NCCL: 10000 Mbps)", p.speedMbps);
  return strprintf("%d device%s; dev %d: %s, %s, maxRecvs %d, ptrSupport 0x%x", n, n == 1 ? "" : "s", o.dev,
                   p.name.c_str(), speed.c_str(), p.maxRecvs, p.ptrSupport);
}

std::string checkHandle(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  unsigned char buf[2 * WEFT_NET_HANDLE_MAXSIZE];
  std::memset(buf, 0xa5, sizeof(buf));
  void* listen = nullptr;
  requireOk(s.api().listen(s.ctx(), s.dev(), buf, &listen), "listen", nccl::kSetupFails);
  int used = 0;
  for (int i = 0; i < WEFT_NET_HANDLE_MAXSIZE; ++i) used += buf[i] != 0xa5;
  for (size_t i = WEFT_NET_HANDLE_MAXSIZE; i < sizeof(buf); ++i) {
    require(buf[i] == 0xa5, strprintf("listen wrote byte %zu of the handle, past the %d-byte limit", i, WEFT_NET_HANDLE_MAXSIZE),
            "NCCL: the handle lives in a 128-byte field, so this overwrites NCCL's memory");
  }
  require(used > 0, "listen left the handle untouched", "NCCL: the peer's connect gets nothing to connect to");
  requireOk(s.api().closeListen(listen), "closeListen", "NCCL: connection setup fails");
  return strprintf("the handle fits in %d bytes", WEFT_NET_HANDLE_MAXSIZE);
}

std::string checkConnect(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  // Three connections as NCCL makes them, each with its own listen comm, set up by looping on
  // both calls from one thread: NCCL's proxy thread connects to some peers and accepts others,
  // so a connect that waits for accept (or the reverse) deadlocks it.
  Pair pairs[3];
  for (Pair& p : pairs) p = s.connect();
  for (int i = 0; i < 3; ++i) s.transfer(pairs[i], 1000 + static_cast<size_t>(i), i);
  for (Pair& p : pairs) s.close(p);
  return "3 connections, each set up without blocking and its listen comm closed after accept";
}

std::string checkListenReuse(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
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
  return strprintf("3 connections through one listen comm in %d calls (NCCL listens once per connection)", calls);
}

std::string checkBadArguments(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  expectWarn("");  // every call below is meant to fail, and plugins may say so in a WARN
  // None of these calls comes from NCCL, which checks its arguments itself: a plugin may trust
  // them. weft's own plugins refuse them, so that a host's bug shows at the call.
  NetProperties p;
  require(!s.api().getProperties(-1, &p).isOk(), "getProperties(-1) succeeded");
  require(!s.api().getProperties(s.deviceCount(), &p).isOk(), "getProperties(ndev) succeeded");
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  require(!s.api().listen(s.ctx(), s.deviceCount(), handle, &listen).isOk(), "listen on device ndev succeeded");
  Pair pair = s.connect();
  RegisteredBuffer b(s, pair.recv, 4096, "recv");
  void* data = b.data();
  void* mh = b.mhandle();
  size_t size = b.size();
  int tag = 0;
  void* req = nullptr;
  int tooMany = s.props().maxRecvs + 1;
  std::vector<void*> datas(static_cast<size_t>(tooMany), data), mhs(static_cast<size_t>(tooMany), mh);
  std::vector<size_t> sizes(static_cast<size_t>(tooMany), size);
  std::vector<int> tags(static_cast<size_t>(tooMany), 0);
  require(!s.api().irecv(pair.recv, 0, &data, &size, &tag, &mh, nullptr, &req).isOk(), "irecv of n=0 succeeded");
  require(!s.api().irecv(pair.recv, tooMany, datas.data(), sizes.data(), tags.data(), mhs.data(), nullptr, &req).isOk(),
          strprintf("irecv of n=%d (maxRecvs + 1) succeeded", tooMany));
  if ((s.props().ptrSupport & WEFT_PTR_CUDA) == 0) {
    void* cudaMh = nullptr;
    require(!s.api().regMr(pair.send, data, size, WEFT_PTR_CUDA, &cudaMh).isOk(),
            "regMr of CUDA memory succeeded on a device without ptrSupport CUDA");
  }
  b.release();
  s.transfer(pair, 100, 1);  // the comm still works after the refused calls
  s.close(pair);
  return "bad devices, receive counts and memory types are refused; the comm still works";
}

}  // namespace weft::plugin::conformance
