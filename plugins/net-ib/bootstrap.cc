#include "plugins/net-ib/bootstrap.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "plugins/net-ib/hca_filter.h"
#include "plugins/net-ib/log.h"

namespace weft::ib {
namespace {

socklen_t lengthOf(const SockAddr& a) { return a.sa.sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6); }

}  // namespace

SockAddr bootstrapAddress() {
  SockAddr chosen{};
  chosen.in4.sin_family = AF_INET;
  chosen.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string problem;
  const char* spec = std::getenv("NCCL_SOCKET_IFNAME");
  std::optional<HcaFilter> filter = parseHcaFilter(spec ? spec : "", &problem);  // same syntax, no ports
  ifaddrs* all = nullptr;
  if (!filter || ::getifaddrs(&all) != 0) return chosen;
  for (ifaddrs* i = all; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || !(i->ifa_flags & IFF_UP)) continue;
    int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    bool loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    if (spec != nullptr && *spec != '\0' ? !filter->selects(i->ifa_name, 1) : (loopback || family != AF_INET)) continue;
    if (family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr)) continue;
    std::memcpy(&chosen, i->ifa_addr, family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    break;
  }
  ::freeifaddrs(all);
  return chosen;
}

std::string addressToString(const SockAddr& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (a.sa.sa_family == AF_INET) {
    inet_ntop(AF_INET, &a.in4.sin_addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(ntohs(a.in4.sin_port));
  }
  inet_ntop(AF_INET6, &a.in6.sin6_addr, host, sizeof(host));
  return "[" + std::string(host) + "]:" + std::to_string(ntohs(a.in6.sin6_port));
}

weft_result_t listenOn(SockAddr* addr, Fd* out) {
  Fd fd(::socket(addr->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return IB_FAIL(weftSystemError, "NET/IB: socket(): %s", std::strerror(errno));
  if (addr->sa.sa_family == AF_INET) addr->in4.sin_port = 0;
  else addr->in6.sin6_port = 0;
  socklen_t len = lengthOf(*addr);
  if (::bind(fd.get(), &addr->sa, len) != 0 || ::listen(fd.get(), SOMAXCONN) != 0 ||
      ::getsockname(fd.get(), &addr->sa, &len) != 0) {
    return IB_FAIL(weftSystemError, "NET/IB: listen on %s: %s", addressToString(*addr).c_str(), std::strerror(errno));
  }
  *out = std::move(fd);
  return weftSuccess;
}

weft_result_t connectTo(const SockAddr& addr, Fd* out) {
  Fd fd(::socket(addr.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return IB_FAIL(weftSystemError, "NET/IB: socket(): %s", std::strerror(errno));
  int one = 1;
  (void)setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // small messages, no Nagle
  if (::connect(fd.get(), &addr.sa, lengthOf(addr)) != 0 && errno != EINPROGRESS) {
    return IB_FAIL(weftRemoteError, "NET/IB: connect to %s: %s", addressToString(addr).c_str(), std::strerror(errno));
  }
  *out = std::move(fd);
  return weftSuccess;
}

weft_result_t sendSome(int fd, const uint8_t* data, size_t size, size_t* sent, bool* done, const char* what) {
  while (*sent < size) {
    ssize_t n = ::send(fd, data + *sent, size - *sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOTCONN)) break;
    if (n < 0) return IB_FAIL(weftRemoteError, "NET/IB: sending %s: %s", what, std::strerror(errno));
    *sent += static_cast<size_t>(n);
  }
  *done = *sent == size;
  return weftSuccess;
}

weft_result_t recvSome(int fd, uint8_t* data, size_t size, size_t* got, bool* done, const char* what) {
  while (*got < size) {
    ssize_t n = ::recv(fd, data + *got, size - *got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
    if (n == 0) return IB_FAIL(weftRemoteError, "NET/IB: receiving %s: the peer closed the connection", what);
    if (n < 0) return IB_FAIL(weftRemoteError, "NET/IB: receiving %s: %s", what, std::strerror(errno));
    *got += static_cast<size_t>(n);
  }
  *done = *got == size;
  return weftSuccess;
}

}  // namespace weft::ib
