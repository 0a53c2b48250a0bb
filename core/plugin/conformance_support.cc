#include "core/plugin/conformance_support.h"

#include <sys/mman.h>

#include <cstring>
#include <thread>

#include "core/base/strings.h"

namespace weft::plugin::conformance {

void require(bool condition, const std::string& reason) {
  if (!condition) throw CheckFailed(reason);
}

void requireOk(const Status& s, const std::string& what) {
  if (!s.isOk()) throw CheckFailed(what + ": " + s.message());
}

Session::Session(std::shared_ptr<LoadedNet> plugin, const Options& options) : options_(options) {
  auto inst = initNet(std::move(plugin), 0x5eed);
  if (!inst.isOk()) {
    // No device is a property of this host, not a fault of the plugin.
    if (inst.status().code() == Code::kInvalidUsage) throw CheckSkipped(inst.status().message());
    throw CheckFailed("init: " + inst.status().message());
  }
  instance_ = std::move(*inst);
  if (options_.dev < 0 || options_.dev >= instance_->deviceCount()) {
    throw CheckSkipped(strprintf("device %d does not exist (%d devices)", options_.dev, instance_->deviceCount()));
  }
  requireOk(api().getProperties(options_.dev, &props_), "getProperties");
  if ((props_.ptrSupport & WEFT_PTR_HOST) == 0) throw CheckSkipped("the device does not take host memory");
}

Pair Session::connect() {
  Pair p;
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  requireOk(api().listen(ctx(), dev(), handle, &p.listen), "listen");
  require(p.listen != nullptr, "listen returned success without a listen comm");
  Deadline d = deadline();
  weft_net_device_handle_v11_t* devHandle = nullptr;
  while (p.send == nullptr || p.recv == nullptr) {
    if (d.expired()) throw CheckFailed("connect/accept did not complete before the time limit");
    if (p.send == nullptr) requireOk(api().connect(ctx(), dev(), handle, &p.send, &devHandle), "connect");
    if (p.recv == nullptr) requireOk(api().accept(p.listen, &p.recv, &devHandle), "accept");
  }
  return p;
}

void Session::close(Pair& p) {
  if (p.send) requireOk(api().closeSend(p.send), "closeSend");
  if (p.recv) requireOk(api().closeRecv(p.recv), "closeRecv");
  if (p.listen) requireOk(api().closeListen(p.listen), "closeListen");
  p = Pair{};
}

void* Session::postSend(void* comm, void* data, size_t size, int tag, void* mhandle) {
  Deadline d = deadline();
  void* req = nullptr;
  while (req == nullptr) {
    if (d.expired()) throw CheckFailed("isend kept answering 'not now'");
    requireOk(api().isend(comm, data, size, tag, mhandle, nullptr, &req), "isend of " + humanBytes(size));
  }
  return req;
}

void* Session::postRecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles) {
  Deadline d = deadline();
  void* req = nullptr;
  while (req == nullptr) {
    if (d.expired()) throw CheckFailed("irecv kept answering 'not now'");
    requireOk(api().irecv(comm, n, data, sizes, tags, mhandles, nullptr, &req), "irecv");
  }
  return req;
}

std::vector<int> Session::wait(void* request, int n, const char* what) {
  Deadline d = deadline();
  std::vector<int> sizes(static_cast<size_t>(n < 1 ? 1 : n), -1);
  int done = 0;
  while (!done) {
    if (d.expired()) throw CheckFailed(std::string(what) + " never completed");
    requireOk(api().test(request, &done, sizes.data()), std::string("test of ") + what);
    if (!done) std::this_thread::yield();
  }
  return sizes;
}

void Session::waitAll(std::vector<Pending>& requests) {
  Deadline d = deadline();
  size_t left = requests.size();
  while (left > 0) {
    if (d.expired()) throw CheckFailed(std::to_string(left) + " requests never completed");
    for (Pending& p : requests) {
      if (p.done) continue;
      p.sizes.assign(static_cast<size_t>(p.n < 1 ? 1 : p.n), -1);
      int done = 0;
      requireOk(api().test(p.request, &done, p.sizes.data()), std::string("test of ") + p.what);
      if (done) {
        p.done = true;
        --left;
      }
    }
  }
}

void Session::transfer(Pair& p, size_t size, int tag) {
  Buffer src(size), dst(size);
  fillPattern(src.data(), size, size + static_cast<uint64_t>(tag));
  if (size > 0) std::memset(dst.data(), 0xee, size);
  void *smh = nullptr, *rmh = nullptr;
  requireOk(api().regMr(p.send, src.data(), size, WEFT_PTR_HOST, &smh), "regMr (send)");
  requireOk(api().regMr(p.recv, dst.data(), size, WEFT_PTR_HOST, &rmh), "regMr (recv)");
  void* data = dst.data();
  size_t cap = size;
  void* rreq = postRecv(p.recv, 1, &data, &cap, &tag, &rmh);
  void* sreq = postSend(p.send, src.data(), size, tag, smh);
  Deadline d = deadline();
  int sdone = 0, rdone = 0, ssize = -1, rsize = -1;
  while (!sdone || !rdone) {
    if (d.expired()) throw CheckFailed("transfer of " + humanBytes(size) + " did not complete");
    if (!sdone) requireOk(api().test(sreq, &sdone, &ssize), "test (send)");
    if (!rdone) requireOk(api().test(rreq, &rdone, &rsize), "test (recv)");
  }
  require(rsize == static_cast<int>(size), strprintf("receive of %s reported %d bytes", humanBytes(size).c_str(), rsize));
  long long bad = firstMismatch(dst.data(), size, size + static_cast<uint64_t>(tag));
  require(bad < 0, strprintf("%s message: byte %lld differs", humanBytes(size).c_str(), bad));
  requireOk(api().deregMr(p.send, smh), "deregMr (send)");
  requireOk(api().deregMr(p.recv, rmh), "deregMr (recv)");
}

void fillPattern(char* data, size_t size, uint64_t seed) {
  // 8 bytes at a time: fast enough for 1 GiB, and different for every offset and message.
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t v = x ^ (i * 0xbf58476d1ce4e5b9ULL);
    std::memcpy(data + i, &v, 8);
  }
  for (; i < size; ++i) data[i] = static_cast<char>(x >> (i % 8 * 8));
}

long long firstMismatch(const char* data, size_t size, uint64_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t v = x ^ (i * 0xbf58476d1ce4e5b9ULL), got;
    std::memcpy(&got, data + i, 8);
    if (got != v) {
      for (size_t k = 0; k < 8; ++k)
        if (reinterpret_cast<const char*>(&got)[k] != reinterpret_cast<const char*>(&v)[k]) return static_cast<long long>(i + k);
    }
  }
  for (; i < size; ++i)
    if (data[i] != static_cast<char>(x >> (i % 8 * 8))) return static_cast<long long>(i);
  return -1;
}

std::string humanBytes(size_t n) {
  if (n >= (size_t{1} << 30) && n % (size_t{1} << 30) == 0) return std::to_string(n >> 30) + " GiB";
  if (n >= (size_t{1} << 20) && n % (size_t{1} << 20) == 0) return std::to_string(n >> 20) + " MiB";
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " B";
}

Buffer::Buffer(size_t size) : data_(nullptr), size_(size) {
  void* p = mmap(nullptr, size == 0 ? 1 : size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw CheckFailed("cannot allocate " + humanBytes(size));
  data_ = static_cast<char*>(p);
}

Buffer::~Buffer() { munmap(data_, size_ == 0 ? 1 : size_); }

}  // namespace weft::plugin::conformance
