#include "bench/net_socket/roles.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "bench/common/processes.h"
#include "core/plugin/net_loader.h"

namespace weft::bench {
namespace {

using Clock = std::chrono::steady_clock;

void check(const Status& s, const char* what) {
  if (!s.isOk()) throw std::runtime_error(std::string(what) + ": " + s.message());
}

std::unique_ptr<plugin::NetInstance> openPlugin(const std::string& path) {
  auto p = plugin::loadNetPlugin(path, plugin::NetLoaderOptions{});
  if (!p.isOk()) throw std::runtime_error(p.status().message());
  auto n = plugin::initNet(*p, 1);
  if (!n.isOk()) throw std::runtime_error(n.status().message());
  return std::move(*n);
}

// The listening side of a connection: publishes its handle, then accepts.
void* acceptOne(plugin::NetInstance& n, int handleOut, void** listen) {
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  check(n.api().listen(n.ctx(), 0, handle, listen), "listen");
  writeAll(handleOut, handle, sizeof(handle));
  void* comm = nullptr;
  weft_net_device_handle_v11_t* dh = nullptr;
  while (comm == nullptr) check(n.api().accept(*listen, &comm, &dh), "accept");
  return comm;
}

void* connectOne(plugin::NetInstance& n, int handleIn) {
  char handle[WEFT_NET_HANDLE_MAXSIZE];
  readAll(handleIn, handle, sizeof(handle));
  void* comm = nullptr;
  weft_net_device_handle_v11_t* dh = nullptr;
  while (comm == nullptr) check(n.api().connect(n.ctx(), 0, handle, &comm, &dh), "connect");
  return comm;
}

// Tests until done, yielding the CPU between polls like NCCL's proxy thread when idle.
void waitDone(plugin::NetApi& api, void* req) {
  int done = 0;
  for (;;) {
    check(api.test(req, &done, nullptr), "test");
    if (done) return;
    sched_yield();
  }
}

// Keeps `window` requests posted until `total` have completed. Like NCCL's proxy thread, it
// tests the oldest request only, moves on when that one is done, and yields the CPU when it is
// not. post(i) returns request i.
template <typename Post>
void pipeline(plugin::NetApi& api, int total, int window, Post post, Clock::time_point* firstDone) {
  std::vector<void*> ring(static_cast<size_t>(window), nullptr);
  int posted = 0, completed = 0;
  for (; posted < window && posted < total; ++posted) ring[static_cast<size_t>(posted)] = post(posted);
  while (completed < total) {
    void*& oldest = ring[static_cast<size_t>(completed % window)];
    int done = 0;
    check(api.test(oldest, &done, nullptr), "test");
    if (!done) {
      sched_yield();
      continue;
    }
    if (completed++ == 0 && firstDone) *firstDone = Clock::now();
    oldest = posted < total ? post(posted++) : nullptr;
  }
}

}  // namespace

Measure pluginReceiver(const std::string& path, size_t msgBytes, int messages, int window, int handleOut) {
  auto n = openPlugin(path);
  void* listen = nullptr;
  void* recv = acceptOne(*n, handleOut, &listen);
  std::vector<char> buf(msgBytes * static_cast<size_t>(window));
  void* mh = nullptr;
  check(n->api().regMr(recv, buf.data(), buf.size(), WEFT_PTR_HOST, &mh), "regMr");
  Clock::time_point first;
  auto post = [&](int i) {
    void* data = buf.data() + msgBytes * static_cast<size_t>(i % window);
    size_t size = msgBytes;
    int tag = 0;
    void* req = nullptr;
    while (req == nullptr) check(n->api().irecv(recv, 1, &data, &size, &tag, &mh, nullptr, &req), "irecv");
    return req;
  };
  pipeline(n->api(), messages, window, post, &first);
  Measure m{std::chrono::duration<double>(Clock::now() - first).count(), msgBytes * static_cast<size_t>(messages - 1)};
  check(n->api().deregMr(recv, mh), "deregMr");
  check(n->api().closeRecv(recv), "closeRecv");
  check(n->api().closeListen(listen), "closeListen");
  return m;
}

void pluginSender(const std::string& path, size_t msgBytes, int messages, int window, int handleIn) {
  auto n = openPlugin(path);
  void* send = connectOne(*n, handleIn);
  std::vector<char> buf(msgBytes * static_cast<size_t>(window), 'x');
  void* mh = nullptr;
  check(n->api().regMr(send, buf.data(), buf.size(), WEFT_PTR_HOST, &mh), "regMr");
  auto post = [&](int i) {
    void* req = nullptr;
    while (req == nullptr) {
      check(n->api().isend(send, buf.data() + msgBytes * static_cast<size_t>(i % window), msgBytes, 0, mh, nullptr, &req),
            "isend");
    }
    return req;
  };
  pipeline(n->api(), messages, window, post, nullptr);
  check(n->api().deregMr(send, mh), "deregMr");
  check(n->api().closeSend(send), "closeSend");
}

Measure pluginPingInitiator(const std::string& path, size_t bytes, int iters, int handleIn, int handleOut) {
  auto n = openPlugin(path);
  void* listen = nullptr;
  void* send = connectOne(*n, handleIn);
  void* recv = acceptOne(*n, handleOut, &listen);
  std::vector<char> out(bytes, 'p'), in(bytes);
  auto roundTrip = [&] {
    void *s = nullptr, *r = nullptr, *data = in.data();
    size_t size = bytes;
    int tag = 0;
    while (r == nullptr) check(n->api().irecv(recv, 1, &data, &size, &tag, nullptr, nullptr, &r), "irecv");
    while (s == nullptr) check(n->api().isend(send, out.data(), bytes, 0, nullptr, nullptr, &s), "isend");
    waitDone(n->api(), s);
    waitDone(n->api(), r);
  };
  for (int i = 0; i < iters / 10; ++i) roundTrip();  // warm-up
  auto start = Clock::now();
  for (int i = 0; i < iters; ++i) roundTrip();
  Measure m{std::chrono::duration<double>(Clock::now() - start).count(), static_cast<size_t>(iters)};
  check(n->api().closeSend(send), "closeSend");
  check(n->api().closeRecv(recv), "closeRecv");
  check(n->api().closeListen(listen), "closeListen");
  return m;
}

void pluginPingResponder(const std::string& path, size_t bytes, int iters, int handleIn, int handleOut) {
  auto n = openPlugin(path);
  void* listen = nullptr;
  void* recv = acceptOne(*n, handleOut, &listen);
  void* send = connectOne(*n, handleIn);
  std::vector<char> buf(bytes);
  int total = iters + iters / 10;
  for (int i = 0; i < total; ++i) {
    void *s = nullptr, *r = nullptr, *data = buf.data();
    size_t size = bytes;
    int tag = 0;
    while (r == nullptr) check(n->api().irecv(recv, 1, &data, &size, &tag, nullptr, nullptr, &r), "irecv");
    waitDone(n->api(), r);
    while (s == nullptr) check(n->api().isend(send, buf.data(), bytes, 0, nullptr, nullptr, &s), "isend");
    waitDone(n->api(), s);
  }
  check(n->api().closeSend(send), "closeSend");
  check(n->api().closeRecv(recv), "closeRecv");
  check(n->api().closeListen(listen), "closeListen");
}

namespace {
void sendAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::send(fd, p, n, 0);
    if (r <= 0) throw std::runtime_error("tcp send failed");
    p += r;
    n -= static_cast<size_t>(r);
  }
}
void recvAll(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) throw std::runtime_error("tcp recv failed");
    p += r;
    n -= static_cast<size_t>(r);
  }
}
void noDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}
}  // namespace

Measure tcpPingInitiator(int port, size_t bytes, int iters) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) throw std::runtime_error("tcp connect failed");
  noDelay(fd);
  std::vector<char> buf(bytes, 'p');
  for (int i = 0; i < iters / 10; ++i) sendAll(fd, buf.data(), bytes), recvAll(fd, buf.data(), bytes);
  auto start = Clock::now();
  for (int i = 0; i < iters; ++i) sendAll(fd, buf.data(), bytes), recvAll(fd, buf.data(), bytes);
  Measure m{std::chrono::duration<double>(Clock::now() - start).count(), static_cast<size_t>(iters)};
  close(fd);
  return m;
}

void tcpPingResponder(int listenFd, size_t bytes, int iters) {
  int fd = ::accept(listenFd, nullptr, nullptr);
  if (fd < 0) throw std::runtime_error("tcp accept failed");
  noDelay(fd);
  std::vector<char> buf(bytes);
  int total = iters + iters / 10;
  for (int i = 0; i < total; ++i) recvAll(fd, buf.data(), bytes), sendAll(fd, buf.data(), bytes);
  close(fd);
}

}  // namespace weft::bench
