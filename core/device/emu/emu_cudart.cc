// The emulated CUDA runtime (emu_cudart.h): what libweft's device path and the device tests call,
// over host memory and host threads. Error codes are CUDA's.
#include "core/device/emu/emu_cudart.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/device/cuda_api.h"
#include "core/device/launch.h"

#define WEFT_EMU_API extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kMemoryAllocation = 2;
constexpr int kInvalidDevice = 101;
constexpr int kInvalidResourceHandle = 400;
constexpr int kNotReady = 600;
constexpr int kMapBufferObjectFailed = 205;
constexpr int kHostMemoryAlreadyRegistered = 712;
constexpr int kHostMemoryNotRegistered = 713;
constexpr uint64_t kHandleMagic = 0x31756d6574666577ull;  // "weftemu1"

// One allocation: device memory (a memfd mapping, ours or another process's), or pinned host
// memory (cudaHostAlloc), which a kernel reaches at the same address.
struct Alloc {
  size_t size = 0;
  int fd = -1;          // device memory this process made (the IPC handle names it)
  bool imported = false;
  bool host = false;
  int device = 0;
  bool registered = false;  // cudaHostRegister: the caller's memory, not freed here
};
std::mutex g_mu;
std::map<uintptr_t, Alloc> g_allocs;  // by base address
thread_local int t_device = 0;

// The allocation holding p, or end().
std::map<uintptr_t, Alloc>::iterator findAlloc(const void* p) {
  auto a = reinterpret_cast<uintptr_t>(p);
  auto it = g_allocs.upper_bound(a);
  if (it == g_allocs.begin()) return g_allocs.end();
  --it;
  return a < it->first + std::max<size_t>(it->second.size, 1) ? it : g_allocs.end();
}

size_t pageRound(size_t n) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (std::max<size_t>(n, 1) + page - 1) / page * page;
}

// What a stream's events and waits refer to: its queue and counters, which outlive the stream
// (an event recorded on a destroyed stream stays valid, as in CUDA).
struct StreamCore {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  uint64_t enqueued = 0, done = 0;
  bool quit = false;
  bool reached(uint64_t seq) {
    std::lock_guard<std::mutex> lock(mu);
    return done >= seq;
  }
  void waitFor(uint64_t seq) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done >= seq; });
  }
};

// A stream: its operations run in order on a thread of its own.
class Stream {
 public:
  Stream() : core_(std::make_shared<StreamCore>()), thread_([c = core_] { loop(*c); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      core_->quit = true;
    }
    core_->cv.notify_all();
    thread_.join();  // after what was queued has run
  }
  // Enqueues f; the operation's number (1-based).
  uint64_t push(std::function<void()> f) {
    std::lock_guard<std::mutex> lock(core_->mu);
    core_->queue.push_back(std::move(f));
    core_->cv.notify_all();
    return ++core_->enqueued;
  }
  uint64_t enqueued() {
    std::lock_guard<std::mutex> lock(core_->mu);
    return core_->enqueued;
  }
  void sync() { core_->waitFor(enqueued()); }
  const std::shared_ptr<StreamCore>& core() const { return core_; }

 private:
  static void loop(StreamCore& c) {
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock<std::mutex> lock(c.mu);
        c.cv.wait(lock, [&] { return c.quit || !c.queue.empty(); });
        if (c.queue.empty()) return;
        f = std::move(c.queue.front());
        c.queue.pop_front();
      }
      f();
      {
        std::lock_guard<std::mutex> lock(c.mu);
        ++c.done;
      }
      c.cv.notify_all();
    }
  }
  std::shared_ptr<StreamCore> core_;
  std::thread thread_;
};

std::mutex g_streamMu;
std::set<Stream*> g_streams;

Stream& defaultStream() {
  static Stream* s = [] {
    auto* d = new Stream();  // lives as long as the process: work may still be queued at exit
    std::lock_guard<std::mutex> lock(g_streamMu);
    g_streams.insert(d);
    return d;
  }();
  return *s;
}
Stream* streamOf(void* s) { return s != nullptr ? static_cast<Stream*>(s) : &defaultStream(); }

struct Event {
  std::shared_ptr<StreamCore> stream;  // null: never recorded
  uint64_t seq = 0;
};

struct IpcHandle {
  uint64_t magic;
  int64_t pid;
  int64_t fd;
  uint64_t size;
};
static_assert(sizeof(IpcHandle) <= weft::device::kCudaIpcHandleSize);

int emuDevices() {
  const char* v = std::getenv("WEFT_EMU_DEVICES");
  int n = v != nullptr ? std::atoi(v) : 8;
  return n > 0 ? n : 8;
}

}  // namespace

WEFT_EMU_API int cudaGetDeviceCount(int* count) {
  if (count == nullptr) return kInvalidValue;
  *count = emuDevices();
  return kSuccess;
}

WEFT_EMU_API int cudaSetDevice(int device) {
  if (device < 0 || device >= emuDevices()) return kInvalidDevice;
  t_device = device;
  return kSuccess;
}

WEFT_EMU_API int cudaGetDevice(int* device) {
  if (device == nullptr) return kInvalidValue;
  *device = t_device;
  return kSuccess;
}

WEFT_EMU_API int cudaMalloc(void** ptr, size_t size) {
  if (ptr == nullptr) return kInvalidValue;
  *ptr = nullptr;
  if (size == 0) return kSuccess;
  int fd = memfd_create("weft-emu-device", MFD_CLOEXEC);
  if (fd < 0) return kMemoryAllocation;
  const size_t bytes = pageRound(size);
  void* p = ftruncate(fd, static_cast<off_t>(bytes)) == 0
                ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                : MAP_FAILED;
  if (p == MAP_FAILED) {
    close(fd);
    return kMemoryAllocation;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_allocs[reinterpret_cast<uintptr_t>(p)] = Alloc{bytes, fd, false, false, t_device};
  *ptr = p;
  return kSuccess;
}

WEFT_EMU_API int cudaFree(void* ptr) {
  if (ptr == nullptr) return kSuccess;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_allocs.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_allocs.end() || it->second.host || it->second.imported) return kInvalidValue;
  munmap(ptr, it->second.size);
  close(it->second.fd);
  g_allocs.erase(it);
  return kSuccess;
}

WEFT_EMU_API int cudaDeviceSynchronize(void) {
  std::vector<Stream*> all;
  {
    std::lock_guard<std::mutex> lock(g_streamMu);
    all.assign(g_streams.begin(), g_streams.end());
  }
  for (Stream* s : all) s->sync();
  return kSuccess;
}

WEFT_EMU_API int cudaMemset(void* ptr, int value, size_t size) {
  cudaDeviceSynchronize();
  std::memset(ptr, value, size);
  return kSuccess;
}

WEFT_EMU_API int cudaMemcpy(void* dst, const void* src, size_t size, int /*kind*/) {
  cudaDeviceSynchronize();
  if (size > 0) std::memmove(dst, src, size);
  return kSuccess;
}

WEFT_EMU_API int cudaMemcpyAsync(void* dst, const void* src, size_t size, int /*kind*/, void* stream) {
  if (size == 0) return kSuccess;
  bool fromDevice;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = findAlloc(src);
    fromDevice = it != g_allocs.end();
  }
  if (fromDevice) {
    streamOf(stream)->push([=] { std::memmove(dst, src, size); });
  } else {
    // Pageable host memory: staged now, as CUDA does, so the caller may reuse it on return.
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + size);
    streamOf(stream)->push([=] { std::memcpy(dst, staged->data(), size); });
  }
  return kSuccess;
}

WEFT_EMU_API int cudaHostAlloc(void** ptr, size_t size, unsigned /*flags*/) {
  if (ptr == nullptr) return kInvalidValue;
  const size_t bytes = pageRound(size);
  void* p = std::aligned_alloc(4096, bytes);
  if (p == nullptr) return kMemoryAllocation;
  std::memset(p, 0, bytes);
  std::lock_guard<std::mutex> lock(g_mu);
  g_allocs[reinterpret_cast<uintptr_t>(p)] = Alloc{bytes, -1, false, true, t_device};
  *ptr = p;
  return kSuccess;
}

WEFT_EMU_API int cudaHostGetDevicePointer(void** device, void* host, unsigned /*flags*/) {
  if (device == nullptr) return kInvalidValue;
  *device = host;
  return kSuccess;
}

WEFT_EMU_API int cudaFreeHost(void* ptr) {
  if (ptr == nullptr) return kSuccess;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_allocs.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_allocs.end() || !it->second.host || it->second.registered) return kInvalidValue;
  g_allocs.erase(it);
  std::free(ptr);
  return kSuccess;
}

// Host memory the caller made (a /dev/shm mapping, say), registered: kernels reach it at the
// same address, as on a GPU with unified addressing.
WEFT_EMU_API int cudaHostRegister(void* ptr, size_t size, unsigned /*flags*/) {
  if (ptr == nullptr || size == 0) return kInvalidValue;
  std::lock_guard<std::mutex> lock(g_mu);
  if (findAlloc(ptr) != g_allocs.end()) return kHostMemoryAlreadyRegistered;
  g_allocs[reinterpret_cast<uintptr_t>(ptr)] = Alloc{size, -1, false, true, t_device, true};
  return kSuccess;
}

WEFT_EMU_API int cudaHostUnregister(void* ptr) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_allocs.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_allocs.end() || !it->second.registered) return kHostMemoryNotRegistered;
  g_allocs.erase(it);
  return kSuccess;
}

WEFT_EMU_API int cudaPointerGetAttributes(weft::device::CudaPointerAttributes* attr, const void* ptr) {
  if (attr == nullptr) return kInvalidValue;
  std::memset(attr, 0, sizeof(*attr));
  attr->device = -2;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = findAlloc(ptr);
  if (it == g_allocs.end()) return kSuccess;  // cudaMemoryTypeUnregistered
  attr->type = it->second.host ? 1 : weft::device::kCudaMemoryTypeDevice;
  attr->device = it->second.device;
  attr->devicePointer = const_cast<void*>(ptr);
  attr->hostPointer = it->second.host ? const_cast<void*>(ptr) : nullptr;
  return kSuccess;
}

WEFT_EMU_API int cudaIpcGetMemHandle(weft::device::CudaIpcHandle* handle, void* ptr) {
  if (handle == nullptr) return kInvalidValue;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = findAlloc(ptr);
  if (it == g_allocs.end() || it->second.host || it->second.imported) return kInvalidValue;
  IpcHandle h{kHandleMagic, static_cast<int64_t>(getpid()), it->second.fd, it->second.size};
  std::memset(handle, 0, sizeof(*handle));
  std::memcpy(handle->bytes, &h, sizeof(h));
  return kSuccess;
}

WEFT_EMU_API int cudaIpcOpenMemHandle(void** ptr, weft::device::CudaIpcHandle handle, unsigned /*flags*/) {
  if (ptr == nullptr) return kInvalidValue;
  IpcHandle h;
  std::memcpy(&h, handle.bytes, sizeof(h));
  // As CUDA: a handle is for other processes (the exporter uses its own pointer).
  if (h.magic != kHandleMagic || h.pid == static_cast<int64_t>(getpid())) return kInvalidResourceHandle;
  std::string path = "/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return kMapBufferObjectFailed;
  void* p = mmap(nullptr, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return kMapBufferObjectFailed;
  std::lock_guard<std::mutex> lock(g_mu);
  g_allocs[reinterpret_cast<uintptr_t>(p)] = Alloc{h.size, -1, true, false, t_device};
  *ptr = p;
  return kSuccess;
}

WEFT_EMU_API int cudaIpcCloseMemHandle(void* ptr) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_allocs.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_allocs.end() || !it->second.imported) return kInvalidValue;
  munmap(ptr, it->second.size);
  g_allocs.erase(it);
  return kSuccess;
}

WEFT_EMU_API int cudaStreamCreate(void** stream) {
  if (stream == nullptr) return kInvalidValue;
  auto* s = new Stream();
  std::lock_guard<std::mutex> lock(g_streamMu);
  g_streams.insert(s);
  *stream = s;
  return kSuccess;
}

WEFT_EMU_API int cudaStreamDestroy(void* stream) {
  if (stream == nullptr) return kInvalidValue;
  auto* s = static_cast<Stream*>(stream);
  {
    std::lock_guard<std::mutex> lock(g_streamMu);
    if (g_streams.erase(s) == 0) return kInvalidResourceHandle;
  }
  delete s;  // runs what is queued, then ends its thread
  return kSuccess;
}

WEFT_EMU_API int cudaStreamSynchronize(void* stream) {
  streamOf(stream)->sync();
  return kSuccess;
}

WEFT_EMU_API int cudaEventCreateWithFlags(void** event, unsigned /*flags*/) {
  if (event == nullptr) return kInvalidValue;
  *event = new Event();
  return kSuccess;
}

WEFT_EMU_API int cudaEventRecord(void* event, void* stream) {
  if (event == nullptr) return kInvalidResourceHandle;
  auto* e = static_cast<Event*>(event);
  Stream* s = streamOf(stream);
  e->stream = s->core();
  e->seq = s->enqueued();
  return kSuccess;
}

WEFT_EMU_API int cudaEventQuery(void* event) {
  if (event == nullptr) return kInvalidResourceHandle;
  auto* e = static_cast<Event*>(event);
  return e->stream == nullptr || e->stream->reached(e->seq) ? kSuccess : kNotReady;
}

WEFT_EMU_API int cudaEventSynchronize(void* event) {
  if (event == nullptr) return kInvalidResourceHandle;
  auto* e = static_cast<Event*>(event);
  if (e->stream != nullptr) e->stream->waitFor(e->seq);
  return kSuccess;
}

WEFT_EMU_API int cudaEventDestroy(void* event) {
  delete static_cast<Event*>(event);
  return kSuccess;
}

WEFT_EMU_API int cudaStreamWaitEvent(void* stream, void* event, unsigned /*flags*/) {
  if (event == nullptr) return kInvalidResourceHandle;
  const Event e = *static_cast<Event*>(event);
  Stream* s = streamOf(stream);
  if (e.stream == nullptr || e.stream == s->core()) return kSuccess;  // a stream is in order already
  s->push([e] { e.stream->waitFor(e.seq); });
  return kSuccess;
}

WEFT_EMU_API const char* cudaGetErrorString(int error) {
  switch (error) {
    case kSuccess: return "no error";
    case kInvalidValue: return "invalid argument";
    case kMemoryAllocation: return "out of memory";
    case kInvalidDevice: return "invalid device ordinal";
    case kMapBufferObjectFailed: return "mapping of buffer object failed";
    case kInvalidResourceHandle: return "invalid resource handle";
    case kNotReady: return "device not ready";
    case kHostMemoryAlreadyRegistered: return "part or all of the requested memory range is already mapped";
    case kHostMemoryNotRegistered: return "pointer does not correspond to a registered memory region";
    default: return "unknown error";
  }
}

WEFT_EMU_API int cudaGetLastError(void) { return kSuccess; }

// The collective kernel in stream order, on at most $WEFT_EMU_THREADS (8) host threads per block
// (one host thread per CUDA thread: a GPU's 512 would be thousands of threads per launch).
WEFT_EMU_API int weftDeviceLaunchColl(const weft::device::DevWork* w, unsigned nChannels, unsigned nThreads,
                                      void* stream) {
  if (w == nullptr || nChannels == 0 || nThreads == 0) return kInvalidValue;
  const char* v = std::getenv("WEFT_EMU_THREADS");
  unsigned cap = v != nullptr && std::atoi(v) >= 2 ? static_cast<unsigned>(std::atoi(v)) : 8;
  unsigned threads = std::min(nThreads, cap) & ~1u;  // even: a tree splits the block in two lanes
  const weft::device::DevWork work = *w;
  streamOf(stream)->push([work, nChannels, threads] { (void)weft::device::emulateCollective(work, nChannels, threads); });
  return kSuccess;
}
