// What travels between the two ends of an IB connection. The listen handle goes through the
// host (at most 128 bytes): the listener's bootstrap TCP address and a random token. connect()
// opens a TCP connection to that address and sends its queue pair's description (QpInfo); the
// acceptor answers with its own, and both move their RC queue pairs to ready-to-send. Every
// field crosses the wire in a fixed little-endian layout written byte by byte, so the ends need
// not share a compiler or an architecture.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "weft/net.h"

namespace weft::ib {

inline constexpr uint32_t kHandleMagic = 0x42494657;  // "WFIB"
inline constexpr uint32_t kQpInfoMagic = 0x51494657;  // "WFIQ"
inline constexpr uint16_t kWireVersion = 1;

union SockAddr {
  sockaddr sa;
  sockaddr_in in4;
  sockaddr_in6 in6;
};

struct Connecting;  // connect()'s progress between calls

// The listen handle, decoded. `connecting` lives in the host's copy of the handle: the host
// passes the same bytes back on every connect() call until it returns a comm, as NCCL's own IB
// transport keeps its connection stage there.
struct Handle {
  SockAddr addr{};
  uint64_t token = 0;
  Connecting* connecting = nullptr;
};

// Byte offsets inside the 128-byte handle.
inline constexpr size_t kHandleAddrOffset = 8;         // family(2) port(2, network order) address(16) scope(4)
inline constexpr size_t kHandleTokenOffset = 32;
inline constexpr size_t kHandleConnectingOffset = 40;  // a pointer, meaningful only to the connector
inline constexpr size_t kHandleBytes = 48;
static_assert(kHandleBytes <= WEFT_NET_HANDLE_MAXSIZE, "the IB handle must fit NCCL's 128 bytes");

// Writes `h` into `out` (WEFT_NET_HANDLE_MAXSIZE bytes; the rest zeroed).
void encodeHandle(const Handle& h, void* out);
// Reads a handle; nullopt with `*why` set when the bytes are not an IB plugin handle of this
// wire version, or carry an address that is neither IPv4 nor IPv6.
std::optional<Handle> decodeHandle(const void* in, std::string* why);
// Updates only the connector's progress pointer inside the host's handle bytes.
void storeConnecting(void* handleBytes, Connecting* c);

// One side's queue pair, as the other side needs it to reach it and to write into its FIFO.
struct QpInfo {
  uint64_t token = 0;        // the listener's token: a stranger's connection is refused
  uint32_t qpn = 0;          // queue pair number
  uint32_t psn = 0;          // first packet sequence number (24 bits)
  uint16_t lid = 0;          // InfiniBand local id (0 on RoCE)
  uint8_t linkLayer = 0;     // IBV_LINK_LAYER_INFINIBAND or _ETHERNET
  uint8_t mtu = 0;           // enum ibv_mtu
  uint8_t ibPort = 0;
  uint8_t gidIndex = 0;
  std::array<uint8_t, 16> gid{};
  uint64_t fifoAddr = 0;     // the receiver's FIFO of posted receives (connector: 0)
  uint32_t fifoRkey = 0;
};
inline constexpr size_t kQpInfoBytes = 64;

void encodeQpInfo(const QpInfo& q, uint8_t (&out)[kQpInfoBytes]);
// nullopt with `*why` set for a wrong magic or version, a PSN wider than 24 bits, an MTU that
// is not an ibv_mtu, or an unknown link layer.
std::optional<QpInfo> decodeQpInfo(const uint8_t (&in)[kQpInfoBytes], std::string* why);

}  // namespace weft::ib
