#include "core/plugin/conformance_support.h"

#include <sys/mman.h>

#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "core/base/strings.h"

namespace weft::plugin::conformance {

namespace {

std::string withConsequence(const std::string& reason, const char* consequence) {
  return consequence == nullptr ? reason : reason + " (" + consequence + ")";
}

// The check's mode and notes, in the check's own process.
bool gStrict = false;
std::mutex gNotesMutex;
std::vector<std::string> gNotes;

}  // namespace

void require(bool condition, const std::string& reason, const char* consequence) {
  if (!condition) throw CheckFailed(withConsequence(reason, consequence));
}

void requireOk(const Status& s, const std::string& what, const char* consequence) {
  if (!s.isOk()) throw CheckFailed(withConsequence(what + ": " + s.message(), consequence));
}

void setStrict(bool strict) { gStrict = strict; }
bool strictMode() { return gStrict; }

void requireStrict(bool condition, const std::string& reason, const std::string& ncclDoes) {
  if (condition) return;
  std::string text = reason + " (" + ncclDoes + ")";
  if (gStrict) throw CheckFailed("strict: " + text);
  std::lock_guard<std::mutex> lock(gNotesMutex);
  gNotes.push_back(std::move(text));
}

std::vector<std::string> takeNotes() {
  std::lock_guard<std::mutex> lock(gNotesMutex);
  return std::exchange(gNotes, {});
}

Session::Session(std::shared_ptr<LoadedNet> plugin, const Options& options) : options_(options) {
  auto inst = initNet(std::move(plugin), 0x5eed);
  if (!inst.isOk()) {
    // No device is a property of this host, not a fault of the plugin.
    if (inst.status().code() == Code::kInvalidUsage) {
      throw CheckSkipped(inst.status().message() +
                         " (NCCL disables a plugin without devices and falls back to its internal IB, then Socket)");
    }
    throw CheckFailed("init: " + inst.status().message() + " (" + nccl::kInitFails + ")");
  }
  instance_ = std::move(*inst);
  if (options_.dev < 0 || options_.dev >= instance_->deviceCount()) {
    throw CheckSkipped(strprintf("device %d does not exist (%d devices)", options_.dev, instance_->deviceCount()));
  }
  requireOk(api().getProperties(options_.dev, &props_), "getProperties", nccl::kInitFails);
  if ((props_.ptrSupport & WEFT_PTR_HOST) == 0) {
    throw CheckSkipped("the device does not take host memory (ptrSupport has no NCCL_PTR_HOST): NCCL uses it only "
                       "with GPU buffers, which this suite has not");
  }
}

Pair Session::connect(bool keepListen) {
  Pair p;
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  requireOk(api().listen(ctx(), dev(), handle, &p.listen), "listen", nccl::kSetupFails);
  require(p.listen != nullptr, "listen returned success without a listen comm", nccl::kSetupFails);
  Deadline d = deadline();
  weft_net_device_handle_v11_t* devHandle = nullptr;
  while (p.send == nullptr || p.recv == nullptr) {
    if (d.expired()) throw CheckFailed(std::string("connect/accept did not complete before the time limit (") + nccl::kHangs + ")");
    if (p.send == nullptr) requireOk(api().connect(ctx(), dev(), handle, &p.send, &devHandle), "connect", nccl::kSetupFails);
    if (p.recv == nullptr) requireOk(api().accept(p.listen, &p.recv, &devHandle), "accept", nccl::kSetupFails);
  }
  if (!keepListen) {
    requireOk(api().closeListen(p.listen), "closeListen after accept (NCCL closes it there)", nccl::kSetupFails);
    p.listen = nullptr;
  }
  return p;
}

void Session::close(Pair& p) {
  const char* ncclDoes = "NCCL: ncclCommDestroy returns the error";
  if (p.send) requireOk(api().closeSend(p.send), "closeSend", ncclDoes);
  if (p.recv) requireOk(api().closeRecv(p.recv), "closeRecv", ncclDoes);
  if (p.listen) requireOk(api().closeListen(p.listen), "closeListen", ncclDoes);
  p = Pair{};
}

void* Session::regMr(void* comm, void* data, size_t size, const char* what) {
  void* mh = nullptr;
  requireOk(api().regMr(comm, data, size, WEFT_PTR_HOST, &mh), strprintf("regMr of %s (%s)", humanBytes(size).c_str(), what),
            nccl::kSetupFails);
  return mh;
}

void Session::deregMr(void* comm, void* mhandle, const char* what) {
  requireOk(api().deregMr(comm, mhandle), std::string("deregMr (") + what + ")", "NCCL: freeing the connection fails");
}

void* Session::postSend(void* comm, void* data, size_t size, int tag, void* mhandle) {
  Deadline d = deadline();
  void* req = nullptr;
  while (req == nullptr) {
    if (d.expired()) throw CheckFailed(std::string("isend kept answering 'not now' (") + nccl::kHangs + ")");
    requireOk(api().isend(comm, data, size, tag, mhandle, nullptr, &req), "isend of " + humanBytes(size), nccl::kOpFails);
  }
  return req;
}

void* Session::postRecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles) {
  Deadline d = deadline();
  void* req = nullptr;
  while (req == nullptr) {
    if (d.expired()) throw CheckFailed(std::string("irecv kept answering 'not now' (") + nccl::kHangs + ")");
    requireOk(api().irecv(comm, n, data, sizes, tags, mhandles, nullptr, &req), "irecv", nccl::kOpFails);
  }
  return req;
}

std::vector<int> Session::wait(void* request, int n, const char* what) {
  Deadline d = deadline();
  std::vector<int> sizes(static_cast<size_t>(n < 1 ? 1 : n), -1);
  int done = 0;
  while (!done) {
    if (d.expired()) throw CheckFailed(std::string(what) + " never completed (" + nccl::kHangs + ")");
    requireOk(api().test(request, &done, sizes.data()), std::string("test of ") + what, nccl::kOpFails);
    if (!done) std::this_thread::yield();
  }
  return sizes;
}

namespace {

// One test call on `p`; true when it completed.
bool testOnce(NetApi& api, Pending& p) {
  p.sizes.assign(static_cast<size_t>(p.n < 1 ? 1 : p.n), -1);
  int done = 0;
  requireOk(api.test(p.request, &done, p.sizes.data()), std::string("test of ") + p.what, nccl::kOpFails);
  p.done = done != 0;
  return p.done;
}

}  // namespace

void Session::waitInOrder(std::vector<std::vector<Pending>>& perComm) {
  Deadline d = deadline();
  std::vector<size_t> next(perComm.size(), 0);
  for (;;) {
    size_t left = 0;
    for (size_t c = 0; c < perComm.size(); ++c) {
      if (next[c] < perComm[c].size() && testOnce(api(), perComm[c][next[c]])) ++next[c];
      left += perComm[c].size() - next[c];
    }
    if (left == 0) return;
    if (d.expired()) throw CheckFailed(std::to_string(left) + " requests never completed (" + nccl::kHangs + ")");
    std::this_thread::yield();
  }
}

void Session::waitAll(std::vector<Pending>& requests) {
  Deadline d = deadline();
  size_t left = requests.size();
  while (left > 0) {
    if (d.expired()) throw CheckFailed(std::to_string(left) + " requests never completed");
    for (Pending& p : requests) {
      if (!p.done && testOnce(api(), p)) --left;
    }
  }
}

void Session::transfer(Pair& p, size_t size, int tag) {
  RegisteredBuffer src(*this, p.send, size, "send"), dst(*this, p.recv, size, "recv");
  fillPattern(src.data(), size, size + static_cast<uint64_t>(tag));
  if (size > 0) std::memset(dst.data(), 0xee, size);
  void* data = dst.data();
  void* rmh = dst.mhandle();
  size_t cap = size;
  void* rreq = postRecv(p.recv, 1, &data, &cap, &tag, &rmh);
  void* sreq = postSend(p.send, src.data(), size, tag, src.mhandle());
  Deadline d = deadline();
  int sdone = 0, rdone = 0, ssize = -1, rsize = -1;
  while (!sdone || !rdone) {
    if (d.expired()) throw CheckFailed("transfer of " + humanBytes(size) + " did not complete (" + nccl::kHangs + ")");
    if (!sdone) requireOk(api().test(sreq, &sdone, &ssize), "test (send)", nccl::kOpFails);
    if (!rdone) requireOk(api().test(rreq, &rdone, &rsize), "test (recv)", nccl::kOpFails);
  }
  require(rsize == static_cast<int>(size), strprintf("receive of %s reported %d bytes", humanBytes(size).c_str(), rsize),
          "NCCL: it trusts the size test reports");
  long long bad = firstMismatch(dst.data(), size, size + static_cast<uint64_t>(tag));
  require(bad < 0, strprintf("%s message: byte %lld differs", humanBytes(size).c_str(), bad), nccl::kWrongData);
  src.release();
  dst.release();
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

RegisteredBuffer::RegisteredBuffer(Session& s, void* comm, size_t size, const char* what)
    : session_(s), comm_(comm), buffer_(size), what_(what) {
  mhandle_ = s.regMr(comm, buffer_.data(), size, what);
  registered_ = true;
}

RegisteredBuffer::~RegisteredBuffer() {
  if (registered_) (void)session_.api().deregMr(comm_, mhandle_);
}

void RegisteredBuffer::release() {
  // Whatever regMr returned goes back to deregMr, NULL included, as NCCL does.
  if (std::exchange(registered_, false)) session_.deregMr(comm_, mhandle_, what_);
}

}  // namespace weft::plugin::conformance
