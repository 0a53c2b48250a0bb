#include "core/runtime/bootstrap.h"

#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/runtime/interfaces.h"

namespace weft::runtime {

namespace {

// What a rank tells the root, and what the root answers (one connection each way).
struct RootRecord {
  int32_t rank;
  int32_t nranks;
  SockAddr reply;  // where this rank waits for the root's answer
  SockAddr ring;   // where its ring predecessor connects
};
struct RootReply {
  int32_t status;  // a weft Code; 0: `next` is valid
  SockAddr next;
  char message[472];
};

// Every rank's ring connection starts with this after the handshake.
struct RingHello {
  int32_t rank;
  int32_t kind;  // 0: data ring, 1: watch ring
};

struct P2pHeader {
  int32_t rank;
  uint32_t tag;
  uint64_t size;
};

// "3, 5-7" for the sorted ranks.
std::string rankRanges(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? std::to_string(ranks[i]) : strprintf("%d-%d", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

class RootRegistry;
RootRegistry& roots();

class RootRegistry {
 public:
  struct Entry {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> stop;
  };
  RootRegistry() {
    // A forked child has none of the parent's threads: it must neither join nor detach their
    // handles. They are parked where nothing destroys them.
    pthread_atfork(nullptr, nullptr, [] {
      static std::map<uint64_t, Entry>* parked = nullptr;
      RootRegistry& r = roots();
      new (&r.mutex_) std::mutex();
      if (parked == nullptr) parked = new std::map<uint64_t, Entry>();
      for (auto& [magic, e] : r.entries_) parked->emplace(magic ^ reinterpret_cast<uintptr_t>(&e), std::move(e));
      r.entries_.clear();
    });
  }
  ~RootRegistry() {
    std::map<uint64_t, Entry> all;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      all.swap(entries_);
    }
    for (auto& [magic, e] : all) {
      e.stop->store(true);
      if (e.thread.joinable()) e.thread.join();
    }
  }
  void add(uint64_t magic, Entry e) {
    std::optional<Entry> old;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(magic);
      if (it != entries_.end()) {
        old = std::move(it->second);
        entries_.erase(it);
      }
      entries_.emplace(magic, std::move(e));
    }
    if (old && old->thread.joinable()) {
      old->stop->store(true);
      old->thread.join();
    }
  }
  void stop(uint64_t magic) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(magic);
    if (it != entries_.end()) it->second.stop->store(true);
  }
  void join(uint64_t magic) {
    std::optional<Entry> e;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(magic);
      if (it == entries_.end()) return;
      e = std::move(it->second);
      entries_.erase(it);
    }
    if (e->thread.joinable()) e->thread.join();
  }

 private:
  std::mutex mutex_;
  std::map<uint64_t, Entry> entries_;
};


RootRegistry& roots() {
  static RootRegistry r;
  return r;
}

void replyAll(const std::vector<RootRecord>& arrived, const std::vector<std::optional<RootRecord>>& byRank,
              uint64_t magic, Code code, const std::string& message, const std::atomic<bool>* stop) {
  int n = static_cast<int>(byRank.size());
  for (const RootRecord& r : arrived) {
    RootReply reply{};
    reply.status = static_cast<int32_t>(code);
    if (code == Code::kSuccess) reply.next = byRank[static_cast<size_t>((r.rank + 1) % n)]->ring;
    std::snprintf(reply.message, sizeof(reply.message), "%s", message.c_str());
    // Not abortable: a rank that aborts right after its own answer must not cut the others'
    // answers short (each rank listens for it already). 10 s: over a lossy link a lost SYN is
    // sent again after 1 s and 3 s more, and a rank never answered waits until the init timeout;
    // a dead rank's host refuses at once, an unreachable one costs these seconds.
    (void)stop;
    Deadline dl = Deadline::in(std::chrono::seconds(10), nullptr, "sending the bootstrap root's answer to rank " +
                                                                    std::to_string(r.rank));
    auto fd = connectTo(r.reply, magic, SocketType::kBootstrap, dl);
    if (!fd.isOk() || !sendAll(fd->get(), &reply, sizeof(reply), dl, r.reply.str()).isOk())
      WEFT_INFO(log::kBootstrap, "Bootstrap Root : could not answer rank %d at %s", r.rank, r.reply.str().c_str());
  }
}

void rootMain(Listener listen, uint64_t magic, std::chrono::steady_clock::time_point until,
              std::shared_ptr<std::atomic<bool>> stop, std::chrono::milliseconds timeout) {
  std::vector<RootRecord> arrived;
  std::vector<std::optional<RootRecord>> byRank;
  int count = 0;
  Code code = Code::kSuccess;
  std::string error;
  Deadline dl;
  dl.at = until;
  dl.abort = stop.get();
  dl.what = "waiting for ranks at the bootstrap root";
  for (;;) {
    auto fd = listen.accept(magic, SocketType::kBootstrap, dl);
    if (!fd.isOk()) {
      if (stop->load()) return;
      std::vector<int> missing;
      for (size_t r = 0; r < byRank.size(); ++r)
        if (!byRank[r]) missing.push_back(static_cast<int>(r));
      code = Code::kSystemError;
      error = strprintf("init timed out after %lld s (WEFT_INIT_TIMEOUT): %d of %zu ranks reached the bootstrap root; "
                        "ranks %s never arrived",
                        static_cast<long long>(timeout.count() / 1000), count, byRank.size(),
                        rankRanges(missing).c_str());
      break;
    }
    RootRecord r{};
    // The connection passed the job's magic: a rank of this job, whose record may be slow to come
    // over a lossy link (a lost SYN and two lost segments are 9 s of TCP backoff). Dropped here, it
    // would wait for the root's answer until the init timeout; so it gets the init's own deadline.
    Deadline readDl = dl;
    readDl.what = "reading a rank's record at the root";
    if (!recvAll(fd->get(), &r, sizeof(r), readDl, "a rank").isOk()) {
      if (stop->load()) return;
      continue;
    }
    if (byRank.empty()) {
      if (r.nranks < 1) continue;
      byRank.resize(static_cast<size_t>(r.nranks));
    }
    arrived.push_back(r);
    if (r.nranks != static_cast<int>(byRank.size())) {
      code = Code::kInvalidUsage;
      error = strprintf("Bootstrap Root : mismatch in info from procs: rank %d says nranks is %d, other ranks said %zu",
                        r.rank, r.nranks, byRank.size());
      break;
    }
    if (r.rank < 0 || r.rank >= r.nranks) {
      code = Code::kInvalidUsage;
      error = strprintf("Bootstrap Root : rank %d is out of range 0..%d", r.rank, r.nranks - 1);
      break;
    }
    if (byRank[static_cast<size_t>(r.rank)]) {
      code = Code::kInvalidUsage;
      error = strprintf("Bootstrap Root : rank %d of %d has already checked in (the same rank twice)", r.rank, r.nranks);
      break;
    }
    byRank[static_cast<size_t>(r.rank)] = r;
    if (++count == r.nranks) break;
  }
  if (code != Code::kSuccess) WEFT_WARN("%s", error.c_str());
  replyAll(arrived, byRank, magic, code, error, stop.get());
}

}  // namespace

Result<BootstrapHandle> startRoot(const SockAddr& addr, uint64_t magic, std::chrono::milliseconds timeout) {
  BootstrapHandle h;
  h.magic = magic;
  WEFT_ASSIGN_OR_RETURN(Listener listen, Listener::open(addr, &h.addr));
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto until = std::chrono::steady_clock::now() + timeout;
  RootRegistry::Entry e;
  e.stop = stop;
  e.thread = std::thread(rootMain, std::move(listen), magic, until, stop, timeout);
  roots().add(magic, std::move(e));
  return h;
}

void joinRoot(uint64_t magic) { roots().join(magic); }

void stopRoot(uint64_t magic) {
  roots().stop(magic);
  roots().join(magic);
}

Result<SockAddr> bootstrapAddress(const config::Settings& settings, const SockAddr* root) {
  static std::mutex mutex;
  static std::optional<SockAddr> cached;
  // A forked child may move to another network namespace before its first communicator.
  static std::once_flag forkHook;
  std::call_once(forkHook, [] {
    pthread_atfork(nullptr, nullptr, [] {
      new (&mutex) std::mutex();
      cached.reset();
    });
  });
  std::lock_guard<std::mutex> lock(mutex);
  if (cached) return *cached;
  InterfaceChoice choice;
  choice.ifname = settings.interfaceList("NCCL_SOCKET_IFNAME");
  std::string fam = settings.string("NCCL_SOCKET_FAMILY");
  choice.family = fam == "AF_INET" ? AF_INET : fam == "AF_INET6" ? AF_INET6 : 0;
  if (root != nullptr) choice.root = *root;
  WEFT_ASSIGN_OR_RETURN(Interface itf, findInterface(choice, listInterfaces()));
  WEFT_INFO(log::kBootstrap | log::kInit, "Bootstrap: Using %s:%s", itf.name.c_str(), itf.addr.str().c_str());
  cached = itf.addr;
  return itf.addr;
}

Result<std::unique_ptr<Bootstrap>> Bootstrap::init(const BootstrapHandle& handle, const SockAddr& local, int rank,
                                                   int nranks, const Deadline& deadline) {
  std::unique_ptr<Bootstrap> b(new Bootstrap());
  b->rank_ = rank;
  b->nranks_ = nranks;
  b->magic_ = handle.magic;
  SockAddr ringAddr;
  SockAddr replyAddr;
  SockAddr p2pAddr;
  WEFT_ASSIGN_OR_RETURN(b->ringListen_, Listener::open(local, &ringAddr));
  WEFT_ASSIGN_OR_RETURN(b->p2pListen_, Listener::open(local, &p2pAddr));
  WEFT_ASSIGN_OR_RETURN(Listener replyListen, Listener::open(local, &replyAddr));

  {
    Deadline dl = deadline;
    dl.what = "connecting to the bootstrap root at " + handle.addr.str();
    WEFT_ASSIGN_OR_RETURN(Fd root, connectTo(handle.addr, handle.magic, SocketType::kBootstrap, dl));
    RootRecord rec{rank, nranks, replyAddr, ringAddr};
    WEFT_TRY(sendAll(root.get(), &rec, sizeof(rec), dl, "the bootstrap root"));
  }
  RootReply reply{};
  {
    Deadline dl = deadline;
    dl.what = "waiting for the bootstrap root at " + handle.addr.str() + " to hear from all " +
              std::to_string(nranks) + " ranks";
    // The root started its clock before any rank did: a little grace lets its answer, which
    // names the ranks that never arrived, come first.
    if (dl.at != std::chrono::steady_clock::time_point::max()) dl.at += std::chrono::seconds(3);
    WEFT_ASSIGN_OR_RETURN(Fd fd, replyListen.accept(handle.magic, SocketType::kBootstrap, dl));
    WEFT_TRY(recvAll(fd.get(), &reply, sizeof(reply), dl, "the bootstrap root"));
  }
  reply.message[sizeof(reply.message) - 1] = '\0';
  if (reply.status != 0) return Status(static_cast<Code>(reply.status), reply.message);

  int prev = (rank - 1 + nranks) % nranks;
  int next = (rank + 1) % nranks;
  if (nranks > 1) {
    Deadline dl = deadline;
    dl.what = strprintf("connecting the bootstrap ring (rank %d -> %d)", rank, next);
    for (int kind = 0; kind < 2; ++kind) {
      WEFT_ASSIGN_OR_RETURN(Fd fd, connectTo(reply.next, handle.magic, SocketType::kBootstrap, dl));
      RingHello hello{rank, kind};
      WEFT_TRY(sendAll(fd.get(), &hello, sizeof(hello), dl, reply.next.str()));
      (kind == 0 ? b->next_ : b->watchNext_) = std::move(fd);
    }
    dl.what = strprintf("waiting for rank %d to connect the bootstrap ring", prev);
    for (int i = 0; i < 2; ++i) {
      WEFT_ASSIGN_OR_RETURN(Fd fd, b->ringListen_.accept(handle.magic, SocketType::kBootstrap, dl));
      RingHello hello{};
      WEFT_TRY(recvAll(fd.get(), &hello, sizeof(hello), dl, "the ring predecessor"));
      if (hello.rank != prev || (hello.kind != 0 && hello.kind != 1))
        return internalError(strprintf("bootstrap ring: rank %d expected its predecessor %d, got rank %d (kind %d)",
                                       rank, prev, hello.rank, hello.kind));
      Fd& slot = hello.kind == 0 ? b->prev_ : b->watchPrev_;
      if (slot.valid()) return internalError("bootstrap ring: two connections of one kind from rank " + std::to_string(prev));
      slot = std::move(fd);
    }
  }
  b->p2pAddrs_.resize(static_cast<size_t>(nranks));
  b->p2pAddrs_[static_cast<size_t>(rank)] = p2pAddr;
  Deadline dl = deadline;
  dl.what = "exchanging bootstrap addresses";
  WEFT_TRY(b->allgather(b->p2pAddrs_.data(), sizeof(SockAddr), dl));
  return b;
}

Bootstrap::~Bootstrap() { stopWatch(); }

Status Bootstrap::allgather(void* data, size_t size, const Deadline& deadline) {
  char* d = static_cast<char*>(data);
  int n = nranks_;
  for (int s = 0; s < n - 1; ++s) {
    int sendSlice = (rank_ - s + n) % n;
    int recvSlice = (rank_ - s - 1 + n) % n;
    WEFT_TRY(sendRecv(next_.get(), d + static_cast<size_t>(sendSlice) * size, size, prev_.get(),
                      d + static_cast<size_t>(recvSlice) * size, size, deadline,
                      "rank " + std::to_string((rank_ + 1) % n), "rank " + std::to_string((rank_ - 1 + n) % n)));
  }
  return Status::ok();
}

Status Bootstrap::barrier(const Deadline& deadline) {
  std::vector<char> bytes(static_cast<size_t>(nranks_), 0);
  return allgather(bytes.data(), 1, deadline);
}

Status Bootstrap::send(int peer, uint32_t tag, const void* data, size_t size, const Deadline& deadline) {
  if (peer < 0 || peer >= nranks_) return invalidArgument(strprintf("bootstrap send to rank %d of %d", peer, nranks_));
  WEFT_ASSIGN_OR_RETURN(Fd fd, connectTo(p2pAddrs_[static_cast<size_t>(peer)], magic_, SocketType::kBootstrap, deadline));
  P2pHeader h{rank_, tag, size};
  std::string who = "rank " + std::to_string(peer);
  WEFT_TRY(sendAll(fd.get(), &h, sizeof(h), deadline, who));
  return sendAll(fd.get(), data, size, deadline, who);
}

Status Bootstrap::recv(int peer, uint32_t tag, std::vector<char>& out, const Deadline& deadline) {
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
    if (it->peer == peer && it->tag == tag) {
      out = std::move(it->data);
      unexpected_.erase(it);
      return Status::ok();
    }
  }
  for (;;) {
    WEFT_ASSIGN_OR_RETURN(Fd fd, p2pListen_.accept(magic_, SocketType::kBootstrap, deadline));
    P2pHeader h{};
    WEFT_TRY(recvAll(fd.get(), &h, sizeof(h), deadline, "a bootstrap peer"));
    if (h.size > (uint64_t{1} << 32)) return internalError(strprintf("bootstrap message of %llu bytes from rank %d",
                                                                     static_cast<unsigned long long>(h.size), h.rank));
    std::vector<char> data(h.size);
    WEFT_TRY(recvAll(fd.get(), data.data(), data.size(), deadline, "rank " + std::to_string(h.rank)));
    if (h.rank == peer && h.tag == tag) {
      out = std::move(data);
      return Status::ok();
    }
    unexpected_.push_back({h.rank, h.tag, std::move(data)});
  }
}

// One message on the watch ring: 'H' heartbeat, 'B' goodbye of `rank` after `count`
// collectives, 'F' failure of `rank`. Fixed size, so a reader only counts bytes.
struct Bootstrap::WatchMessage {
  static constexpr size_t kReasonBytes = 240;  // a failure's reason, cut to this (NUL-padded)
  static constexpr size_t kBytes = 13 + kReasonBytes;
  char kind = 0;
  int32_t rank = 0;
  uint64_t count = 0;
  std::string reason;  // 'F': why the rank failed, as it said it ("" where unknown)
  void pack(char* out) const {
    out[0] = kind;
    std::memcpy(out + 1, &rank, 4);
    std::memcpy(out + 5, &count, 8);
    std::memset(out + 13, 0, kReasonBytes);
    std::memcpy(out + 13, reason.data(), std::min(reason.size(), kReasonBytes - 1));
  }
  static WatchMessage unpack(const char* in) {
    WatchMessage m;
    m.kind = in[0];
    std::memcpy(&m.rank, in + 1, 4);
    std::memcpy(&m.count, in + 5, 8);
    m.reason.assign(in + 13, strnlen(in + 13, kReasonBytes));
    return m;
  }
};

void Bootstrap::startWatch(WatchEvents events, std::chrono::milliseconds peerTimeout) {
  if (nranks_ < 2) return;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return;
  stopPipeRead_ = Fd(p[0]);
  stopPipeWrite_ = Fd(p[1]);
  events_ = std::move(events);
  peerTimeout_ = peerTimeout;
  watchStopped_ = false;
  watch_ = std::thread([this] { watchLoop(); });
}

// Sends to both neighbours, or to one side only (0: next, 1: prev).
void Bootstrap::sendWatch(char kind, int rank, uint64_t count, int onlySide, const std::string& reason) {
  char msg[WatchMessage::kBytes];
  WatchMessage{kind, rank, count, reason}.pack(msg);
  std::lock_guard<std::mutex> lock(watchMutex_);
  Fd* fds[2] = {&watchNext_, &watchPrev_};
  for (int side = 0; side < 2; ++side)
    if ((onlySide < 0 || onlySide == side) && fds[side]->valid())
      (void)::send(fds[side]->get(), msg, sizeof(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void Bootstrap::goodbye(uint64_t collectives) {
  if (!failed_.load()) sendWatch('B', rank_, collectives);
}

void Bootstrap::fail(int failedRank, const std::string& reason) {
  if (!failed_.exchange(true)) sendWatch('F', failedRank, 0, -1, reason);
}

void Bootstrap::stopWatch() {
  if (watch_.joinable()) {
    char c = 0;
    (void)::write(stopPipeWrite_.get(), &c, 1);
    watch_.join();
  }
}

void Bootstrap::watchLoop() {
  using Clock = std::chrono::steady_clock;
  int n = nranks_;
  int neighbour[2] = {(rank_ + 1) % n, (rank_ - 1 + n) % n};
  bool open[2] = {true, true};
  char buf[2][WatchMessage::kBytes];
  size_t got[2] = {0, 0};
  std::vector<bool> departed(static_cast<size_t>(n), false);
  // A heartbeat four times per timeout, at most every second: a neighbour is declared silent only
  // after several were missed.
  bool beats = peerTimeout_.count() > 0;
  auto interval = std::min<Clock::duration>(std::chrono::seconds(1), peerTimeout_ / 4);
  Clock::time_point lastHeard[2] = {Clock::now(), Clock::now()};
  Clock::time_point nextBeat = Clock::now();
  // Reports a failure once: to the other neighbour (and, for a silent one, to it too, so that it
  // learns it was dropped if it comes back), then here.
  // `reason` travels on around the ring: a failure passed on still says what happened first.
  auto failed = [&](int side, int failedRank, const std::string& text, bool tellBoth, const std::string& reason) {
    if (failed_.exchange(true)) return;
    sendWatch('F', failedRank, 0, tellBoth ? -1 : 1 - side, reason);
    if (events_.onFailure) events_.onFailure(failedRank, text);
  };
  Clock::time_point lastLoop = Clock::now();
  for (;;) {
    Clock::time_point now = Clock::now();
    // This process itself was stopped (SIGSTOP, a debugger) and resumed: its neighbours' silence
    // is its own; read what they sent meanwhile (a failure report, most likely) before judging.
    if (beats && now - lastLoop > peerTimeout_ / 2) lastHeard[0] = lastHeard[1] = now;
    lastLoop = now;
    if (beats && now >= nextBeat) {
      for (int side = 0; side < 2; ++side)
        if (open[side]) sendWatch('H', rank_, 0, side);
      nextBeat = now + interval;
    }
    for (int side = 0; beats && side < 2; ++side) {
      if (!open[side] || now - lastHeard[side] <= peerTimeout_) continue;
      double silent = std::chrono::duration<double>(now - lastHeard[side]).count();
      std::string text = strprintf("rank %d sent nothing to rank %d for %.1f s (WEFT_PEER_TIMEOUT=%lld s): its process "
                                   "is stopped (SIGSTOP, a debugger), frozen, or cut off from the network",
                                   neighbour[side], rank_, silent, static_cast<long long>(peerTimeout_.count() / 1000));
      failed(side, neighbour[side], text, true, text);
      return;
    }
    int waitMs = -1;
    if (beats) waitMs = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(nextBeat - now).count()) + 1;
    pollfd fds[3] = {{stopPipeRead_.get(), POLLIN, 0},
                     {open[0] ? watchNext_.get() : -1, POLLIN, 0},
                     {open[1] ? watchPrev_.get() : -1, POLLIN, 0}};
    if (::poll(fds, 3, waitMs) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) return;
    for (int side = 0; side < 2; ++side) {
      if (!open[side] || fds[side + 1].revents == 0) continue;
      ssize_t r = ::recv(fds[side + 1].fd, buf[side] + got[side], WatchMessage::kBytes - got[side], MSG_DONTWAIT);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (r <= 0) {
        std::string text = strprintf("rank %d closed its bootstrap connection to rank %d without a goodbye (the process "
                                     "died or was killed)", neighbour[side], rank_);
        failed(side, neighbour[side], text, false, text);
        return;
      }
      lastHeard[side] = Clock::now();
      if ((got[side] += static_cast<size_t>(r)) < WatchMessage::kBytes) continue;
      got[side] = 0;
      WatchMessage m = WatchMessage::unpack(buf[side]);
      if (m.kind == 'H') continue;
      if (m.kind == 'B') {
        if (m.rank == neighbour[side]) open[side] = false;  // it closes: nothing more to watch on that side
        if (m.rank >= 0 && m.rank < n && !departed[static_cast<size_t>(m.rank)]) {
          departed[static_cast<size_t>(m.rank)] = true;
          if (open[1 - side]) sendWatch('B', m.rank, m.count, 1 - side);  // around the ring
          if (events_.onGoodbye) events_.onGoodbye(m.rank, m.count);
        }
        continue;
      }
      std::string text = strprintf("rank %d failed or aborted (passed on by rank %d)", m.rank, neighbour[side]);
      if (!m.reason.empty()) text += ": " + m.reason;
      failed(side, m.rank, text, false, m.reason);
      return;
    }
    if (!open[0] && !open[1]) return;
  }
}

}  // namespace weft::runtime
