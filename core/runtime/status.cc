#include "core/runtime/status.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/runtime/comm.h"
#include "core/runtime/status_io.h"

namespace weft::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// How long the service gives the other ranks to answer: `weft status` must answer within a
// second even when ranks are stopped.
constexpr auto kGatherDeadline = std::chrono::milliseconds(600);
// A connection that has not sent its request by then is dropped (a stranger, a port scanner).
constexpr int kRequestMs = 200;

// What a rank's service asks another rank's service: the job's magic proves it is one of its
// ranks; the communicator and rank say which report.
struct PeerRequest {
  uint64_t magic = 0;
  uint64_t commHash = 0;
  int32_t rank = -1;
  uint32_t version = kStatusVersion;
};

std::string shortHostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  if (char* dot = std::strchr(buf, '.')) *dot = '\0';
  return buf;
}

RankReport reportOf(Comm& c) {
  RankReport r;
  r.rank = c.rank;
  r.nranks = c.nranks;
  r.pid = static_cast<int32_t>(getpid());
  r.state = c.state.load();
  r.collectives = c.opCount.load();
  r.running = c.collRunning.load();
  r.finalized = c.closed.load() ? 1 : 0;
  const char* name = c.collRunningName.load();
  std::snprintf(r.runningName, sizeof(r.runningName), "%s", r.running != 0 && name != nullptr ? name : "");
  std::snprintf(r.host, sizeof(r.host), "%s", shortHostName().c_str());
  std::lock_guard<std::mutex> lock(c.errorMutex);
  if (!c.error.isOk()) std::snprintf(r.error, sizeof(r.error), "%s", c.error.message().c_str());
  return r;
}

// What the service needs of a communicator to answer for it, copied under the registry's lock.
struct CommSnapshot {
  uint64_t commHash = 0, magic = 0;
  int rank = 0, nranks = 0;
  std::vector<SockAddr> addrs;
  RankReport mine;
};

// Asks every other rank's service at once (non-blocking sockets, one poll loop) until each
// answered or the deadline passed. The other ranks' services may be gathering for `weft status`
// at the same moment (it asks every process at once), so while this one waits it keeps answering
// them: `listening` is its own peer port, and `answerPeer` serves one connection on it.
template <typename AnswerPeer>
void gather(CommStatus& out, const CommSnapshot& s, int listening, AnswerPeer&& answerPeer) {
  struct Ask {
    int rank;
    Fd fd;
    PeerRequest req;
    size_t sent = 0, got = 0;
    RankReport reply;
    bool done = false;
  };
  auto t0 = Clock::now();
  std::vector<Ask> asks;
  for (int r = 0; r < s.nranks; ++r) {
    if (r == s.rank) continue;
    Ask a;
    a.rank = r;
    a.req = PeerRequest{s.magic, s.commHash, r, kStatusVersion};
    const SockAddr& to = s.addrs[static_cast<size_t>(r)];
    int fd = ::socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    a.fd = Fd(fd);
    if (::connect(fd, to.get(), to.length()) != 0 && errno != EINPROGRESS) a.done = true;
    asks.push_back(std::move(a));
  }
  for (;;) {
    std::vector<pollfd> fds{{listening, POLLIN, 0}};
    std::vector<Ask*> who{nullptr};
    for (Ask& a : asks) {
      if (a.done) continue;
      fds.push_back({a.fd.get(), static_cast<short>(a.sent < sizeof(a.req) ? POLLOUT : POLLIN), 0});
      who.push_back(&a);
    }
    if (fds.size() == 1) break;
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(t0 + kGatherDeadline - Clock::now()).count());
    if (left <= 0) break;
    if (::poll(fds.data(), fds.size(), left) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (who[i] == nullptr) {
        answerPeer();
        continue;
      }
      Ask& a = *who[i];
      if (a.sent < sizeof(a.req)) {
        ssize_t w = ::send(a.fd.get(), reinterpret_cast<char*>(&a.req) + a.sent, sizeof(a.req) - a.sent, MSG_NOSIGNAL);
        if (w > 0) a.sent += static_cast<size_t>(w);
        else if (errno != EAGAIN && errno != EINTR) a.done = true;
        continue;
      }
      ssize_t r = ::recv(a.fd.get(), reinterpret_cast<char*>(&a.reply) + a.got, sizeof(a.reply) - a.got, MSG_DONTWAIT);
      if (r > 0) a.got += static_cast<size_t>(r);
      else if (r == 0 || (errno != EAGAIN && errno != EINTR)) a.done = true;
      if (a.got == sizeof(a.reply)) {
        a.done = true;
        RankEntry& e = out.ranks[static_cast<size_t>(a.rank)];
        e.answered = 1;
        e.report = a.reply;
        e.millis = std::chrono::duration<float, std::milli>(Clock::now() - t0).count();
      }
    }
  }
}

class StatusService {
 public:
  static StatusService& get() {
    static StatusService* service = new StatusService();  // never destroyed: usable at exit
    return *service;
  }

  Result<SockAddr> start(const SockAddr& bootstrapAddr) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (started_) return tcpAddr_;
    SockAddr any = bootstrapAddr;
    any.setPort(0);
    WEFT_ASSIGN_OR_RETURN(tcp_, listenOn(any, &tcpAddr_));
    WEFT_ASSIGN_OR_RETURN(unix_, listenLocal());
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return errnoError("pipe for the status service", errno);
    stopRead_ = Fd(p[0]);
    stopWrite_ = Fd(p[1]);
    started_ = true;
    thread_ = std::thread([this] { loop(); });
    static std::once_flag hooks;
    std::call_once(hooks, [] {
      std::atexit([] { StatusService::get().stop(); });
      pthread_atfork(nullptr, nullptr, [] { StatusService::get().forgetInChild(); });
    });
    WEFT_INFO(log::kInit, "weft status: answering on %s and %s", path_.c_str(), tcpAddr_.str().c_str());
    return tcpAddr_;
  }

  void add(Comm* c) {
    std::lock_guard<std::mutex> lock(mutex_);
    comms_.push_back(c);
  }
  void remove(Comm* c) {
    std::lock_guard<std::mutex> lock(mutex_);
    comms_.erase(std::remove(comms_.begin(), comms_.end(), c), comms_.end());
  }

 private:
  // Listening sockets are non-blocking: a connection that is gone between poll and accept must
  // not stall the service.
  static Result<Fd> listenOn(const SockAddr& addr, SockAddr* bound) {
    int fd = ::socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return errnoError("socket for the status service", errno);
    Fd owner(fd);
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, addr.get(), addr.length()) != 0) return errnoError("bind of the status service to " + addr.str(), errno);
    if (::listen(fd, 64) != 0) return errnoError("listen of the status service", errno);
    *bound = addr;
    socklen_t len = sizeof(bound->raw);
    if (::getsockname(fd, bound->get(), &len) != 0) return errnoError("getsockname of the status service", errno);
    return owner;
  }

  // The directory is this user's alone (0700); the socket is 0600 on top.
  Result<Fd> listenLocal() {
    std::string dir = statusDir();
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return errnoError("mkdir " + dir, errno);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) return errnoError("stat " + dir, errno);
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
      return systemError(strprintf("%s must be a directory of this user's that nobody else can enter (mode 0700); "
                                   "set WEFT_STATUS_DIR to another place",
                                   dir.c_str()));
    path_ = dir + "/" + std::to_string(getpid()) + ".sock";
    ::unlink(path_.c_str());
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path_.size() >= sizeof(a.sun_path)) return systemError("status socket path too long: " + path_);
    std::memcpy(a.sun_path, path_.c_str(), path_.size() + 1);
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return errnoError("socket for the status service", errno);
    Fd owner(fd);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return errnoError("bind " + path_, errno);
    (void)::chmod(path_.c_str(), 0600);
    if (::listen(fd, 16) != 0) return errnoError("listen " + path_, errno);
    return owner;
  }

  void loop() {
    for (;;) {
      pollfd fds[3] = {{stopRead_.get(), POLLIN, 0}, {tcp_.get(), POLLIN, 0}, {unix_.get(), POLLIN, 0}};
      if (::poll(fds, 3, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents != 0) return;
      if (fds[1].revents != 0) acceptPeer();
      if (fds[2].revents != 0) {
        Fd c(::accept4(unix_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (c.valid()) serveLocal(c.get());
      }
    }
  }

  void acceptPeer() {
    Fd c(::accept4(tcp_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (c.valid()) servePeer(c.get());
  }

  // Another rank's service: the report of one of this process's ranks, if it knows the job's magic.
  void servePeer(int fd) {
    PeerRequest req;
    if (!readFull(fd, &req, sizeof(req), kRequestMs) || req.version != kStatusVersion) return;
    RankReport r;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = std::find_if(comms_.begin(), comms_.end(), [&](Comm* c) {
        return c->commHash == req.commHash && c->rank == req.rank && c->jobMagic == req.magic;
      });
      if (it == comms_.end()) return;  // a stranger, or a communicator already gone: nothing
      r = reportOf(**it);
    }
    (void)writeFull(fd, &r, sizeof(r));
  }

  // `weft status` on this host: every communicator of this process, every rank's report.
  void serveLocal(int fd) {
    char req[sizeof(kLocalRequest) - 1];
    if (!readFull(fd, req, sizeof(req), kRequestMs) || std::memcmp(req, kLocalRequest, sizeof(req)) != 0) return;
    std::vector<CommSnapshot> snaps;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (Comm* c : comms_) {
        CommSnapshot s;
        s.commHash = c->commHash;
        s.magic = c->jobMagic;
        s.rank = c->rank;
        s.nranks = c->nranks;
        for (const PeerInfo& p : c->peers) s.addrs.push_back(p.statusAddr);
        s.mine = reportOf(*c);
        snaps.push_back(std::move(s));
      }
    }
    std::string out;
    auto put = [&out](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
    uint32_t version = kStatusVersion;
    int32_t ncomms = static_cast<int32_t>(snaps.size());
    put(&version, sizeof(version));
    put(&ncomms, sizeof(ncomms));
    for (const CommSnapshot& s : snaps) {
      CommStatus cs;
      cs.ranks.resize(static_cast<size_t>(s.nranks));
      for (int r = 0; r < s.nranks; ++r) cs.ranks[static_cast<size_t>(r)].statusAddr = s.addrs[static_cast<size_t>(r)];
      RankEntry& me = cs.ranks[static_cast<size_t>(s.rank)];
      me.answered = 1;
      me.report = s.mine;
      gather(cs, s, tcp_.get(), [this] { acceptPeer(); });
      int32_t header[2] = {s.nranks, s.rank};
      put(&s.commHash, sizeof(s.commHash));
      put(header, sizeof(header));
      for (const RankEntry& e : cs.ranks) put(&e, sizeof(e));
    }
    (void)writeFull(fd, out.data(), out.size());
  }

  void stop() {
    std::thread t;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!started_) return;
      started_ = false;
      char c = 0;
      (void)::write(stopWrite_.get(), &c, 1);
      t = std::move(thread_);
    }
    if (t.joinable()) t.join();
    ::unlink(path_.c_str());
  }

  // A forked child has the parent's descriptors but not its thread: it forgets both (the socket
  // file stays the parent's) and starts its own service if it makes a communicator.
  void forgetInChild() {
    new (&mutex_) std::mutex();
    if (thread_.joinable()) new (new std::thread) std::thread(std::move(thread_));  // parked, never joined
    started_ = false;
    comms_.clear();
    (void)tcp_.release(), (void)unix_.release(), (void)stopRead_.release(), (void)stopWrite_.release();
  }

  std::mutex mutex_;
  std::vector<Comm*> comms_;
  bool started_ = false;
  Fd tcp_, unix_, stopRead_, stopWrite_;
  SockAddr tcpAddr_;
  std::string path_;
  std::thread thread_;
};

}  // namespace

Result<SockAddr> statusServiceAddress(const SockAddr& bootstrapAddr) { return StatusService::get().start(bootstrapAddr); }
void registerForStatus(Comm* comm) { StatusService::get().add(comm); }
void unregisterForStatus(Comm* comm) { StatusService::get().remove(comm); }

}  // namespace weft::runtime
