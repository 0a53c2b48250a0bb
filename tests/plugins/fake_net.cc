// A fake net plugin for loader and adapter tests, compiled once per ABI version and behaviour:
//   FAKE_NET_VERSION  6 … 11: the one ncclNetPlugin_vN table this build exports
//   FAKE_NET_MODE     what it does wrong (kModeOk: nothing)
// Data moves inside the process: listen registers a mailbox, connect/accept pair up through it,
// isend queues a copy, and irecv's test matches queued messages by tag. connect and accept
// each answer "not yet" once, so callers must loop as the ABI requires.
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "weft/net.h"

namespace {

constexpr int kModeOk = 0;
constexpr int kModeInitFails = 1;
constexpr int kModeNoDevices = 2;
constexpr int kModeBadCount = 3;      // devices() succeeds with a negative count
constexpr int kModeNullPropName = 4;  // getProperties() returns a NULL name
constexpr int kModeNullTableName = 5; // the table's name is NULL
constexpr int kMode = FAKE_NET_MODE;
constexpr int kNumDevices = 2;
constexpr uint64_t kMagic = 0xfa4e4e7f00d5ULL;

struct Message {
  int tag;
  std::vector<char> bytes;
};
struct Channel {  // one direction of one connection
  std::deque<Message> queue;
};
struct Listener {
  uint64_t id;
  std::deque<std::shared_ptr<Channel>> pending;  // connected, not yet accepted
};
struct Comm {
  std::shared_ptr<Channel> channel;
  bool isSend;
};
struct Request {
  Comm* comm = nullptr;
  bool isSend = false;
  size_t sentSize = 0;
  int n = 0;
  std::vector<void*> data;
  std::vector<size_t> capacity;
  std::vector<int> tags;
  std::vector<int> received;  // -1 until filled
};
struct Handle {
  uint64_t magic;
  uint64_t listenerId;
};
static_assert(sizeof(Handle) <= WEFT_NET_HANDLE_MAXSIZE);

std::mutex gMutex;
std::map<uint64_t, Listener*> gListeners;
uint64_t gNextId = 1;
int gInitCalls = 0;
int gLiveRegistrations = 0;
weft_debug_logger_t gLog = nullptr;

weft_result_t fakeInit() {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gInitCalls;
  if (gLog) gLog(WEFT_LOG_INFO, WEFT_LOG_NET, __FILE__, __LINE__, "fake-v%d: init", FAKE_NET_VERSION);
  return kMode == kModeInitFails ? weftSystemError : weftSuccess;
}

weft_result_t fakeDevices(int* ndev) {
  *ndev = kMode == kModeNoDevices ? 0 : kMode == kModeBadCount ? -3 : kNumDevices;
  return weftSuccess;
}

// Fills the fields every version has; version-specific ones are set by the callers below.
template <typename P>
weft_result_t fillCommon(int dev, P* p) {
  if (dev < 0 || dev >= kNumDevices) return weftInvalidArgument;
  static char name[] = "fake0";
  p->name = kMode == kModeNullPropName ? nullptr : name;
  p->pciPath = nullptr;
  p->guid = 0x1000 + static_cast<uint64_t>(dev);
  p->ptrSupport = WEFT_PTR_HOST;
  p->speed = 12345;
  p->port = dev + 1;
  p->latency = 1.5f;
  p->maxComms = 1000;
  p->maxRecvs = 4;
  return weftSuccess;
}

weft_result_t fakeListen(int dev, void* handle, void** listenComm) {
  if (dev < 0 || dev >= kNumDevices) return weftInvalidArgument;
  auto* l = new Listener();
  std::lock_guard<std::mutex> lock(gMutex);
  l->id = gNextId++;
  gListeners[l->id] = l;
  Handle h{kMagic, l->id};
  std::memcpy(handle, &h, sizeof(h));
  *listenComm = l;
  return weftSuccess;
}

weft_result_t fakeConnect(void* handle, void** sendComm) {
  static thread_local bool answeredNotYet = false;
  *sendComm = nullptr;
  if (!answeredNotYet) {  // the ABI allows "not yet": make every caller cope with it
    answeredNotYet = true;
    return weftSuccess;
  }
  answeredNotYet = false;
  Handle h;
  std::memcpy(&h, handle, sizeof(h));
  std::lock_guard<std::mutex> lock(gMutex);
  auto it = gListeners.find(h.listenerId);
  if (h.magic != kMagic || it == gListeners.end()) return weftInvalidArgument;
  auto channel = std::make_shared<Channel>();
  it->second->pending.push_back(channel);
  *sendComm = new Comm{channel, true};
  return weftSuccess;
}

weft_result_t fakeAccept(void* listenComm, void** recvComm) {
  auto* l = static_cast<Listener*>(listenComm);
  std::lock_guard<std::mutex> lock(gMutex);
  *recvComm = nullptr;
  if (l->pending.empty()) return weftSuccess;
  *recvComm = new Comm{l->pending.front(), false};
  l->pending.pop_front();
  return weftSuccess;
}

weft_result_t fakeRegMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (comm == nullptr || type != WEFT_PTR_HOST) return weftInternalError;
  std::lock_guard<std::mutex> lock(gMutex);
  ++gLiveRegistrations;
  *mhandle = new size_t(size);
  return weftSuccess;
}
#if FAKE_NET_VERSION < 8
weft_result_t fakeRegMrInt(void* comm, void* data, int size, int type, void** mhandle) {
  return size < 0 ? weftInvalidArgument : fakeRegMr(comm, data, static_cast<size_t>(size), type, mhandle);
}
#endif
weft_result_t fakeDeregMr(void* comm, void* mhandle) {
  if (mhandle == nullptr) return weftInvalidArgument;
  std::lock_guard<std::mutex> lock(gMutex);
  --gLiveRegistrations;
  delete static_cast<size_t*>(mhandle);
  return weftSuccess;
}
weft_result_t fakeRegMrDmaBuf(void*, void*, size_t, int, uint64_t, int, void**) { return weftInternalError; }

weft_result_t fakeIsend(void* sendComm, void* data, size_t size, int tag, void** request) {
  auto* c = static_cast<Comm*>(sendComm);
  if (c == nullptr || !c->isSend) return weftInvalidArgument;
  std::lock_guard<std::mutex> lock(gMutex);
  const char* bytes = static_cast<const char*>(data);
  c->channel->queue.push_back(Message{tag, std::vector<char>(bytes, bytes + size)});
  auto* r = new Request();
  r->comm = c;
  r->isSend = true;
  r->sentSize = size;
  *request = r;
  return weftSuccess;
}

template <typename Size>
weft_result_t fakeIrecv(void* recvComm, int n, void** data, Size* sizes, int* tags, void** request) {
  auto* c = static_cast<Comm*>(recvComm);
  if (c == nullptr || c->isSend || n < 1 || n > 4) return weftInvalidArgument;
  auto* r = new Request();
  r->comm = c;
  r->n = n;
  for (int i = 0; i < n; ++i) {
    r->data.push_back(data[i]);
    r->capacity.push_back(static_cast<size_t>(sizes[i]));
    r->tags.push_back(tags[i]);
    r->received.push_back(-1);
  }
  *request = r;
  return weftSuccess;
}

// Moves queued messages into the request's buffers, matching by tag in arrival order.
bool fillReceives(Request* r) {
  bool all = true;
  for (int i = 0; i < r->n; ++i) {
    if (r->received[i] >= 0) continue;
    auto& q = r->comm->channel->queue;
    auto it = q.begin();
    while (it != q.end() && it->tag != r->tags[i]) ++it;
    if (it == q.end() || it->bytes.size() > r->capacity[i]) {
      all = false;
      continue;
    }
    if (!it->bytes.empty()) std::memcpy(r->data[i], it->bytes.data(), it->bytes.size());
    r->received[i] = static_cast<int>(it->bytes.size());
    q.erase(it);
  }
  return all;
}

weft_result_t fakeTest(void* request, int* done, int* sizes) {
  auto* r = static_cast<Request*>(request);
  if (r == nullptr) return weftInvalidArgument;
  std::lock_guard<std::mutex> lock(gMutex);
  *done = r->isSend ? 1 : fillReceives(r) ? 1 : 0;
  if (!*done) return weftSuccess;
  if (sizes != nullptr) {
    if (r->isSend) sizes[0] = static_cast<int>(r->sentSize);
    for (int i = 0; i < r->n; ++i) sizes[i] = r->received[i];
  }
  delete r;
  return weftSuccess;
}

weft_result_t fakeIflush(void*, int, void**, int*, void**, void**) { return weftInternalError; }
weft_result_t fakeCloseSend(void* c) { delete static_cast<Comm*>(c); return weftSuccess; }
weft_result_t fakeCloseRecv(void* c) { delete static_cast<Comm*>(c); return weftSuccess; }
weft_result_t fakeCloseListen(void* l) {
  auto* listener = static_cast<Listener*>(l);
  std::lock_guard<std::mutex> lock(gMutex);
  gListeners.erase(listener->id);
  delete listener;
  return weftSuccess;
}
#if FAKE_NET_VERSION >= 7
weft_result_t fakeGetDeviceMr(void*, void*, void**) { return weftInternalError; }
weft_result_t fakeIrecvConsumed(void*, int, void*) { return weftInternalError; }
#endif

}  // namespace

// Test hooks, found with dlsym by the loader tests.
extern "C" WEFT_NET_EXPORT int fakeNetInitCalls() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gInitCalls;
}
extern "C" WEFT_NET_EXPORT int fakeNetLiveRegistrations() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gLiveRegistrations;
}

#include "fake_net_tables.inc"
