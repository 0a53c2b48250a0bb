#include "plugins/net-socket/connect.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "plugins/net-socket/log.h"

namespace weft::socket {
namespace {

uint64_t random64() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen();
}

socklen_t addrLen(const SockAddr& a) {
  return a.sa.sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
}

void tuneSocket(int fd) {
  int one = 1;
  // Latency: headers and small messages must not wait for Nagle.
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Sends what it can of a socket's hello. Returns false on a hard error (logged by the caller).
bool sendHello(Connecting& c, size_t i, int& err) {
  const char* bytes = reinterpret_cast<const char*>(&c.hellos[i]);
  while (c.sent[i] < sizeof(Hello)) {
    ssize_t n = ::send(c.fds[i].get(), bytes + c.sent[i], sizeof(Hello) - c.sent[i], MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOTCONN) return true;
      err = errno;
      return false;
    }
    c.sent[i] += static_cast<size_t>(n);
  }
  return true;
}

weft_result_t startConnect(const Handle& h, const Config& config, Connecting** out) {
  auto c = std::make_unique<Connecting>();
  c->connId = random64();
  c->nSocks = config.nSocks;
  c->nThreads = config.nThreads;
  c->peer = addressToString(&h.addr.sa);
  for (int i = 0; i <= c->nSocks; ++i) {
    Fd fd(::socket(h.addr.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return SOCK_FAIL(weftSystemError, "NET/Socket: socket(): %s", std::strerror(errno));
    tuneSocket(fd.get());
    if (::connect(fd.get(), &h.addr.sa, addrLen(h.addr)) != 0 && errno != EINPROGRESS) {
      return SOCK_FAIL(weftRemoteError, "NET/Socket: connect to %s: %s", c->peer.c_str(), std::strerror(errno));
    }
    c->fds.push_back(std::move(fd));
    c->hellos.push_back(Hello{kHelloMagic, h.token, c->connId, kWireVersion, static_cast<uint32_t>(i),
                              static_cast<uint32_t>(c->nSocks), static_cast<uint32_t>(c->nThreads)});
    c->sent.push_back(0);
  }
  *out = c.release();
  return weftSuccess;
}

}  // namespace

weft_result_t connectStep(Handle* handle, const Config& config, SendComm** comm) {
  *comm = nullptr;
  if (handle->connecting == nullptr) {
    if (weft_result_t rc = startConnect(*handle, config, &handle->connecting); rc != weftSuccess) return rc;
  }
  Connecting& c = *handle->connecting;
  bool all = true;
  for (size_t i = 0; i < c.fds.size(); ++i) {
    if (c.sent[i] == sizeof(Hello)) continue;
    int soError = 0;
    socklen_t len = sizeof(soError);
    (void)getsockopt(c.fds[i].get(), SOL_SOCKET, SO_ERROR, &soError, &len);
    int err = soError;
    if (err == 0 && !sendHello(c, i, err)) soError = err;
    if (err != 0) {
      std::string peer = c.peer;
      abandonConnect(handle);
      return SOCK_FAIL(weftRemoteError, "NET/Socket: connect to %s: %s", peer.c_str(), std::strerror(err));
    }
    all = all && c.sent[i] == sizeof(Hello);
  }
  if (!all) return weftSuccess;
  std::vector<Fd> data;
  for (size_t i = 1; i < c.fds.size(); ++i) data.push_back(std::move(c.fds[i]));
  *comm = new SendComm(std::move(c.fds[0]), std::move(data), c.nThreads, c.peer);
  abandonConnect(handle);
  return weftSuccess;
}

void abandonConnect(Handle* handle) {
  delete handle->connecting;
  handle->connecting = nullptr;
}

weft_result_t Listener::open(const Interface& dev, Handle* handle, Listener** out) {
  Fd fd(::socket(dev.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return SOCK_FAIL(weftSystemError, "NET/Socket: socket(): %s", std::strerror(errno));
  SockAddr addr{};
  std::memcpy(&addr, &dev.addr, dev.addrLen);
  if (addr.sa.sa_family == AF_INET) addr.in4.sin_port = 0;
  else addr.in6.sin6_port = 0;
  socklen_t len = addrLen(addr);
  if (::bind(fd.get(), &addr.sa, len) != 0 || ::listen(fd.get(), SOMAXCONN) != 0 ||
      ::getsockname(fd.get(), &addr.sa, &len) != 0) {
    return SOCK_FAIL(weftSystemError, "NET/Socket: listen on %s (%s): %s", dev.name.c_str(),
                     addressToString(reinterpret_cast<const sockaddr*>(&dev.addr)).c_str(), std::strerror(errno));
  }
  uint64_t token = random64();
  std::memset(handle, 0, sizeof(Handle));
  handle->magic = kHandleMagic;
  handle->token = token;
  handle->addr = addr;
  handle->connecting = nullptr;
  *out = new Listener(std::move(fd), token);
  return weftSuccess;
}

void Listener::acceptPending() {
  for (;;) {
    SockAddr peer{};
    socklen_t len = sizeof(peer);
    int fd = ::accept4(fd_.get(), &peer.sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a connection reset before we got to it: nothing to do
    tuneSocket(fd);
    incoming_.push_back(Incoming{Fd(fd), {}, 0, addressToString(&peer.sa)});
  }
}

bool Listener::validHello(const Incoming& in) const {
  const Hello& h = in.hello;
  return h.magic == kHelloMagic && h.token == token_ && h.version == kWireVersion &&
         h.nSocks <= static_cast<uint32_t>(kMaxSockets) && h.index <= h.nSocks &&
         h.nThreads <= static_cast<uint32_t>(kMaxThreads);
}

void Listener::readHellos() {
  for (size_t i = 0; i < incoming_.size();) {
    Incoming& in = incoming_[i];
    ssize_t n = ::recv(in.fd.get(), reinterpret_cast<char*>(&in.hello) + in.got, sizeof(Hello) - in.got, MSG_DONTWAIT);
    bool wouldBlock = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    if (n > 0) in.got += static_cast<size_t>(n);
    bool complete = in.got == sizeof(Hello);
    if (wouldBlock || (n > 0 && !complete)) {
      ++i;
      continue;
    }
    if (!complete || !validHello(in)) {
      SOCK_WARN("NET/Socket: rejected a connection from %s: %s", in.peer.c_str(),
                !complete ? "closed before its hello" : "not a weft socket hello (wrong magic, token or version)");
      incoming_.erase(incoming_.begin() + static_cast<long>(i));
      continue;
    }
    Group& g = groups_[in.hello.connId];
    if (g.fds.empty()) g.fds.resize(in.hello.nSocks + 1);
    if (g.fds.size() != in.hello.nSocks + 1 || g.fds[in.hello.index].valid()) {
      SOCK_WARN("NET/Socket: rejected a connection from %s: inconsistent hello", in.peer.c_str());
    } else {
      g.fds[in.hello.index] = std::move(in.fd);
      g.nThreads = in.hello.nThreads;
      g.peer = in.peer;
      ++g.arrived;
    }
    incoming_.erase(incoming_.begin() + static_cast<long>(i));
  }
}

weft_result_t Listener::acceptStep(RecvComm** comm) {
  *comm = nullptr;
  acceptPending();
  readHellos();
  for (auto it = groups_.begin(); it != groups_.end(); ++it) {
    Group& g = it->second;
    if (g.arrived != static_cast<int>(g.fds.size())) continue;
    std::vector<Fd> data;
    for (size_t i = 1; i < g.fds.size(); ++i) data.push_back(std::move(g.fds[i]));
    *comm = new RecvComm(std::move(g.fds[0]), std::move(data), static_cast<int>(g.nThreads), g.peer);
    groups_.erase(it);
    return weftSuccess;
  }
  return weftSuccess;
}

}  // namespace weft::socket
