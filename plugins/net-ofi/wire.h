// What travels between the two ends of an OFI connection: the listen handle (through the host,
// at most 128 bytes), the hellos the two endpoints exchange to set a connection up, and the
// layout of the 64-bit tags that keep control messages, data and strangers apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "weft/net.h"

namespace weft::ofi {

inline constexpr uint32_t kHandleMagic = 0x49464f57;  // "WOFI"
inline constexpr uint32_t kHelloMagic = 0x4c454857;   // "WHEL"
inline constexpr uint16_t kWireVersion = 1;

struct Connecting;  // connect()'s progress between calls (connect.h)

// The listen handle: the listener endpoint's provider address and a random token that every
// connection request must present. connect() keeps its progress in `connecting`, because the
// host passes the same handle back on every call until the connection is made.
struct Handle {
  uint32_t magic;
  uint16_t version;
  uint16_t addrLen;
  uint64_t token;
  Connecting* connecting;
  uint8_t addr[WEFT_NET_HANDLE_MAXSIZE - 24];
};
static_assert(sizeof(Handle) == WEFT_NET_HANDLE_MAXSIZE, "the handle must fill NCCL's 128 bytes exactly");
inline constexpr size_t kMaxHandleAddr = sizeof(Handle::addr);

enum class HelloKind : uint16_t { kConnect = 1, kAccept = 2 };

// The first message of a connection, each way: the connector's request (its endpoint's address,
// the listener's token, a connection id and the key its data tags carry) and the acceptor's
// answer (the receiving endpoint's address, the same token and id).
struct Hello {
  uint32_t magic;
  uint16_t version;
  HelloKind kind;
  uint64_t token;
  uint64_t connId;
  uint32_t dataKey;
  uint32_t addrLen;
  uint8_t addr[256];  // EFA 32 bytes, sockaddr_in6 28: room for any provider's address
};

// Why a received hello is not the one expected, or nullopt when it is valid: right size, magic,
// version and kind, the listener's token and, for an answer, the connection id asked for.
std::optional<std::string> helloProblem(const Hello& h, size_t receivedBytes, HelloKind expected,
                                        uint64_t token, std::optional<uint64_t> connId);

// The tag bits of one provider, from its mem_tag_format: the user's 32-bit tag in the low
// bits, a per-connection key above it, and the top bit for control messages. A stranger's
// message (or one for an older connection on a reused address) then matches nothing.
struct TagLayout {
  int bits = 64;
  uint64_t keyMask = 0;  // the key's bits, shifted into place

  // nullopt when the provider has too few tag bits for a 32-bit tag, a key and a control bit.
  static std::optional<TagLayout> fromFormat(uint64_t memTagFormat);
  uint64_t controlBit() const { return uint64_t{1} << (bits - 1); }
  uint64_t data(uint32_t key, int tag) const {
    return ((uint64_t{key} << 32) & keyMask) | static_cast<uint32_t>(tag);
  }
  uint64_t control(uint64_t what) const { return controlBit() | what; }
};

// Control tags (below the control bit).
inline constexpr uint64_t kConnectTag = 1;  // connection requests, to a listener
inline constexpr uint64_t kAcceptTag = 2;   // answers, to a connector
inline constexpr uint64_t kProbeTag = 3;    // liveness probes, between connected comms

}  // namespace weft::ofi
