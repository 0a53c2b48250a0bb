#include "core/runtime/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::runtime {

namespace {

constexpr int kSliceMs = 100;  // the longest poll(): an abort is seen within this

struct Handshake {
  uint64_t magic;
  uint32_t type;
} __attribute__((packed));
static_assert(sizeof(Handshake) == 12);

Status setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return errnoError("fcntl(O_NONBLOCK)", errno);
  return Status::ok();
}

void setNoDelay(int fd) {
  int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Waits for `events` on fd for one slice; returns revents (0 on timeout).
Result<int> pollOne(int fd, short events, const Deadline& deadline) {
  WEFT_ASSIGN_OR_RETURN(int ms, deadline.sliceMs());
  pollfd p{fd, events, 0};
  int rc = ::poll(&p, 1, ms);
  if (rc < 0) {
    if (errno == EINTR) return 0;
    return errnoError("poll", errno);
  }
  return rc == 0 ? 0 : static_cast<int>(p.revents);
}

std::string peerName(int fd) {
  SockAddr a;
  socklen_t len = sizeof(a.raw);
  if (getpeername(fd, a.get(), &len) != 0) return "unknown peer";
  return a.str();
}

}  // namespace

int SockAddr::port() const {
  return family() == AF_INET ? ntohs(reinterpret_cast<const sockaddr_in*>(&raw)->sin_port) : ntohs(raw.sin6_port);
}

void SockAddr::setPort(int port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&raw)->sin_port = htons(static_cast<uint16_t>(port));
  else raw.sin6_port = htons(static_cast<uint16_t>(port));
}

std::string SockAddr::str() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&raw)->sin_addr, host, sizeof(host));
    return strprintf("%s<%d>", host, port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &raw.sin6_addr, host, sizeof(host));
    return strprintf("[%s]<%d>", host, port());
  }
  return "(no address)";
}

Result<SockAddr> parseHostPort(const std::string& text) {
  std::string host;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return invalidArgument("'" + text + "': expected [ipv6]:port");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) return invalidArgument("'" + text + "': expected host:port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 1 || p > 65535)
    return invalidArgument("'" + text + "': port '" + port + "' is not a number in 1..65535");
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr)
    return invalidArgument("'" + text + "': cannot resolve '" + host + "': " + gai_strerror(rc));
  SockAddr a;
  std::memcpy(&a.raw, res->ai_addr, std::min<size_t>(res->ai_addrlen, sizeof(a.raw)));
  freeaddrinfo(res);
  a.setPort(static_cast<int>(p));
  return a;
}

Deadline Deadline::in(std::chrono::milliseconds d, const std::atomic<bool>* abort, std::string what) {
  Deadline dl;
  dl.at = std::chrono::steady_clock::now() + d;
  dl.abort = abort;
  dl.what = std::move(what);
  return dl;
}

Deadline Deadline::never(const std::atomic<bool>* abort, std::string what) {
  Deadline dl;
  dl.abort = abort;
  dl.what = std::move(what);
  return dl;
}

Result<int> Deadline::sliceMs() const {
  if (abort != nullptr && abort->load(std::memory_order_acquire))
    return Status(Code::kInvalidUsage, "aborted (weft_comm_abort) while " + what);
  if (at == std::chrono::steady_clock::time_point::max()) return kSliceMs;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at - std::chrono::steady_clock::now()).count();
  if (left <= 0) return Status(Code::kSystemError, "timed out " + what);
  return static_cast<int>(std::min<long long>(left, kSliceMs));
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<Listener> Listener::open(const SockAddr& addr, SockAddr* bound) {
  Fd fd(::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return errnoError("socket", errno);
  int one = 1;
  // A fixed port (NCCL_COMM_ID) must be reusable right after a previous job on it ended.
  if (addr.port() != 0) (void)setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), addr.get(), addr.length()) != 0) return errnoError("bind to " + addr.str(), errno);
  if (::listen(fd.get(), 16384) != 0) return errnoError("listen on " + addr.str(), errno);
  WEFT_TRY(setNonBlocking(fd.get()));
  if (bound != nullptr) {
    socklen_t len = sizeof(bound->raw);
    if (getsockname(fd.get(), bound->get(), &len) != 0) return errnoError("getsockname", errno);
  }
  Listener l;
  l.fd_ = std::move(fd);
  return l;
}

Result<Fd> connectTo(const SockAddr& to, uint64_t magic, SocketType type, const Deadline& deadline) {
  for (int attempt = 0;; ++attempt) {
    Fd fd(::socket(to.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return errnoError("socket", errno);
    setNoDelay(fd.get());
    int rc = ::connect(fd.get(), to.get(), to.length());
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      for (;;) {
        WEFT_ASSIGN_OR_RETURN(int ev, pollOne(fd.get(), POLLOUT, deadline));
        if (ev != 0) break;
      }
      socklen_t len = sizeof(err);
      if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
    if (err == 0) {
      Handshake h{magic, static_cast<uint32_t>(type)};
      WEFT_TRY(sendAll(fd.get(), &h, sizeof(h), deadline, to.str()));
      return fd;
    }
    bool retry = err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
                 err == EAGAIN || err == EINTR || err == ECONNRESET;
    if (!retry) return errnoError("connect to " + to.str(), err);
    // The peer is not listening yet: wait 100 ms (NCCL_SOCKET_RETRY_SLEEP_MSEC) and try again.
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (std::chrono::steady_clock::now() < until) {
      auto slice = deadline.sliceMs();
      if (!slice.isOk())
        return Status(slice.status().code(), slice.status().message() + " (connecting to " + to.str() + ": " +
                                                 std::strerror(err) + ", " + std::to_string(attempt + 1) +
                                                 " attempts)");
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(*slice, 20)));
    }
  }
}

Result<Fd> Listener::accept(uint64_t magic, SocketType type, const Deadline& deadline) {
  for (bool first = true;; first = false) {
    // Handshakes that completed in an earlier call are looked at before waiting.
    int ms = 0;
    if (!first) {
      WEFT_ASSIGN_OR_RETURN(ms, deadline.sliceMs());
    }
    std::vector<pollfd> fds;
    fds.push_back({fd_.get(), POLLIN, 0});
    for (auto& p : pending_) fds.push_back({p->fd.get(), POLLIN, 0});
    int rc = ::poll(fds.data(), fds.size(), ms);
    if (rc < 0 && errno != EINTR) return errnoError("poll on a listening socket", errno);
    if (rc > 0 && (fds[0].revents & POLLIN) != 0) {
      for (;;) {
        int c = ::accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
          if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
            return errnoError("accept", errno);
          break;
        }
        setNoDelay(c);
        auto p = std::make_unique<Pending>();
        p->fd = Fd(c);
        p->since = std::chrono::steady_clock::now();
        pending_.push_back(std::move(p));
      }
    }
    auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < pending_.size();) {
      Pending& p = *pending_[i];
      bool drop = false;
      if (p.got < sizeof(p.handshake)) {
        ssize_t n = ::recv(p.fd.get(), p.handshake + p.got, sizeof(p.handshake) - p.got, 0);
        if (n > 0) p.got += static_cast<size_t>(n);
        else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) drop = true;
      }
      // A connection that has not said who it is within 30 s is a stranger that holds a slot.
      if (!drop && p.got < sizeof(p.handshake) && now - p.since > std::chrono::seconds(30)) drop = true;
      Handshake h{};
      std::memcpy(&h, p.handshake, sizeof(h));
      if (!drop && p.got == sizeof(p.handshake)) {
        if (h.magic != magic) {
          drop = true;
        } else if (h.type != static_cast<uint32_t>(type)) {
          return internalError(strprintf("socketFinalizeAccept from %s: wrong type %u != %u",
                                         peerName(p.fd.get()).c_str(), h.type, static_cast<uint32_t>(type)));
        } else {
          Fd out = std::move(p.fd);
          pending_.erase(pending_.begin() + static_cast<long>(i));
          return out;
        }
      }
      if (drop) {
        WEFT_INFO(log::kBootstrap, "socketFinalizeAccept: didn't receive a valid magic from %s", peerName(p.fd.get()).c_str());
        pending_.erase(pending_.begin() + static_cast<long>(i));
        continue;
      }
      ++i;
    }
  }
}

Status sendAll(int fd, const void* data, size_t size, const Deadline& deadline, const std::string& peer) {
  return sendRecv(fd, data, size, -1, nullptr, 0, deadline, peer, "");
}

Status recvAll(int fd, void* data, size_t size, const Deadline& deadline, const std::string& peer) {
  return sendRecv(-1, nullptr, 0, fd, data, size, deadline, "", peer);
}

Status sendRecv(int sendFd, const void* sendBuf, size_t sendSize, int recvFd, void* recvBuf, size_t recvSize,
                const Deadline& deadline, const std::string& sendPeer, const std::string& recvPeer) {
  size_t sent = 0;
  size_t got = 0;
  const char* s = static_cast<const char*>(sendBuf);
  char* r = static_cast<char*>(recvBuf);
  while (sent < sendSize || got < recvSize) {
    bool progressed = false;
    if (sent < sendSize) {
      ssize_t n = ::send(sendFd, s + sent, sendSize - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        progressed = true;
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return remoteError(strprintf("sending to %s: %s (connection closed by the remote peer?)", sendPeer.c_str(),
                                     std::strerror(errno)));
      }
    }
    if (got < recvSize) {
      ssize_t n = ::recv(recvFd, r + got, recvSize - got, MSG_DONTWAIT);
      if (n > 0) {
        got += static_cast<size_t>(n);
        progressed = true;
      } else if (n == 0) {
        return remoteError(strprintf("receiving from %s: connection closed by the remote peer after %zu of %zu bytes",
                                     recvPeer.c_str(), got, recvSize));
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return remoteError(strprintf("receiving from %s: %s", recvPeer.c_str(), std::strerror(errno)));
      }
    }
    if (progressed) continue;
    WEFT_ASSIGN_OR_RETURN(int ms, deadline.sliceMs());
    pollfd fds[2];
    nfds_t n = 0;
    if (sent < sendSize) fds[n++] = {sendFd, POLLOUT, 0};
    if (got < recvSize) fds[n++] = {recvFd, POLLIN, 0};
    if (::poll(fds, n, ms) < 0 && errno != EINTR) return errnoError("poll", errno);
  }
  return Status::ok();
}

uint64_t randomMagic() {
  uint64_t v = 0;
  while (getrandom(&v, sizeof(v), 0) != static_cast<ssize_t>(sizeof(v))) {
  }
  return v;
}

}  // namespace weft::runtime
