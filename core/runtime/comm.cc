#include "core/runtime/comm.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <thread>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/runtime/channels.h"
#include "core/runtime/net.h"
#include "core/runtime/status.h"
#include "core/runtime/waiter.h"
#include "core/topo/detect_host.h"

namespace weft::runtime {

namespace {

// What a receiving side tells its sender (one bootstrap message per connection).
struct ConnectInfo {
  int32_t type;  // 1: SHM, 2: NET
  int32_t netDev;
  char shmName[96];
  alignas(16) char handle[WEFT_NET_HANDLE_MAXSIZE];
};

uint32_t connectTag(int connIndex, int channel) {
  return kTagConnect | (static_cast<uint32_t>(connIndex) << 8) | static_cast<uint32_t>(channel);
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The NET device a connection of `channel` uses, as the topology names it: on emulated devices
// the file's NET device of the ring channel (NCCL's choice); on CPU endpoints one per local rank.
// The plugin device is that number folded onto the devices the plugin has here (pluginDev).
int netDevFor(const Comm& c, int connIndex, int channel, bool send) {
  const std::vector<int>& devs = send ? c.ringNetSend : c.ringNetRecv;
  if (connIndex == 0 && !devs.empty())
    return devs[static_cast<size_t>(c.channels.ringIndex(channel)) % devs.size()];
  return c.localRank;
}

int pluginDev(const Comm& c, int dev) { return dev % (c.net ? std::max(1, c.net->deviceCount()) : 1); }

struct PendingConnection {
  ConnectRequest req;
  std::unique_ptr<ShmRecv> shmRecv;
  std::unique_ptr<NetRecv> netRecv;
  std::unique_ptr<ShmSend> shmSend;
  std::unique_ptr<NetSend> netSend;
  bool done = false;
};

Status needNet(const Comm& c, int peer) {
  if (c.net) return Status::ok();
  return internalError(strprintf("rank %d needs the network to reach rank %d, but no net plugin was selected", c.rank, peer));
}

// Whether shared-memory receivers offer single-copy steps (ShmRecv::create). By default not when
// the host's ranks outnumber this process's CPUs: every sender then waits at the end of a call
// for its receiver to have read its buffer, where a slot lets it go on, and with ranks sharing
// CPUs that wait depends on the scheduler's placement. 4 ranks on 2 vCPUs, 1 MiB allgather, one
// job each: 202-405 us single-copy (often 320-400), 247-306 us through the slots; at 4 MiB
// single-copy was ahead (805-1060 against 1050-1215 us).
// WEFT_SHM_SINGLE_COPY=1 offers them anyway.
bool singleCopy(const Comm& c) {
  int64_t mode = c.settings.integer("WEFT_SHM_SINGLE_COPY");  // 0 off, 1 on, 2 auto
  return mode == 1 || (mode == 2 && c.localRanks <= usableCpus());
}

Status createRecvSide(PendingConnection& p, const Deadline& deadline) {
  Comm& c = *p.req.comm;
  int peer = p.req.peer;
  ConnectInfo info{};
  if (c.useShm(peer)) {
    WEFT_ASSIGN_OR_RETURN(p.shmRecv, ShmRecv::create(c.stepSize, c.bellOf(peer), peer, singleCopy(c)));
    info.type = 1;
    std::snprintf(info.shmName, sizeof(info.shmName), "%s", p.shmRecv->name().c_str());
  } else {
    WEFT_TRY(needNet(c, peer));
    int dev = netDevFor(c, p.req.connIndex, p.req.channel, false);
    WEFT_ASSIGN_OR_RETURN(p.netRecv, NetRecv::create(*c.net, pluginDev(c, dev), c.stepSize, peer));
    info.type = 2;
    info.netDev = pluginDev(c, dev);
    std::memcpy(info.handle, p.netRecv->handle().data(), sizeof(info.handle));
    WEFT_INFO(log::kInit | log::kNet, "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d", p.req.channel,
              p.req.connIndex, peer, c.peers[static_cast<size_t>(peer)].dev, c.rank, c.dev, c.net->api().name(), dev);
  }
  return c.bootstrap->send(peer, connectTag(p.req.connIndex, p.req.channel), &info, sizeof(info), deadline);
}

Status createSendSide(PendingConnection& p, const Deadline& deadline) {
  Comm& c = *p.req.comm;
  int peer = p.req.peer;
  std::vector<char> bytes;
  WEFT_TRY(c.bootstrap->recv(peer, connectTag(p.req.connIndex, p.req.channel), bytes, deadline));
  if (bytes.size() != sizeof(ConnectInfo))
    return internalError(strprintf("connect info from rank %d has %zu bytes", peer, bytes.size()));
  ConnectInfo info{};
  std::memcpy(&info, bytes.data(), sizeof(info));
  int peerDev = c.peers[static_cast<size_t>(peer)].dev;
  if (info.type == 1) {
    info.shmName[sizeof(info.shmName) - 1] = '\0';
    WEFT_ASSIGN_OR_RETURN(p.shmSend, ShmSend::open(info.shmName, c.stepSize, c.bellOf(peer), peer));
    WEFT_INFO(log::kInit | log::kShm, "Channel %02d/%d : %d[%d] -> %d[%d] via SHM/direct/direct", p.req.channel,
              p.req.connIndex, c.rank, c.dev, peer, peerDev);
  } else if (info.type == 2) {
    WEFT_TRY(needNet(c, peer));
    int dev = netDevFor(c, p.req.connIndex, p.req.channel, true);
    WEFT_ASSIGN_OR_RETURN(p.netSend, NetSend::create(*c.net, pluginDev(c, dev), info.handle, c.stepSize, peer));
    WEFT_INFO(log::kInit | log::kNet, "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d", p.req.channel,
              p.req.connIndex, c.rank, c.dev, peer, peerDev, c.net->api().name(), dev);
  } else {
    return internalError(strprintf("connect info from rank %d names transport %d", peer, info.type));
  }
  return Status::ok();
}

Result<bool> finish(PendingConnection& p) {
  if (p.shmRecv) return p.shmRecv->finishSetup();
  if (p.netRecv) return p.netRecv->finishSetup();
  if (p.netSend) return p.netSend->finishSetup();
  return true;  // a shared-memory sender is ready once mapped
}

Status checkStopped(const std::vector<PendingConnection>& pending) {
  for (const PendingConnection& p : pending)
    if (p.req.comm->stop.load()) return p.req.comm->stoppedStatus("connecting to rank " + std::to_string(p.req.peer));
  return Status::ok();
}

}  // namespace

Comm::~Comm() {
  unregisterForStatus(this);
  if (initThread.joinable()) initThread.join();
  closeComm(*this);
}

Bell* Comm::bellOf(int peer) const {
  const auto& b = peerBells[static_cast<size_t>(peer)];
  return b ? b->bell() : nullptr;
}

bool Comm::useShm(int peer) const {
  const PeerInfo& me = peers[static_cast<size_t>(rank)];
  const PeerInfo& p = peers[static_cast<size_t>(peer)];
  return !settings.flag("NCCL_SHM_DISABLE") && me.hostHash == p.hostHash && me.shmDev == p.shmDev &&
         peerBells[static_cast<size_t>(peer)].has_value();
}

void Comm::fail(const Status& why, int failedRank) {
  {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (!error.isOk()) return;
    error = why;
    state.store(static_cast<int>(why.code()));
  }
  WEFT_WARN("comm %p rank %d: %s", static_cast<void*>(this), rank, why.message().c_str());
  stopAll(failedRank, why.message());
}

Status Comm::rootCause(Status s) {
  // A transport's report names who failed (a flag in a shared-memory segment, a closed socket)
  // but not why; that rank's own report, with its reason, follows around the watch ring.
  if (s.code() != Code::kRemoteError || s.failedRank() == rank) return s;
  for (int i = 0; i < 40; ++i) {
    {
      std::lock_guard<std::mutex> lock(errorMutex);
      if (!error.isOk()) return error;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return s;
}

void Comm::failLocally(const Status& why) {
  {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (!error.isOk()) return;
    error = why;
    state.store(static_cast<int>(why.code()));
  }
  WEFT_WARN("comm %p rank %d: %s", static_cast<void*>(this), rank, why.message().c_str());
  stop.store(true);
  if (uint64_t* flag = deviceAbort.load()) std::atomic_ref<uint64_t>(*flag).store(1);
  if (myBell) {
    myBell->bell()->seq.fetch_add(1);
    ringBell(myBell->bell());
  }
}

void Comm::stopAll(int failedRank, const std::string& reason) {
  stop.store(true);
  if (uint64_t* flag = deviceAbort.load()) std::atomic_ref<uint64_t>(*flag).store(1);
  {
    std::lock_guard<std::mutex> lock(errorMutex);
    for (auto& [k, s] : sends) s->markFailed(failedRank);
    for (auto& [k, r] : recvs) r->markFailed(failedRank);
  }
  if (bootstrap) bootstrap->fail(failedRank, reason);
  if (myBell) {
    myBell->bell()->seq.fetch_add(1);
    ringBell(myBell->bell());
  }
}

namespace {

std::string ordinal(uint64_t n) {
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

Status leftBefore(int peer, uint64_t collectives, uint64_t seq, const char* name) {
  return invalidUsage(strprintf("rank %d finalized or destroyed its communicator after %llu collectives; this rank is "
                                "in its %s (%s): mismatched calls",
                                peer, static_cast<unsigned long long>(collectives), ordinal(seq).c_str(),
                                name != nullptr ? name : "a collective"));
}

}  // namespace

void Comm::noteGoodbye(int peer, uint64_t collectives) {
  {
    std::lock_guard<std::mutex> lock(departedMutex);
    departed[peer] = collectives;
    anyDeparted.store(true);
  }
  uint64_t seq = collRunning.load();
  if (seq > collectives) failLocally(leftBefore(peer, collectives, seq, collRunningName.load()));
  // A collective enqueued on GPU buffers past the peer's last waits in a kernel: stop it.
  uint64_t dseq = deviceSeq.load();
  if (dseq > collectives) failLocally(leftBefore(peer, collectives, dseq, deviceSeqName.load()));
}

Status Comm::enqueueingOnDevice(uint64_t seq, const char* name) {
  deviceSeqName.store(name);
  deviceSeq.store(seq);
  return departedBefore(seq, name);
}

Status Comm::departedBefore(uint64_t seq, const char* name) {
  // Every collective passes here: no lock while no peer has left (the common case).
  if (!anyDeparted.load()) return Status::ok();
  std::lock_guard<std::mutex> lock(departedMutex);
  for (const auto& [peer, collectives] : departed)
    if (collectives < seq) return leftBefore(peer, collectives, seq, name);
  return Status::ok();
}

Status Comm::startCollective(uint64_t seq, const char* name) {
  collRunningName.store(name);
  collRunning.store(seq);
  Status s = departedBefore(seq, name);
  if (!s.isOk()) collRunning.store(0);
  return s;
}

Status Comm::stoppedStatus(const std::string& what) {
  std::lock_guard<std::mutex> lock(errorMutex);
  if (!error.isOk()) return error;
  return Status(Code::kSystemError, strprintf("communicator aborted (weft_comm_abort) while %s", what.c_str()));
}

namespace {

Status connectPending(const std::vector<ConnectRequest>& requests, const Deadline* deadline,
                      std::vector<PendingConnection>& pending) {
  for (const ConnectRequest& r : requests) pending.push_back({r, nullptr, nullptr, nullptr, nullptr, false});
  auto deadlineOf = [deadline](const PendingConnection& p) {
    std::string what = strprintf("connecting rank %d to rank %d", p.req.comm->rank, p.req.peer);
    if (deadline == nullptr) return p.req.comm->opDeadline(what);
    Deadline d = *deadline;
    d.what = what;
    return d;
  };
  // Each connection's deadline, fixed now (WEFT_OP_TIMEOUT counts from the start of the connect).
  std::vector<Deadline> deadlines;
  for (const PendingConnection& p : pending) deadlines.push_back(deadlineOf(p));
  for (size_t i = 0; i < pending.size(); ++i)
    if (!pending[i].req.send) WEFT_TRY(createRecvSide(pending[i], deadlines[i]));
  for (size_t i = 0; i < pending.size(); ++i)
    if (pending[i].req.send) WEFT_TRY(createSendSide(pending[i], deadlines[i]));
  for (size_t left = pending.size(), spins = 0; left > 0; ++spins) {
    for (PendingConnection& p : pending) {
      if (p.done) continue;
      WEFT_ASSIGN_OR_RETURN(p.done, finish(p));
      if (p.done) --left;
    }
    if (left == 0) break;
    WEFT_TRY(checkStopped(pending));
    for (size_t i = 0; i < pending.size(); ++i)
      if (!pending[i].done) WEFT_TRY(deadlines[i].sliceMs().takeStatus());
    if (spins > 100) std::this_thread::sleep_for(std::chrono::microseconds(spins > 1000 ? 1000 : 50));
  }
  for (PendingConnection& p : pending) {
    Comm& c = *p.req.comm;
    Comm::Key k{p.req.connIndex, p.req.channel, p.req.peer};
    std::lock_guard<std::mutex> lock(c.errorMutex);
    if (p.shmRecv) c.recvs[k] = std::move(p.shmRecv);
    if (p.netRecv) c.recvs[k] = std::move(p.netRecv);
    if (p.shmSend) c.sends[k] = std::move(p.shmSend);
    if (p.netSend) c.sends[k] = std::move(p.netSend);
    ++c.connEpoch;
  }
  return Status::ok();
}

}  // namespace

Status connectAll(const std::vector<ConnectRequest>& requests, const Deadline* deadline,
                  const std::function<void(const Status&)>& beforeCleanup) {
  std::vector<PendingConnection> pending;
  Status s = connectPending(requests, deadline, pending);
  if (!s.isOk() && beforeCleanup) beforeCleanup(s);
  return s;  // `pending` (what was made of the connections) goes after
}

namespace {

Status exchangePeers(Comm& c, const SockAddr& local, const Deadline& dl) {
  PeerInfo me;
  // `weft status` is an aid, not part of the job: a service that cannot start is logged, and
  // this rank then shows as unreachable there.
  if (Result<SockAddr> status = statusServiceAddress(local); status.isOk()) me.statusAddr = *status;
  else WEFT_INFO(log::kInit, "weft status is off in this process: %s", status.status().message().c_str());
  me.rank = c.rank;
  me.pid = static_cast<int32_t>(getpid());
  me.emulated = c.mode == DeviceMode::kEmulated ? 1 : 0;
  // The device this rank was told to play (config.device, else WEFT_DEVICE), -1: its local rank,
  // which every rank works out for every other after this exchange (placeRanks).
  std::optional<int64_t> wanted = c.settings.integerIfSet("WEFT_DEVICE");
  me.dev = c.options.device >= 0 ? c.options.device : wanted ? static_cast<int32_t>(*wanted) : -1;
  std::string hostId = c.settings.string("NCCL_HOSTID");
  me.hostHash = topo::hostHash(c.settings.isSet("NCCL_HOSTID") ? &hostId : nullptr);
  struct stat st{};
  if (stat("/dev/shm", &st) == 0) me.shmDev = static_cast<uint64_t>(st.st_dev);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
    for (int cpu = 0; cpu < 1024 && cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &cpus)) me.cpuMask[cpu / 64] |= uint64_t{1} << (cpu % 64);
  } else {
    me.cpuMask[0] = 1;  // unknown: one CPU
  }
  if (c.mode == DeviceMode::kEmulated) me.topoHash = topo::ncclStringHash(c.settings.string("NCCL_TOPO_FILE"));
  WEFT_ASSIGN_OR_RETURN(BellSegment bell, BellSegment::create());
  std::snprintf(me.bellName, sizeof(me.bellName), "%s", bell.name().c_str());
  c.myBell = std::move(bell);
  c.peers.assign(static_cast<size_t>(c.nranks), PeerInfo{});
  c.peers[static_cast<size_t>(c.rank)] = me;
  WEFT_TRY(c.bootstrap->allgather(c.peers.data(), sizeof(PeerInfo), dl));
  for (const PeerInfo& p : c.peers) {
    if (p.emulated != me.emulated)
      return invalidUsage(strprintf("rank %d %s NCCL_TOPO_FILE but rank %d %s: set it on every rank or on none", c.rank,
                                    me.emulated ? "emulates GPUs from" : "runs without", p.rank,
                                    p.emulated ? "does" : "does not"));
  }
  return Status::ok();
}

void placeRanks(Comm& c) {
  std::vector<uint64_t> hosts;
  c.rankNode.assign(static_cast<size_t>(c.nranks), 0);
  for (int r = 0; r < c.nranks; ++r) {
    uint64_t h = c.peers[static_cast<size_t>(r)].hostHash;
    auto it = std::find(hosts.begin(), hosts.end(), h);
    if (it == hosts.end()) {
      hosts.push_back(h);
      it = hosts.end() - 1;
    }
    c.rankNode[static_cast<size_t>(r)] = static_cast<int>(it - hosts.begin());
  }
  c.nNodes = static_cast<int>(hosts.size());
  c.node = c.rankNode[static_cast<size_t>(c.rank)];
  std::vector<int> onNode(hosts.size(), 0);  // ranks seen so far on each node
  for (int r = 0; r < c.nranks; ++r) {
    PeerInfo& p = c.peers[static_cast<size_t>(r)];
    int local = onNode[static_cast<size_t>(c.rankNode[static_cast<size_t>(r)])]++;
    if (p.dev < 0) p.dev = local;
    if (r == c.rank) c.localRank = local;
  }
  c.localRanks = onNode[static_cast<size_t>(c.node)];
  c.dev = c.peers[static_cast<size_t>(c.rank)].dev;
  // Oversubscribed: some host's ranks outnumber the CPUs they may use together.
  std::vector<std::array<uint64_t, 16>> masks(hosts.size(), std::array<uint64_t, 16>{});
  for (int r = 0; r < c.nranks; ++r) {
    const PeerInfo& p = c.peers[static_cast<size_t>(r)];
    for (size_t w = 0; w < 16; ++w) masks[static_cast<size_t>(c.rankNode[static_cast<size_t>(r)])][w] |= p.cpuMask[w];
  }
  c.oversubscribed = false;
  for (size_t h = 0; h < hosts.size(); ++h) {
    int cpus = 0;
    for (uint64_t word : masks[h]) cpus += __builtin_popcountll(word);
    c.oversubscribed = c.oversubscribed || onNode[h] > std::max(cpus, 1);
  }
}

Status mapBells(Comm& c, const Deadline& dl) {
  c.peerBells.clear();
  c.peerBells.resize(static_cast<size_t>(c.nranks));
  const PeerInfo& me = c.peers[static_cast<size_t>(c.rank)];
  for (int r = 0; r < c.nranks; ++r) {
    const PeerInfo& p = c.peers[static_cast<size_t>(r)];
    if (p.hostHash != me.hostHash || p.shmDev != me.shmDev) continue;
    if (r == c.rank) continue;
    auto bell = BellSegment::open(std::string(p.bellName, strnlen(p.bellName, sizeof(p.bellName))));
    if (bell.isOk()) c.peerBells[static_cast<size_t>(r)] = std::move(bell).value();
    else WEFT_INFO(log::kInit | log::kShm, "rank %d cannot map rank %d's bell (%s): shared memory off between them",
                   c.rank, r, bell.status().message().c_str());
  }
  // Once every local peer mapped it, this rank's bell leaves /dev/shm.
  WEFT_TRY(c.bootstrap->barrier(dl));
  c.myBell->unlink();
  return Status::ok();
}

Status selectNetIfNeeded(Comm& c) {
  bool needed = false;
  for (int r = 0; r < c.nranks && !needed; ++r)
    if (r != c.rank && !c.useShm(r)) needed = true;
  if (!needed) return Status::ok();
  config::Settings s = c.settings;
  if (!c.options.netName.empty()) WEFT_TRY(s.set("NCCL_NET", c.options.netName));
  WEFT_ASSIGN_OR_RETURN(c.net, plugin::selectNet(s, plugin::NetLoaderOptions{}, c.commHash));
  WEFT_INFO(log::kInit | log::kNet, "Using network %s", c.net->api().name());
  if (c.mode == DeviceMode::kEmulated)
    WEFT_INFO(log::kInit | log::kNet, "NET device k of NCCL_TOPO_FILE is %s device k mod %d (the devices %s has here)",
              c.net->api().name(), c.net->deviceCount(), c.net->api().name());
  return Status::ok();
}

Status connectRings(Comm& c, const Deadline& dl) {
  std::vector<ConnectRequest> reqs;
  for (int ch = 0; ch < c.channels.nChannels; ++ch) {
    int next = c.channels.ringNextOf(ch, c.rank);
    int prev = c.channels.ringPrevOf(ch, c.rank);
    if (next == c.rank) continue;  // one rank: nothing to connect
    reqs.push_back({&c, 0, ch, prev, false});
    reqs.push_back({&c, 0, ch, next, true});
  }
  // A local failure (no room in /dev/shm) is this rank's error before its segments go away and
  // the peers that looked for them report it as failed.
  WEFT_TRY(connectAll(reqs, &dl, [&c](const Status& s) {
    if (s.code() != Code::kRemoteError) c.fail(s, c.rank);
  }));
  WEFT_INFO(log::kInit, "Connected all rings");
  return Status::ok();
}

}  // namespace

Status initComm(Comm& c, const BootstrapHandle& handle, int nranks, int rank) {
  auto t0 = std::chrono::steady_clock::now();
  log::ScopedDevice logAsRank(rank);  // the device is known after the peers' exchange
  c.rank = rank;
  c.nranks = nranks;
  c.jobMagic = handle.magic;
  c.mode = c.settings.isSet("NCCL_TOPO_FILE") ? DeviceMode::kEmulated : DeviceMode::kCpu;
  c.stepSize = static_cast<size_t>(c.settings.integer("NCCL_BUFFSIZE")) / kSteps;
  c.algorithms = c.settings.algorithms();
  c.opTimeout = std::chrono::seconds(c.settings.integer("WEFT_OP_TIMEOUT"));
  c.commHash = topo::ncclStringHash(std::string_view(reinterpret_cast<const char*>(&handle), sizeof(handle)));
  WEFT_INFO(log::kInit, "ncclCommInitRank comm %p rank %d nranks %d - Init START", static_cast<void*>(&c), rank, nranks);
  auto timeout = std::chrono::seconds(c.settings.integer("WEFT_INIT_TIMEOUT"));
  Deadline dl = Deadline::in(timeout, &c.stop, strprintf("initializing rank %d of %d", rank, nranks));

  std::optional<SockAddr> commId;
  if (c.settings.isSet("NCCL_COMM_ID")) {
    WEFT_ASSIGN_OR_RETURN(SockAddr a, parseHostPort(c.settings.string("NCCL_COMM_ID")));
    commId = a;
  }
  WEFT_ASSIGN_OR_RETURN(SockAddr local, bootstrapAddress(c.settings, commId ? &*commId : nullptr));
  if (commId && rank == 0 && handle.magic == kNcclCommIdMagic) {
    WEFT_TRY_CTX(startRoot(*commId, handle.magic, timeout).takeStatus(), "starting the bootstrap root at NCCL_COMM_ID");
    c.rootMagic = handle.magic;
  }
  WEFT_ASSIGN_OR_RETURN(c.bootstrap, Bootstrap::init(handle, local, rank, nranks, dl));
  // Every rank has checked in: a root in this process has done its work.
  joinRoot(handle.magic);
  Bootstrap::WatchEvents events;
  events.onFailure = [&c](int failed, const std::string& text) { c.fail(remoteError(text), failed); };
  events.onGoodbye = [&c](int gone, uint64_t collectives) { c.noteGoodbye(gone, collectives); };
  c.bootstrap->startWatch(std::move(events), std::chrono::seconds(c.settings.integer("WEFT_PEER_TIMEOUT")));
  double tBootstrap = secondsSince(t0);

  WEFT_TRY(exchangePeers(c, local, dl));
  placeRanks(c);
  registerForStatus(&c);
  log::ScopedDevice logAsDevice(c.dev);
  WEFT_INFO(log::kInit, "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0", static_cast<void*>(&c),
            rank, nranks, c.nNodes, c.localRanks, c.localRank);
  WEFT_TRY(mapBells(c, dl));
  double tAllgather = secondsSince(t0) - tBootstrap;

  WEFT_TRY(selectNetIfNeeded(c));
  auto tTopo = std::chrono::steady_clock::now();
  WEFT_TRY(buildChannels(c));
  double topoSeconds = secondsSince(tTopo);
  auto tConn = std::chrono::steady_clock::now();
  WEFT_TRY(connectRings(c, dl));
  double connSeconds = secondsSince(tConn);
  double total = secondsSince(t0);
  WEFT_INFO(log::kInit, "ncclCommInitRank comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId 0 commId 0x%llx - Init COMPLETE",
            static_cast<void*>(&c), rank, nranks, c.dev, c.dev, static_cast<unsigned long long>(c.commHash));
  WEFT_INFO(log::kInit, "Init timings - ncclCommInitRank: rank %d nranks %d total %.2f (kernels 0.00, alloc 0.00, "
            "bootstrap %.2f, allgathers %.2f, topo %.2f, graphs 0.00, connections %.2f, rest %.2f)",
            rank, nranks, total, tBootstrap, tAllgather, topoSeconds, connSeconds,
            std::max(0.0, total - tBootstrap - tAllgather - topoSeconds - connSeconds));
  return Status::ok();
}

void closeComm(Comm& c) {
  // The device path first: it waits for the kernels in flight, whose connections to other hosts
  // its proxy thread drives over the net plugin (going below).
  c.deviceState.reset();
  c.closed.store(true);
  if (c.bootstrap) {
    if (!c.stop.load()) c.bootstrap->goodbye(c.opCount.load());
    c.bootstrap->stopWatch();
  }
  std::lock_guard<std::mutex> lock(c.errorMutex);
  c.sends.clear();
  c.recvs.clear();
  ++c.connEpoch;
  c.net.reset();
  c.peerBells.clear();
}

Result<std::optional<SplitPlan>> planSplit(Comm& parent, int color, int key) {
  struct ColorKey {
    int32_t color, key;
  };
  std::vector<ColorKey> all(static_cast<size_t>(parent.nranks));
  all[static_cast<size_t>(parent.rank)] = {color, key};
  Deadline dl = parent.opDeadline("splitting the communicator");
  WEFT_TRY(parent.bootstrap->allgather(all.data(), sizeof(ColorKey), dl));
  if (color < 0) return std::optional<SplitPlan>();
  std::vector<int> members;
  for (int r = 0; r < parent.nranks; ++r)
    if (all[static_cast<size_t>(r)].color == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return all[static_cast<size_t>(a)].key < all[static_cast<size_t>(b)].key;
  });
  SplitPlan plan;
  plan.nranks = static_cast<int>(members.size());
  plan.rank = static_cast<int>(std::find(members.begin(), members.end(), parent.rank) - members.begin());
  auto timeout = std::chrono::seconds(parent.settings.integer("WEFT_INIT_TIMEOUT"));
  if (plan.rank == 0) {
    WEFT_ASSIGN_OR_RETURN(SockAddr local, bootstrapAddress(parent.settings, nullptr));
    WEFT_ASSIGN_OR_RETURN(plan.handle, startRoot(local, randomMagic(), timeout));
    plan.rootMagic = plan.handle.magic;
    for (size_t i = 1; i < members.size(); ++i)
      WEFT_TRY(parent.bootstrap->send(members[i], kTagSplit, &plan.handle, sizeof(plan.handle), dl));
  } else {
    std::vector<char> bytes;
    WEFT_TRY(parent.bootstrap->recv(members[0], kTagSplit, bytes, dl));
    if (bytes.size() != sizeof(plan.handle))
      return internalError("split: bad bootstrap handle from rank " + std::to_string(members[0]));
    std::memcpy(&plan.handle, bytes.data(), sizeof(plan.handle));
  }
  return std::optional<SplitPlan>(plan);
}

}  // namespace weft::runtime
