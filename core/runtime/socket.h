// TCP sockets of the bootstrap: addresses, listening, connecting with NCCL's handshake (magic,
// then socket type), accepting while dropping strangers, and sends/receives that never block
// past a deadline or an abort flag.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace weft::runtime {

// NCCL's socket types (the 4 bytes after the magic in every handshake).
enum class SocketType : uint32_t { kBootstrap = 1, kProxy = 2, kNetSocket = 3, kNetIb = 4, kRas = 5 };

// An IPv4 or IPv6 address with port, in the 28 bytes NCCL's ncclSocketAddress holds.
struct SockAddr {
  sockaddr_in6 raw{};  // large enough for both families; sin_family says which

  int family() const { return reinterpret_cast<const sockaddr*>(&raw)->sa_family; }
  socklen_t length() const { return family() == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6); }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&raw); }
  sockaddr* get() { return reinterpret_cast<sockaddr*>(&raw); }
  int port() const;
  void setPort(int port);
  // "10.0.0.1<5000>" (NCCL's form in log lines) or "[fe80::1]<5000>".
  std::string str() const;
};
static_assert(sizeof(SockAddr) == 28, "NCCL's ncclSocketAddress is 28 bytes");

// "host:port", "[v6]:port" or "name:port" (resolved) -> address. NCCL_COMM_ID's syntax.
Result<SockAddr> parseHostPort(const std::string& text);

// When a wait must end: a point in time, and an abort flag checked at least every 100 ms.
struct Deadline {
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* abort = nullptr;
  std::string what;  // "waiting for the bootstrap root" — named in the timeout error

  static Deadline in(std::chrono::milliseconds d, const std::atomic<bool>* abort, std::string what);
  static Deadline never(const std::atomic<bool>* abort, std::string what);
  // Milliseconds to wait in one poll() (at most 100, so the abort flag is seen), or an error
  // when the time is up or the abort flag is set.
  Result<int> sliceMs() const;
};

// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

// A listening socket. accept() returns the next connection that sends the right magic and type;
// connections still sending their handshake stay pending for the next call (two peers that
// connect at once are both served), strangers are dropped.
class Listener {
 public:
  // Bound to `addr` (port 0: any free port); `bound` receives the address with the port.
  static Result<Listener> open(const SockAddr& addr, SockAddr* bound);
  Listener() = default;
  Listener(Listener&&) noexcept = default;
  Listener& operator=(Listener&&) noexcept = default;

  // A connection with a wrong magic or that closes early is dropped with one INFO line (a
  // stranger, or another job); the right magic with a wrong type is an error, as in NCCL. A
  // connection silent for 30 s is dropped.
  Result<Fd> accept(uint64_t magic, SocketType type, const Deadline& deadline);
  bool valid() const { return fd_.valid(); }

 private:
  struct Pending {
    Fd fd;
    char handshake[12] = {};  // magic (8 bytes), then type (4)
    size_t got = 0;
    std::chrono::steady_clock::time_point since;
  };
  Fd fd_;
  std::vector<std::unique_ptr<Pending>> pending_;
};

// Connects to `to` and sends the handshake. Retries refused or unreachable connections every
// 100 ms until the deadline (the peer may not be listening yet), as NCCL's retry loop.
Result<Fd> connectTo(const SockAddr& to, uint64_t magic, SocketType type, const Deadline& deadline);

// Sends or receives exactly `size` bytes. A closed connection is a remote error naming `peer`.
Status sendAll(int fd, const void* data, size_t size, const Deadline& deadline, const std::string& peer);
Status recvAll(int fd, void* data, size_t size, const Deadline& deadline, const std::string& peer);

// Sends `sendBuf` and receives `recvBuf` on two sockets at the same time (a ring step), so that
// large messages never deadlock on full kernel buffers.
Status sendRecv(int sendFd, const void* sendBuf, size_t sendSize, int recvFd, void* recvBuf, size_t recvSize,
                const Deadline& deadline, const std::string& sendPeer, const std::string& recvPeer);

// 8 random bytes from the kernel (a job's magic).
uint64_t randomMagic();

}  // namespace weft::runtime
