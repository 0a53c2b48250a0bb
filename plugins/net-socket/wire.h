// What travels between the two ends: the listen handle (through the host, up to 128 bytes), the
// hello each new TCP connection sends first, and the header before every message.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>

#include "weft/net.h"

namespace weft::socket {

inline constexpr uint64_t kHandleMagic = 0x5745465453434b31ULL;  // "WEFTSCK1"
inline constexpr uint64_t kHelloMagic = 0x5745465448454c4fULL;   // "WEFTHELO"
inline constexpr uint32_t kWireVersion = 1;

union SockAddr {
  sockaddr sa;
  sockaddr_in in4;
  sockaddr_in6 in6;
};

struct Connecting;  // connect()'s progress between calls (connect.h)

// The listen handle. `token` is random per listener: a connection that does not present it is
// rejected. connect() keeps its progress in `connecting`, because the host passes the same
// handle back on every call until the connection is made (as NCCL's own socket plugin does).
struct Handle {
  uint64_t magic;
  uint64_t token;
  SockAddr addr;
  Connecting* connecting;
};
static_assert(sizeof(Handle) <= WEFT_NET_HANDLE_MAXSIZE, "the handle must fit NCCL's 128 bytes");

// First bytes on every TCP connection of a comm: socket 0 is the control socket, 1…nSocks carry
// striped data. All sockets of one comm share `connId`.
struct Hello {
  uint64_t magic;
  uint64_t token;
  uint64_t connId;
  uint32_t version;
  uint32_t index;
  uint32_t nSocks;
  uint32_t nThreads;
};

// Before every message on the control socket. Small messages, and all messages of a comm
// without data sockets, follow it on the control socket.
struct MessageHeader {
  uint64_t size;
  int32_t tag;
  uint32_t magic;  // low half of kHelloMagic: a desynchronised stream is caught at once
};
inline constexpr uint32_t kHeaderMagic = static_cast<uint32_t>(kHelloMagic);

// Messages up to this size ride on the control socket even when data sockets exist: one
// writev beats waking a helper thread (NCCL_SOCKET_INLINE's default).
inline constexpr uint64_t kInlineBytes = 128;
// Below this, striping over several sockets costs more than it gains (NCCL_SOCKET_MIN_TASKSIZE).
inline constexpr uint64_t kMinChunkBytes = 64 * 1024;

// The byte range of a message that data socket `s` of `nSocks` carries (empty when s is past
// the last chunk). Both ends compute it the same way.
struct Range {
  uint64_t offset;
  uint64_t length;
};
inline Range stripeRange(uint64_t size, int s, int nSocks) {
  uint64_t chunk = (size + static_cast<uint64_t>(nSocks) - 1) / static_cast<uint64_t>(nSocks);
  if (chunk < kMinChunkBytes) chunk = kMinChunkBytes;
  uint64_t begin = chunk * static_cast<uint64_t>(s);
  if (begin >= size) return {size, 0};
  uint64_t end = begin + chunk < size ? begin + chunk : size;
  return {begin, end - begin};
}

}  // namespace weft::socket
