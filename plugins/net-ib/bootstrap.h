// The TCP side channel that sets an RC connection up: the listener's socket (its address goes
// in the handle) and, per connection, a non-blocking exchange of fixed-size messages. Verbs
// have no connection manager here (NCCL's IB transport does the same with its own sockets).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "plugins/common/fd.h"
#include "plugins/net-ib/wire.h"
#include "weft/weft.h"

namespace weft::ib {

using netplugin::Fd;

// The address the listener binds: the first up interface NCCL_SOCKET_IFNAME selects (same
// [^][=]name,… syntax), else the first up non-loopback IPv4 interface, else 127.0.0.1.
SockAddr bootstrapAddress();
std::string addressToString(const SockAddr& a);

// Opens a non-blocking listening socket on `addr` (port chosen by the kernel) and writes the
// bound address back.
weft_result_t listenOn(SockAddr* addr, Fd* out);
// Starts a non-blocking connection to `addr`.
weft_result_t connectTo(const SockAddr& addr, Fd* out);

// Moves `size` bytes without blocking: call again until *done. Failure (peer closed, reset)
// is logged with `what` and the peer's address.
weft_result_t sendSome(int fd, const uint8_t* data, size_t size, size_t* sent, bool* done, const char* what);
weft_result_t recvSome(int fd, uint8_t* data, size_t size, size_t* got, bool* done, const char* what);

}  // namespace weft::ib
