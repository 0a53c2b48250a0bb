#include "core/device/comm_device.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/coll/algorithm.h"
#include "core/coll/numeric.h"
#include "core/connect/connection.h"
#include "core/device/cuda_api.h"
#include "core/device/plan.h"
#include "core/device/proxy.h"
#include "core/runtime/shm.h"
#include "core/topo/params.h"

namespace weft::device {
namespace {

using runtime::Comm;

constexpr size_t kAlign = 4096;
constexpr size_t kCounterBytes = 128;   // a tail or a head, on a line of its own
constexpr uint32_t kLLStepBytes = 64 << 10;  // NCCL's LL buffer (512 KiB) over NCCL_STEPS
constexpr unsigned kThreads = 512;      // NCCL_NTHREADS' default: one CTA per channel
constexpr size_t kMaxWorkBuffers = 64;  // launches in flight before the oldest is waited for
// CPU endpoints have no NCCL model to pick the protocol (a communicator over NCCL_TOPO_FILE's GPUs
// has): LL up to this many bytes of traffic, Simple above, within NCCL_PROTO. A stand-in rule
// until the model is fed the real GPUs.
constexpr size_t kLLMaxBytes = 64 << 10;

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// The peers of rank `r`'s host it is connected to on channel c (ring and tree, each once, in a
// fixed order): both ends compute the same list, which orders the connections in r's arena.
// Peers on other hosts are reached through the network (netEnds).
std::vector<int> peersOn(const Comm& comm, int r, int c) {
  connect::ChannelLinks l = connect::channelOf(comm.channels, r, c);
  std::vector<int> out;
  const uint64_t host = comm.peers[static_cast<size_t>(r)].hostHash;
  auto add = [&](int p) {
    if (p >= 0 && comm.peers[static_cast<size_t>(p)].hostHash == host && std::find(out.begin(), out.end(), p) == out.end())
      out.push_back(p);
  };
  add(l.ringPrev);
  add(l.ringNext);
  add(l.treeUp);
  for (int d : l.treeDown) add(d);
  return out;
}

// Rank r's arena in its GPU memory: for each (channel, peer) it is connected to, the receive
// FIFOs from that peer (Simple and LL, kSteps slots each) and their tail, then the heads of its
// sends to each peer. Every rank can compute every rank's layout.
struct Layout {
  std::map<std::pair<int, int>, size_t> index;  // (channel, peer) -> i
  size_t simpleBytes = 0, llBytes = 0;
  size_t recvBlock = 0;
  size_t total = 0;
  size_t buff(int c, int p) const { return index.at({c, p}) * recvBlock; }
  size_t buffLL(int c, int p) const { return buff(c, p) + simpleBytes * kSteps; }
  size_t tail(int c, int p) const { return buffLL(c, p) + llBytes * kSteps; }
  size_t head(int c, int p) const { return index.size() * recvBlock + index.at({c, p}) * kCounterBytes; }
};

Layout layoutOf(const Comm& comm, int r, size_t simpleBytes, size_t llBytes) {
  Layout l;
  l.simpleBytes = simpleBytes;
  l.llBytes = llBytes;
  for (int c = 0; c < comm.channels.nChannels; ++c)
    for (int p : peersOn(comm, r, c)) l.index.emplace(std::make_pair(c, p), l.index.size());
  l.recvBlock = roundUp(kSteps * (simpleBytes + llBytes) + kCounterBytes, kAlign);
  // At least a page: a rank whose peers are all on other hosts still has an arena to share.
  l.total = std::max(kAlign, roundUp(l.index.size() * (l.recvBlock + kCounterBytes), kAlign));
  return l;
}

// What each rank tells the others at the first device collective.
struct PeerArena {
  CudaIpcHandle handle;
  uint64_t base;   // the arena in the owner's address space (used directly by ranks of its process)
  uint64_t bytes;
  int32_t pid;
  int32_t dev;
  uint64_t hostHash;
  uint32_t simpleBytes, llBytes;
  char shmName[64];  // SHM: the /dev/shm segment holding the arena (registered with CUDA); "": CUDA IPC
};

// One end of a device connection to a rank of another host: its FIFOs and counters in pinned,
// mapped host memory, moved through the net plugin by the communicator's proxy thread (proxy.h).
struct NetEnd {
  int id = -1;           // the proxy's connection
  char* host = nullptr;  // the block at host addresses (cudaHostAlloc)
  char* dev = nullptr;   // and at the kernel's
  size_t simpleBytes = 0, llBytes = 0;
  // The block: Simple slots, LL slots (none for point-to-point), tail, head.
  static size_t blockBytes(size_t simple, size_t ll) { return kSteps * (simple + ll) + 2 * kCounterBytes; }
  char* ll(char* base) const { return llBytes != 0 ? base + kSteps * simpleBytes : nullptr; }
  uint64_t* tail(char* base) const { return reinterpret_cast<uint64_t*>(base + kSteps * (simpleBytes + llBytes)); }
  uint64_t* head(char* base) const { return tail(base) + kCounterBytes / sizeof(uint64_t); }
  DevConn conn(uint64_t step) const { return DevConn{dev, ll(dev), tail(dev), head(dev), step}; }
  ProxyFifo fifo() const { return ProxyFifo{host, ll(host), tail(host), head(host), simpleBytes, llBytes}; }
};

// Connection ids of the device path in Comm::sends/recvs while they are made (connectAll), before
// the proxy takes them: collectives' rings and trees, and point-to-point.
constexpr int kNetConnIndexColl = 2;
constexpr int kNetConnIndexP2p = 3;

struct WorkBuffer {
  void* dev = nullptr;
  size_t bytes = 0;
  void* done = nullptr;  // an event recorded after the launch that used it
  bool used = false;
};

struct DeviceState {
  const CudaApi* api = nullptr;
  Comm* comm = nullptr;
  int dev = 0;
  size_t simpleBytes = 0, llBytes = 0;
  char* arena = nullptr;
  std::vector<char*> peerArena;  // by rank: null for ranks not connected to
  std::vector<char*> imported;   // what cudaIpcOpenMemHandle returned (closed at the end)
  std::vector<Layout> layouts;   // by rank (only those connected to, and this rank)
  uint64_t* abortHost = nullptr;
  uint64_t* abortDev = nullptr;
  void* last = nullptr;          // event after the last launch: the next one waits for it
  bool lastRecorded = false;
  std::vector<WorkBuffer> work;
  // Each connection's steps so far, the count the kernel keeps in conn->step: (channel, peer).
  std::map<std::pair<int, int>, uint64_t> recvSteps, sendSteps;
  bool saidLL128 = false;
  // Point-to-point connections, by peer: a block in each end's GPU memory holding the receive
  // FIFO from the peer (Simple), its tail, and the head of the sends to the peer.
  struct P2pPeer {
    char* mine = nullptr;
    char* theirs = nullptr;
    bool imported = false;
    bool remote = false;        // another host: through the proxy (netSend, netRecv)
    bool mineShm = false;       // `mine` is in shared host memory (SHM), not cudaMalloc's
    NetEnd netSend, netRecv;
    uint64_t sent = 0, received = 0;  // steps so far, each direction
  };
  std::map<int, P2pPeer> p2p;
  size_t p2pFifo() const { return kSteps * simpleBytes; }
  size_t p2pBlock() const { return roundUp(p2pFifo() + 2 * kCounterBytes, kAlign); }
  config::Selection protocols;  // NCCL_PROTO, read at the first device collective
  bool shmOnly = false;         // P2P disabled (p2pAllowed): this rank's FIFOs in shared host memory
  // Rings' and trees' connections to ranks of other hosts: (channel, peer, send).
  std::map<std::tuple<int, int, bool>, NetEnd> net;
  std::unique_ptr<NetProxy> proxy;  // made with the first connection to another host
  std::vector<void*> hostBlocks;    // what cudaHostAlloc gave the NetEnds
  // SHM (NCCL_P2P_DISABLE): /dev/shm segments registered with CUDA: this rank's arena, peers' arenas
  // and point-to-point blocks.
  std::vector<runtime::ShmSegment> shm;

  ~DeviceState() {
    if (api == nullptr) return;
    // A launch still in flight reads these buffers: wait for it (a stopped communicator's
    // kernels have seen the abort flag and leave).
    if (lastRecorded) (void)api->eventSynchronize(last);
    proxy.reset();  // after the kernels, which may wait for what it moves
    for (void* b : hostBlocks) (void)api->freeHost(b);
    for (runtime::ShmSegment& seg : shm) (void)api->hostUnregister(seg.data());
    shm.clear();
    if (comm != nullptr) comm->deviceAbort.store(nullptr);
    for (WorkBuffer& w : work) {
      if (w.done != nullptr) (void)api->eventDestroy(w.done);
      (void)api->free(w.dev);
    }
    if (last != nullptr) (void)api->eventDestroy(last);
    for (char* p : imported) (void)api->ipcCloseMemHandle(p);
    for (auto& [peer, c] : p2p) {
      if (c.imported) (void)api->ipcCloseMemHandle(c.theirs);
      if (c.mine != nullptr && !c.mineShm) (void)api->free(c.mine);
    }
    if (arena != nullptr) (void)api->free(arena);
    if (abortHost != nullptr) (void)api->freeHost(abortHost);
  }
};

// Whether ranks of one host may write into each other's GPU memory (NCCL's P2P transport): not
// where NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL=LOC; then the FIFOs live in shared host memory that
// every GPU reaches (NCCL's SHM transport).
bool p2pAllowed(const Comm& comm) {
  std::optional<int> level = topo::Params::fromSettings(comm.settings).userP2pLevel;
  return !level || *level > topo::val(topo::PathType::kLoc);
}

#define WEFT_CUDA_TRY(api, call, what)                       \
  do {                                                       \
    int rc_ = (call);                                        \
    if (rc_ != kCudaSuccess) return cudaError(api, what, rc_); \
  } while (0)

// The communicator's device state without connections: the abort flag, the launch order event.
// Not a collective call (a send alone may be the first device call).
Result<DeviceState*> stateOf(Comm& comm, const CudaApi& api) {
  if (comm.deviceState) return static_cast<DeviceState*>(comm.deviceState.get());
  auto st = std::make_shared<DeviceState>();
  st->api = &api;
  WEFT_CUDA_TRY(api, api.getDevice(&st->dev), "cudaGetDevice");
  st->simpleBytes = comm.stepSize;
  st->llBytes = kLLStepBytes;
  void* flag = nullptr;
  WEFT_CUDA_TRY(api, api.hostAlloc(&flag, sizeof(uint64_t), kCudaHostAllocMapped), "cudaHostAlloc (the abort flag)");
  st->abortHost = static_cast<uint64_t*>(flag);
  *st->abortHost = 0;
  void* flagDev = nullptr;
  WEFT_CUDA_TRY(api, api.hostGetDevicePointer(&flagDev, flag, 0), "cudaHostGetDevicePointer (the abort flag)");
  st->abortDev = static_cast<uint64_t*>(flagDev);
  WEFT_CUDA_TRY(api, api.eventCreateWithFlags(&st->last, kCudaEventDisableTiming), "cudaEventCreateWithFlags");
  st->protocols = comm.settings.protocols();
  st->shmOnly = !p2pAllowed(comm);
  st->comm = &comm;
  comm.deviceAbort.store(st->abortHost);
  if (comm.stop.load()) std::atomic_ref<uint64_t>(*st->abortHost).store(1);
  comm.deviceState = st;
  return st.get();
}

// A /dev/shm segment (made here or a peer's) registered with CUDA as mapped host memory: kept in
// st.shm; returns the address kernels use.
Result<char*> hostShared(DeviceState& st, Result<runtime::ShmSegment> made, const char* what) {
  WEFT_TRY(made.status());
  const CudaApi& api = *st.api;
  runtime::ShmSegment seg = std::move(*made);
  WEFT_CUDA_TRY(api, api.hostRegister(seg.data(), seg.size(), kCudaHostRegisterPortable | kCudaHostRegisterMapped),
                strprintf("cudaHostRegister (%s, %s)", what, seg.name().c_str()).c_str());
  void* dev = nullptr;
  int rc = api.hostGetDevicePointer(&dev, seg.data(), 0);
  if (rc != kCudaSuccess) {
    (void)api.hostUnregister(seg.data());
    return cudaError(api, "cudaHostGetDevicePointer (shared host memory)", rc);
  }
  st.shm.push_back(std::move(seg));
  return static_cast<char*>(dev);
}

// Gives the proxy the connection runtime::connectAll made for (connIndex, channel, peer, send),
// with its FIFO block in pinned host memory the kernel reaches.
Result<NetEnd> netEnd(DeviceState& st, Comm& comm, int connIndex, int channel, int peer, bool send, size_t llBytes) {
  const CudaApi& api = *st.api;
  NetEnd e;
  e.simpleBytes = st.simpleBytes;
  e.llBytes = llBytes;
  const size_t bytes = NetEnd::blockBytes(e.simpleBytes, e.llBytes);
  void* block = nullptr;
  WEFT_CUDA_TRY(api, api.hostAlloc(&block, bytes, kCudaHostAllocMapped), "cudaHostAlloc (a network connection's FIFOs)");
  st.hostBlocks.push_back(block);
  std::memset(block, 0, bytes);
  void* dev = nullptr;
  WEFT_CUDA_TRY(api, api.hostGetDevicePointer(&dev, block, 0), "cudaHostGetDevicePointer (a network connection's FIFOs)");
  e.host = static_cast<char*>(block);
  e.dev = static_cast<char*>(dev);
  if (!st.proxy) st.proxy = std::make_unique<NetProxy>(comm);
  Comm::Key key{connIndex, channel, peer};
  std::unique_ptr<runtime::SendConnection> sc;
  std::unique_ptr<runtime::RecvConnection> rc;
  {
    std::lock_guard<std::mutex> lock(comm.errorMutex);
    if (send) {
      auto node = comm.sends.extract(key);
      if (!node.empty()) sc = std::move(node.mapped());
    } else {
      auto node = comm.recvs.extract(key);
      if (!node.empty()) rc = std::move(node.mapped());
    }
    ++comm.connEpoch;
  }
  if (!sc && !rc) return internalError(strprintf("no network connection %s rank %d on channel %d", send ? "to" : "from", peer, channel));
  e.id = send ? st.proxy->addSend(std::move(sc), e.fifo(), channel, peer) : st.proxy->addRecv(std::move(rc), e.fifo(), channel, peer);
  return e;
}

// The rings' and trees' connections to ranks of other hosts: a net plugin connection each way
// the channel's links go, driven by the proxy (NCCL's NET transport, host-staged).
Status connectNet(DeviceState& st, Comm& comm) {
  std::vector<runtime::ConnectRequest> reqs;
  for (int c = 0; c < comm.channels.nChannels; ++c) {
    connect::ChannelLinks l = connect::channelOf(comm.channels, comm.rank, c);
    auto add = [&](int p, bool send) {
      if (p < 0 || comm.sameHost(p)) return;
      for (const runtime::ConnectRequest& r : reqs)
        if (r.channel == c && r.peer == p && r.send == send) return;
      reqs.push_back({&comm, kNetConnIndexColl, c, p, send});
    };
    add(l.ringPrev, false);
    add(l.ringNext, true);
    for (bool send : {false, true}) {
      add(l.treeUp, send);
      for (int d : l.treeDown) add(d, send);
    }
  }
  if (reqs.empty()) return Status::ok();
  WEFT_TRY(runtime::connectAll(reqs));
  for (const runtime::ConnectRequest& r : reqs) {
    WEFT_ASSIGN_OR_RETURN(NetEnd e, netEnd(st, comm, r.connIndex, r.channel, r.peer, r.send, st.llBytes));
    st.net[{r.channel, r.peer, r.send}] = e;
  }
  WEFT_INFO(log::kInit | log::kNet, "Connected %zu device connection(s) to other hosts via NET/%s through the proxy "
                                    "thread (host-staged FIFOs)",
            reqs.size(), comm.net ? comm.net->api().name() : "?");
  return Status::ok();
}

// The rings' and trees' device connections, made at the first device collective: a collective
// call (every rank exchanges its FIFOs' handle through the bootstrap).
Result<DeviceState*> connect(Comm& comm, const CudaApi& api) {
  WEFT_ASSIGN_OR_RETURN(DeviceState * st, stateOf(comm, api));
  if (st->arena != nullptr) return st;
  Layout mine = layoutOf(comm, comm.rank, st->simpleBytes, st->llBytes);
  std::vector<PeerArena> all(static_cast<size_t>(comm.nranks));
  PeerArena& me = all[static_cast<size_t>(comm.rank)];
  std::memset(&me, 0, sizeof(me));
  const bool shm = st->shmOnly;
  size_t arenaSegment = 0;
  if (shm) {
    // A new segment is zeroed; its name goes to the peers instead of an IPC handle.
    WEFT_ASSIGN_OR_RETURN(st->arena, hostShared(*st, runtime::ShmSegment::create(mine.total, "GPU FIFOs"), "the device connections' FIFOs"));
    arenaSegment = st->shm.size() - 1;
    std::snprintf(me.shmName, sizeof(me.shmName), "%s", st->shm.back().name().c_str());
  } else {
    void* arena = nullptr;
    WEFT_CUDA_TRY(api, api.malloc(&arena, mine.total), "cudaMalloc (the device connections' FIFOs)");
    st->arena = static_cast<char*>(arena);
    WEFT_CUDA_TRY(api, api.memset(arena, 0, mine.total), "cudaMemset (the device connections' FIFOs)");
    // Zeroed before any peer can write there (cudaMemset may still be running when it returns).
    WEFT_CUDA_TRY(api, api.deviceSynchronize(), "cudaDeviceSynchronize");
    WEFT_CUDA_TRY(api, api.ipcGetMemHandle(&me.handle, arena), "cudaIpcGetMemHandle (the device connections' FIFOs)");
  }
  me.base = reinterpret_cast<uint64_t>(st->arena);
  me.bytes = mine.total;
  me.pid = static_cast<int32_t>(getpid());
  me.dev = st->dev;
  me.hostHash = comm.peers[static_cast<size_t>(comm.rank)].hostHash;
  me.simpleBytes = static_cast<uint32_t>(st->simpleBytes);
  me.llBytes = static_cast<uint32_t>(st->llBytes);
  WEFT_TRY(comm.bootstrap->allgather(all.data(), sizeof(PeerArena), comm.opDeadline("exchanging GPU connection handles")));

  st->peerArena.assign(static_cast<size_t>(comm.nranks), nullptr);
  st->layouts.resize(static_cast<size_t>(comm.nranks));
  st->peerArena[static_cast<size_t>(comm.rank)] = st->arena;
  st->layouts[static_cast<size_t>(comm.rank)] = mine;
  std::vector<int> sameDevice;
  for (int r = 0; r < comm.nranks; ++r) {
    const PeerArena& p = all[static_cast<size_t>(r)];
    if (r != comm.rank && p.hostHash == me.hostHash && p.dev == me.dev) sameDevice.push_back(r);
    if (p.simpleBytes != me.simpleBytes || p.llBytes != me.llBytes)
      return invalidUsage(strprintf("rank %d's device FIFOs have %u/%u-byte slots, this rank's %u/%u (NCCL_BUFFSIZE "
                                    "must be the same on every rank)",
                                    r, p.simpleBytes, p.llBytes, me.simpleBytes, me.llBytes));
  }
  for (int c = 0; c < comm.channels.nChannels; ++c) {
    for (int r : peersOn(comm, comm.rank, c)) {
      if (st->peerArena[static_cast<size_t>(r)] != nullptr) continue;
      const PeerArena& p = all[static_cast<size_t>(r)];
      Layout theirs = layoutOf(comm, r, st->simpleBytes, st->llBytes);
      if (theirs.total != p.bytes)
        return internalError(strprintf("rank %d's device arena is %llu bytes, its layout here %zu", r,
                                       static_cast<unsigned long long>(p.bytes), theirs.total));
      if (p.pid == me.pid) {
        st->peerArena[static_cast<size_t>(r)] = reinterpret_cast<char*>(p.base);  // same process: same address space
      } else if (p.shmName[0] != '\0') {
        std::string name(p.shmName, strnlen(p.shmName, sizeof(p.shmName)));
        WEFT_ASSIGN_OR_RETURN(st->peerArena[static_cast<size_t>(r)],
                              hostShared(*st, runtime::ShmSegment::open(name, p.bytes, r), "a peer's FIFOs"));
      } else {
        void* opened = nullptr;
        WEFT_CUDA_TRY(api, api.ipcOpenMemHandle(&opened, p.handle, kCudaIpcMemLazyEnablePeerAccess),
                      strprintf("cudaIpcOpenMemHandle (rank %d's FIFOs, pid %d, device %d)", r, p.pid, p.dev).c_str());
        st->imported.push_back(static_cast<char*>(opened));
        st->peerArena[static_cast<size_t>(r)] = static_cast<char*>(opened);
      }
      st->layouts[static_cast<size_t>(r)] = std::move(theirs);
    }
  }
  // Where any rank's FIFOs are a /dev/shm segment (every rank sees the same `all`): once every
  // rank has mapped what it needs, the names can go (nothing is left if a process dies later).
  if (std::any_of(all.begin(), all.end(), [](const PeerArena& p) { return p.shmName[0] != '\0'; })) {
    std::vector<char> mapped(static_cast<size_t>(comm.nranks), 1);
    WEFT_TRY(comm.bootstrap->allgather(mapped.data(), 1, comm.opDeadline("mapping the peers' GPU FIFOs")));
    if (shm) st->shm[arenaSegment].unlink();
  }
  if (!sameDevice.empty())
    WEFT_INFO(log::kInit, "Duplicate GPU detected : rank %d and rank %d both on CUDA device %d: weft shares it "
                          "(NCCL refuses); %zu other rank(s) of this host use it",
              comm.rank, sameDevice.front(), st->dev, sameDevice.size());
  WEFT_INFO(log::kInit, "Connected %zu device connection(s) over %d channel(s) via %s (%s), %zu KiB of FIFOs",
            mine.index.size(), comm.channels.nChannels,
            shm ? "SHM/direct/direct (pinned host memory: P2P is disabled)" : "P2P/IPC", api.provider.c_str(),
            mine.total >> 10);
  WEFT_TRY(connectNet(*st, comm));
  return st;
}

// A device buffer of at least `bytes` that no launch in flight reads.
Result<WorkBuffer*> workBuffer(DeviceState& st, size_t bytes) {
  const CudaApi& api = *st.api;
  WorkBuffer* pick = nullptr;
  for (WorkBuffer& w : st.work)
    if (w.bytes >= bytes && (!w.used || api.eventQuery(w.done) == kCudaSuccess)) {
      pick = &w;
      break;
    }
  if (pick == nullptr && st.work.size() >= kMaxWorkBuffers) {
    WorkBuffer& oldest = st.work.front();
    WEFT_CUDA_TRY(api, api.eventSynchronize(oldest.done), "cudaEventSynchronize");
    WEFT_CUDA_TRY(api, api.free(oldest.dev), "cudaFree");
    WEFT_CUDA_TRY(api, api.eventDestroy(oldest.done), "cudaEventDestroy");
    st.work.erase(st.work.begin());
  }
  if (pick == nullptr) {
    WorkBuffer w;
    w.bytes = std::max<size_t>(roundUp(bytes, kAlign), 64 << 10);
    WEFT_CUDA_TRY(api, api.malloc(&w.dev, w.bytes), "cudaMalloc (a launch's work)");
    WEFT_CUDA_TRY(api, api.eventCreateWithFlags(&w.done, kCudaEventDisableTiming), "cudaEventCreateWithFlags");
    st.work.push_back(w);
    pick = &st.work.back();
  }
  return pick;
}

// Enqueues one launch: `channels` (connections filled in) and each lane's steps (steps[i] for
// lane where[i] = (channel, lane)) are copied to a work buffer on `stream`, then the kernel runs
// `w` over them, after the communicator's previous launch (whatever its stream).
Status launchWork(DeviceState& st, std::vector<DevChannel>& channels, const std::vector<std::pair<size_t, size_t>>& where,
                  const std::vector<std::vector<DevStep>>& steps, DevWork w, void* stream) {
  const CudaApi& api = *st.api;
  const size_t chanBytes = roundUp(channels.size() * sizeof(DevChannel), 64);
  size_t total = chanBytes;
  for (const auto& s : steps) total += s.size() * sizeof(DevStep);
  WEFT_ASSIGN_OR_RETURN(WorkBuffer * wb, workBuffer(st, total));
  char* dev = static_cast<char*>(wb->dev);
  std::vector<char> image(total);
  size_t at = chanBytes;
  for (size_t i = 0; i < steps.size(); ++i) {
    DevLane& lane = channels[where[i].first].lanes[where[i].second];
    lane.steps = reinterpret_cast<const DevStep*>(dev + at);
    lane.nSteps = static_cast<uint32_t>(steps[i].size());
    std::memcpy(image.data() + at, steps[i].data(), steps[i].size() * sizeof(DevStep));
    at += steps[i].size() * sizeof(DevStep);
  }
  std::memcpy(image.data(), channels.data(), channels.size() * sizeof(DevChannel));
  w.channels = reinterpret_cast<DevChannel*>(dev);
  w.abortFlag = st.abortDev;
  if (st.lastRecorded) WEFT_CUDA_TRY(api, api.streamWaitEvent(stream, st.last, 0), "cudaStreamWaitEvent");
  WEFT_CUDA_TRY(api, api.memcpyAsync(dev, image.data(), total, kCudaMemcpyHostToDevice, stream),
                "cudaMemcpyAsync (a launch's work)");
  WEFT_CUDA_TRY(api, api.launchColl(&w, static_cast<unsigned>(channels.size()), kThreads, stream),
                "launching the collective kernel");
  WEFT_CUDA_TRY(api, api.eventRecord(wb->done, stream), "cudaEventRecord");
  wb->used = true;
  WEFT_CUDA_TRY(api, api.eventRecord(st.last, stream), "cudaEventRecord");
  st.lastRecorded = true;
  return Status::ok();
}

// What a lane's steps move on each of its send (or receive) connections, slot by slot: the
// proxy's list for a connection to another host (the kernel's loop, runLane / runLaneLL).
std::vector<ProxySlot> proxySlots(const std::vector<DevStep>& steps, bool send, DevProto proto, size_t perSlot, size_t elt) {
  std::vector<ProxySlot> out;
  for (const DevStep& s : steps) {
    if (!(send ? primSends(s.prim) : primReceives(s.prim))) continue;
    for (uint64_t done = 0; done < s.count; done += perSlot) {
      const size_t bytes = static_cast<size_t>(std::min<uint64_t>(perSlot, s.count - done)) * elt;
      // LL: 8 data bytes per 16-byte line.
      out.push_back({static_cast<uint8_t>(proto), static_cast<uint32_t>(proto == kDevLL ? (bytes + 7) / 8 * 16 : bytes)});
    }
  }
  return out;
}

}  // namespace

Result<bool> usesDevice(const char* what, const void* send, const void* recv, size_t count, const void* stream) {
  std::string why;
  const CudaApi* api = cudaApi(stream != nullptr, stream != nullptr ? &why : nullptr);  // lock-free for host calls
  if (api == nullptr) {
    if (stream == nullptr) return false;
    return invalidArgument(strprintf("%s: a stream was given, but there is no GPU to run on: %s (host buffers take a "
                                     "NULL stream)",
                                     what, why.c_str()));
  }
  auto onDevice = [&](const void* p) {
    CudaPointerAttributes attr{};
    if (p == nullptr || api->pointerGetAttributes(&attr, p) != kCudaSuccess) return false;
    return attr.type == kCudaMemoryTypeDevice || attr.type == kCudaMemoryTypeManaged;
  };
  if (count == 0) return stream != nullptr;
  const bool s = onDevice(send), r = onDevice(recv);
  if (s != r)
    return invalidArgument(strprintf("%s: sendbuff %p is %s memory and recvbuff %p is %s memory: both must be GPU "
                                     "memory (with a stream) or both host memory (with a NULL stream)",
                                     what, send, s ? "GPU" : "host", recv, r ? "GPU" : "host"));
  if (!s && stream != nullptr)
    return invalidArgument(strprintf("%s: host buffers with a stream: weft moves host memory synchronously, with a NULL "
                                     "stream; a stream is for GPU buffers",
                                     what));
  return s;
}

Status enqueueCollective(Comm& comm, coll::CollArgs a, void* stream) {
  std::string why;
  const CudaApi* api = cudaApi(true, &why);
  if (api == nullptr) return internalError("GPU collective without CUDA: " + why);
  if (comm.stop.load()) return comm.stoppedStatus("enqueuing a GPU collective");
  if (a.seq != 0) {
    if (Status s = comm.enqueueingOnDevice(a.seq, config::funcName(coll::funcOf(a.coll))); !s.isOk()) {
      comm.failLocally(s);  // the other ranks find the same departure themselves
      return comm.stoppedStatus("enqueuing a GPU collective");
    }
  }
  WEFT_ASSIGN_OR_RETURN(DeviceState * st, connect(comm, *api));
  a.doubling = false;  // recursive doubling is a CPU algorithm: rings on the GPU
  if (!comm.tuning) {
    const config::Func f = coll::funcOf(a.coll);
    const bool ll = st->protocols.allows(f, static_cast<int>(config::Proto::kLL));
    const bool simple = st->protocols.allows(f, static_cast<int>(config::Proto::kSimple));
    const size_t bytes = a.count * coll::typeSize(a.type) * (coll::countIsPerRank(a.coll) ? static_cast<size_t>(comm.nranks) : 1);
    a.proto = ll && (!simple || bytes <= kLLMaxBytes) ? config::Proto::kLL : config::Proto::kSimple;
  }
  DevProto proto = a.proto == config::Proto::kLL ? kDevLL : kDevSimple;
  if (a.proto == config::Proto::kLL128 && !st->saidLL128) {
    st->saidLL128 = true;
    WEFT_INFO(log::kColl, "LL128 is not implemented by weft's kernels: the Simple protocol runs where NCCL's model picks LL128");
  }
  const uint32_t stepBytes = static_cast<uint32_t>(proto == kDevLL ? st->llBytes : st->simpleBytes);
  const size_t elt = coll::typeSize(a.type);
  const size_t perSlot = slotElems(proto, stepBytes, elt);
  size_t nParts = 0;
  std::vector<coll::PlannedLane> lanes;
  if (comm.nranks > 1) lanes = coll::planLanes(comm, a, perSlot * elt, proto == kDevLL, &nParts);
  coll::logTuning(comm, a, nParts);

  // The launch's work in one buffer: the channels, then every lane's steps.
  std::vector<std::vector<DevStep>> steps;
  std::vector<DevChannel> channels;
  if (comm.nranks == 1) {
    // One rank: the reduction's pre- and post-operations applied in one copy (no connection).
    DevStep s{};
    s.prim = kDevRecvReduceCopy;
    s.count = a.count;
    steps.push_back({s});
    channels.resize(1);
    channels[0].nLanes = 1;
  } else {
    channels.resize(nParts);
    for (coll::PlannedLane& pl : lanes) {
      std::vector<DevStep> ds;
      if (!devSteps(pl.lane.steps, &ds)) return internalError("a schedule with per-peer steps has no kernel form");
      DevChannel& ch = channels[static_cast<size_t>(pl.channel)];
      if (ch.nLanes >= kMaxLanes || pl.lane.recvFrom.size() > kMaxFan || pl.lane.sendTo.size() > kMaxFan)
        return internalError(strprintf("channel %d: more lanes or peers than the kernel takes", pl.channel));
      ++ch.nLanes;
      steps.push_back(std::move(ds));
    }
  }
  std::vector<std::pair<size_t, size_t>> where;  // (channel, lane) of each steps list
  std::vector<unsigned> laneOf(channels.size(), 0);
  for (size_t i = 0; i < steps.size(); ++i) {
    const size_t chIndex = comm.nranks == 1 ? 0 : static_cast<size_t>(lanes[i].channel);
    const size_t laneIndex = comm.nranks == 1 ? 0 : laneOf[chIndex]++;
    where.emplace_back(chIndex, laneIndex);
    if (comm.nranks == 1) continue;
    DevLane& lane = channels[chIndex].lanes[laneIndex];
    const int c = lanes[i].channel;
    const Layout& mine = st->layouts[static_cast<size_t>(comm.rank)];
    const coll::Lane& spec = lanes[i].lane;
    uint64_t recvSlots = 0, sendSlots = 0;
    for (const DevStep& s : steps[i]) {
      if (primReceives(s.prim)) recvSlots += slotsOf(s.count, perSlot);
      if (primSends(s.prim)) sendSlots += slotsOf(s.count, perSlot);
    }
    // A connection to another host: the kernel's end in host memory, the proxy told every slot.
    auto overNet = [&](int p, bool send, DevConn& conn) {
      if (comm.sameHost(p)) return false;
      const NetEnd& e = st->net.at({c, p, send});
      uint64_t& n = (send ? st->sendSteps : st->recvSteps)[{c, p}];
      conn = e.conn(n);
      n += send ? sendSlots : recvSlots;
      st->proxy->post(e.id, proxySlots(steps[i], send, proto, perSlot, elt));
      return true;
    };
    lane.nRecv = static_cast<uint8_t>(spec.recvFrom.size());
    for (size_t k = 0; k < spec.recvFrom.size(); ++k) {
      const int p = spec.recvFrom[k];
      if (overNet(p, false, lane.recv[k])) continue;
      const Layout& theirs = st->layouts[static_cast<size_t>(p)];
      DevConn& conn = lane.recv[k];
      conn.buff = st->arena + mine.buff(c, p);
      conn.buffLL = st->arena + mine.buffLL(c, p);
      conn.tail = reinterpret_cast<uint64_t*>(st->arena + mine.tail(c, p));
      conn.head = reinterpret_cast<uint64_t*>(st->peerArena[static_cast<size_t>(p)] + theirs.head(c, comm.rank));
      uint64_t& n = st->recvSteps[{c, p}];
      conn.step = n;
      n += recvSlots;
    }
    lane.nSend = static_cast<uint8_t>(spec.sendTo.size());
    for (size_t k = 0; k < spec.sendTo.size(); ++k) {
      const int p = spec.sendTo[k];
      if (overNet(p, true, lane.send[k])) continue;
      const Layout& theirs = st->layouts[static_cast<size_t>(p)];
      char* peer = st->peerArena[static_cast<size_t>(p)];
      DevConn& conn = lane.send[k];
      conn.buff = peer + theirs.buff(c, comm.rank);
      conn.buffLL = peer + theirs.buffLL(c, comm.rank);
      conn.tail = reinterpret_cast<uint64_t*>(peer + theirs.tail(c, comm.rank));
      conn.head = reinterpret_cast<uint64_t*>(st->arena + mine.head(c, p));
      uint64_t& n = st->sendSteps[{c, p}];
      conn.step = n;
      n += sendSlots;
    }
  }
  DevWork w{};
  w.sendbuff = a.send;
  w.recvbuff = a.recv;
  w.redArg = a.op.arg;
  w.stepBytes = stepBytes;
  w.type = static_cast<uint8_t>(a.type);
  w.red = devRed(a.op);
  w.proto = proto;
  return launchWork(*st, channels, where, steps, w, stream);
}

namespace {

constexpr uint32_t kTagDeviceP2p = 1u << 28;  // bootstrap tag of the p2p FIFO exchange
constexpr size_t kMaxP2pLanes = 128;          // CTAs of one launch (every one must be resident)

struct P2pInfo {
  CudaIpcHandle handle;
  uint64_t base;
  uint64_t bytes;
  int32_t pid;
  int32_t pad;
  char shmName[64];  // SHM: the block's /dev/shm segment; "": CUDA IPC
};

// Connects every (communicator, peer) pair of `ops` not connected yet: all blocks made and sent
// first, then all received, so one thread can connect several ranks of one communicator.
Status connectP2p(const CudaApi& api, const std::vector<P2pOp>& ops) {
  struct Pair {
    const P2pOp* op;
    DeviceState* st;
  };
  std::vector<Pair> fresh;
  for (const P2pOp& op : ops) {
    DeviceState* st = static_cast<DeviceState*>(op.comm->deviceState.get());
    if (st->p2p.count(op.peer) != 0) continue;
    if (std::any_of(fresh.begin(), fresh.end(), [&](const Pair& p) { return p.st == st && p.op->peer == op.peer; }))
      continue;
    fresh.push_back({&op, st});
  }
  // Peers on other hosts: a net plugin connection each way, driven by the proxy.
  std::vector<runtime::ConnectRequest> remote;
  for (Pair& p : fresh) {
    Comm& comm = *p.op->comm;
    if (comm.sameHost(p.op->peer)) continue;
    remote.push_back({&comm, kNetConnIndexP2p, 0, p.op->peer, false});
    remote.push_back({&comm, kNetConnIndexP2p, 0, p.op->peer, true});
  }
  for (Pair& p : fresh) {
    if (!p.op->comm->sameHost(p.op->peer)) continue;
    WEFT_CUDA_TRY(api, api.setDevice(p.op->cudaDevice), "cudaSetDevice");
    DeviceState::P2pPeer c;
    Comm& comm = *p.op->comm;
    P2pInfo info{};
    if (p.st->shmOnly && p.op->peer != comm.rank) {
      WEFT_ASSIGN_OR_RETURN(c.mine, hostShared(*p.st, runtime::ShmSegment::create(p.st->p2pBlock(), "GPU FIFO"),
                                               "a point-to-point FIFO"));
      c.mineShm = true;
      std::snprintf(info.shmName, sizeof(info.shmName), "%s", p.st->shm.back().name().c_str());
      p.st->p2p[p.op->peer] = c;
    } else {
      void* block = nullptr;
      WEFT_CUDA_TRY(api, api.malloc(&block, p.st->p2pBlock()), "cudaMalloc (a point-to-point FIFO)");
      c.mine = static_cast<char*>(block);
      p.st->p2p[p.op->peer] = c;
      WEFT_CUDA_TRY(api, api.memset(block, 0, p.st->p2pBlock()), "cudaMemset (a point-to-point FIFO)");
      WEFT_CUDA_TRY(api, api.deviceSynchronize(), "cudaDeviceSynchronize");
      if (p.op->peer == comm.rank) {
        p.st->p2p[p.op->peer].theirs = c.mine;
        continue;
      }
      WEFT_CUDA_TRY(api, api.ipcGetMemHandle(&info.handle, block), "cudaIpcGetMemHandle (a point-to-point FIFO)");
    }
    info.base = reinterpret_cast<uint64_t>(c.mine);
    info.bytes = p.st->p2pBlock();
    info.pid = static_cast<int32_t>(getpid());
    WEFT_TRY(comm.bootstrap->send(p.op->peer, kTagDeviceP2p, &info, sizeof(info),
                                  comm.opDeadline(strprintf("sending rank %d this rank's GPU FIFO", p.op->peer))));
  }
  if (!remote.empty()) {
    WEFT_TRY(runtime::connectAll(remote));
    for (Pair& p : fresh) {
      Comm& comm = *p.op->comm;
      if (comm.sameHost(p.op->peer)) continue;
      WEFT_CUDA_TRY(api, api.setDevice(p.op->cudaDevice), "cudaSetDevice");
      DeviceState::P2pPeer c;
      c.remote = true;
      WEFT_ASSIGN_OR_RETURN(c.netSend, netEnd(*p.st, comm, kNetConnIndexP2p, 0, p.op->peer, true, 0));
      WEFT_ASSIGN_OR_RETURN(c.netRecv, netEnd(*p.st, comm, kNetConnIndexP2p, 0, p.op->peer, false, 0));
      p.st->p2p[p.op->peer] = c;
      WEFT_INFO(log::kP2p, "Channel 00/1 : %d[%d] -> %d[%d] via NET/%s through the proxy thread", comm.rank, p.st->dev,
                p.op->peer, comm.peers[static_cast<size_t>(p.op->peer)].dev, comm.net ? comm.net->api().name() : "?");
    }
  }
  for (Pair& p : fresh) {
    Comm& comm = *p.op->comm;
    if (p.op->peer == comm.rank || !comm.sameHost(p.op->peer)) continue;
    std::vector<char> bytes;
    WEFT_TRY(comm.bootstrap->recv(p.op->peer, kTagDeviceP2p, bytes,
                                  comm.opDeadline(strprintf("waiting for rank %d's GPU FIFO", p.op->peer))));
    P2pInfo info{};
    if (bytes.size() != sizeof(info))
      return internalError(strprintf("rank %d's GPU FIFO message is %zu bytes, not %zu", p.op->peer, bytes.size(), sizeof(info)));
    std::memcpy(&info, bytes.data(), sizeof(info));
    if (info.bytes != p.st->p2pBlock())
      return invalidUsage(strprintf("rank %d's point-to-point FIFO is %llu bytes, this rank's %zu (NCCL_BUFFSIZE must be "
                                    "the same on every rank)",
                                    p.op->peer, static_cast<unsigned long long>(info.bytes), p.st->p2pBlock()));
    DeviceState::P2pPeer& c = p.st->p2p[p.op->peer];
    const bool shm = info.shmName[0] != '\0';
    if (info.pid == static_cast<int32_t>(getpid())) {
      c.theirs = reinterpret_cast<char*>(info.base);
    } else if (shm) {
      std::string name(info.shmName, strnlen(info.shmName, sizeof(info.shmName)));
      WEFT_ASSIGN_OR_RETURN(c.theirs, hostShared(*p.st, runtime::ShmSegment::open(name, info.bytes, p.op->peer),
                                                 "a peer's point-to-point FIFO"));
      (void)shm_unlink(name.c_str());  // mapped by its only other user: the name can go
    } else {
      WEFT_CUDA_TRY(api, api.setDevice(p.op->cudaDevice), "cudaSetDevice");
      void* opened = nullptr;
      WEFT_CUDA_TRY(api, api.ipcOpenMemHandle(&opened, info.handle, kCudaIpcMemLazyEnablePeerAccess),
                    strprintf("cudaIpcOpenMemHandle (rank %d's point-to-point FIFO, pid %d)", p.op->peer, info.pid).c_str());
      c.theirs = static_cast<char*>(opened);
      c.imported = true;
    }
    WEFT_INFO(log::kP2p, "Channel 00/1 : %d[%d] -> %d[%d] via %s (%s)", comm.rank, p.st->dev, p.op->peer, p.st->dev,
              shm ? "SHM/direct/direct" : "P2P/IPC", api.provider.c_str());
  }
  return Status::ok();
}

// One launch: the operations of one communicator on one stream.
Status launchP2p(const CudaApi& api, DeviceState& st, const std::vector<const P2pOp*>& ops) {
  // A lane per (peer, direction), its operations in call order; offsets from the lowest buffer.
  std::vector<std::pair<int, bool>> keys;
  std::vector<std::vector<DevStep>> steps;
  uintptr_t base = UINTPTR_MAX;
  for (const P2pOp* op : ops) base = std::min(base, reinterpret_cast<uintptr_t>(op->buf));
  for (const P2pOp* op : ops) {
    auto key = std::make_pair(op->peer, op->send);
    size_t i = static_cast<size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin());
    if (i == keys.size()) {
      keys.push_back(key);
      steps.emplace_back();
    }
    DevStep d{};
    d.prim = op->send ? kDevSend : kDevRecv;
    d.count = op->bytes;
    (op->send ? d.in : d.out) = reinterpret_cast<uintptr_t>(op->buf) - base;
    steps[i].push_back(d);
  }
  if (keys.size() > kMaxP2pLanes)
    return invalidUsage(strprintf("a group of GPU sends and receives with %zu peers and directions on one communicator and "
                                  "stream: weft's kernel takes at most %zu in one launch",
                                  keys.size(), kMaxP2pLanes));
  std::vector<DevChannel> channels(keys.size());
  std::vector<std::pair<size_t, size_t>> where;
  const size_t fifo = st.p2pFifo();
  for (size_t i = 0; i < keys.size(); ++i) {
    where.emplace_back(i, 0);
    DevChannel& ch = channels[i];
    ch.nLanes = 1;
    DevLane& lane = ch.lanes[0];
    DeviceState::P2pPeer& c = st.p2p.at(keys[i].first);
    uint64_t slots = 0;
    for (const DevStep& d : steps[i]) slots += slotsOf(d.count, st.simpleBytes);
    if (c.remote) {
      const bool send = keys[i].second;
      const NetEnd& e = send ? c.netSend : c.netRecv;
      uint64_t& n = send ? c.sent : c.received;
      (send ? lane.nSend : lane.nRecv) = 1;
      (send ? lane.send[0] : lane.recv[0]) = e.conn(n);
      n += slots;
      st.proxy->post(e.id, proxySlots(steps[i], send, kDevSimple, st.simpleBytes, 1));
    } else if (keys[i].second) {
      lane.nSend = 1;
      DevConn& conn = lane.send[0];
      conn.buff = c.theirs;
      conn.tail = reinterpret_cast<uint64_t*>(c.theirs + fifo);
      conn.head = reinterpret_cast<uint64_t*>(c.mine + fifo + kCounterBytes);
      conn.step = c.sent;
      c.sent += slots;
    } else {
      lane.nRecv = 1;
      DevConn& conn = lane.recv[0];
      conn.buff = c.mine;
      conn.tail = reinterpret_cast<uint64_t*>(c.mine + fifo);
      conn.head = reinterpret_cast<uint64_t*>(c.theirs + fifo + kCounterBytes);
      conn.step = c.received;
      c.received += slots;
    }
  }
  DevWork w{};
  w.sendbuff = reinterpret_cast<const void*>(base);
  w.recvbuff = reinterpret_cast<void*>(base);
  w.stepBytes = static_cast<uint32_t>(st.simpleBytes);
  w.type = static_cast<uint8_t>(weftUint8);
  w.red = kDevSum;
  w.proto = kDevSimple;
  return launchWork(st, channels, where, steps, w, ops.front()->stream);
}

}  // namespace

Status enqueueP2p(const std::vector<P2pOp>& ops) {
  if (ops.empty()) return Status::ok();
  std::string why;
  const CudaApi* api = cudaApi(true, &why);
  if (api == nullptr) return internalError("GPU sends and receives without CUDA: " + why);
  int before = 0;
  WEFT_CUDA_TRY(*api, api->getDevice(&before), "cudaGetDevice");
  auto run = [&]() -> Status {
    for (const P2pOp& op : ops) {
      if (op.comm->stop.load()) return op.comm->stoppedStatus("enqueuing a GPU send or receive");
      WEFT_CUDA_TRY(*api, api->setDevice(op.cudaDevice), "cudaSetDevice");
      WEFT_TRY(stateOf(*op.comm, *api).status());
    }
    WEFT_TRY(connectP2p(*api, ops));
    // One launch per (communicator, stream), in the order each first appears.
    std::vector<std::vector<const P2pOp*>> launches;
    for (const P2pOp& op : ops) {
      auto it = std::find_if(launches.begin(), launches.end(), [&](const auto& l) {
        return l.front()->comm == op.comm && l.front()->stream == op.stream;
      });
      if (it == launches.end()) launches.push_back({&op});
      else it->push_back(&op);
    }
    for (const auto& l : launches) {
      WEFT_CUDA_TRY(*api, api->setDevice(l.front()->cudaDevice), "cudaSetDevice");
      WEFT_TRY(launchP2p(*api, *static_cast<DeviceState*>(l.front()->comm->deviceState.get()), l));
    }
    return Status::ok();
  };
  Status s = run();
  (void)api->setDevice(before);
  return s;
}

int currentDevice() {
  const CudaApi* api = cudaApi(false, nullptr);
  int dev = 0;
  if (api == nullptr || api->getDevice(&dev) != kCudaSuccess) return 0;
  return dev;
}

Status enqueueGroup(const std::vector<coll::CollTask>& tasks) {
  std::string why;
  const CudaApi* api = cudaApi(true, &why);
  if (api == nullptr) return internalError("GPU collectives without CUDA: " + why);
  int before = 0;
  WEFT_CUDA_TRY(*api, api->getDevice(&before), "cudaGetDevice");
  // Connect first, every communicator at once: each one's exchange waits for all its ranks.
  std::vector<const coll::CollTask*> fresh;
  for (const coll::CollTask& t : tasks)
    if ((!t.comm->deviceState || static_cast<DeviceState*>(t.comm->deviceState.get())->arena == nullptr) &&
        std::none_of(fresh.begin(), fresh.end(), [&](const coll::CollTask* f) { return f->comm == t.comm; }))
      fresh.push_back(&t);
  if (fresh.size() == 1) {
    WEFT_CUDA_TRY(*api, api->setDevice(fresh[0]->cudaDevice), "cudaSetDevice");
    Result<DeviceState*> r = connect(*fresh[0]->comm, *api);
    (void)api->setDevice(before);
    WEFT_TRY(r.status());
  } else if (fresh.size() > 1) {
    std::vector<Status> results(fresh.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < fresh.size(); ++i)
      threads.emplace_back([&, i] {
        int rc = api->setDevice(fresh[i]->cudaDevice);
        results[i] = rc != kCudaSuccess ? cudaError(*api, "cudaSetDevice", rc) : connect(*fresh[i]->comm, *api).status();
      });
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < fresh.size(); ++i) {
      if (!results[i].isOk()) {
        // The others would wait for this rank's part of the next exchange: stop them too.
        for (const coll::CollTask* f : fresh) f->comm->fail(results[i], f->comm->rank);
        return results[i];
      }
    }
  }
  Status s;
  for (const coll::CollTask& t : tasks) {
    int rc = api->setDevice(t.cudaDevice);
    s = rc != kCudaSuccess ? cudaError(*api, "cudaSetDevice", rc) : enqueueCollective(*t.comm, t.args, t.stream);
    if (!s.isOk()) break;
  }
  (void)api->setDevice(before);
  return s;
}

}  // namespace weft::device
