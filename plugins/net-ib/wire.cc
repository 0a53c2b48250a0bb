#include "plugins/net-ib/wire.h"

#include <infiniband/verbs.h>

#include <cstring>

namespace weft::ib {
namespace {

// Little-endian field writers and readers over a byte buffer.
template <typename T>
void put(uint8_t* p, size_t at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) p[at + i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
}
template <typename T>
T get(const uint8_t* p, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(p[at + i]) << (8 * i);
  return static_cast<T>(v);
}

// QpInfo offsets.
constexpr size_t kQMagic = 0, kQVersion = 4, kQToken = 8, kQQpn = 16, kQPsn = 20, kQLid = 24, kQLink = 26,
                 kQMtu = 27, kQPort = 28, kQGidIndex = 29, kQGid = 32, kQFifoAddr = 48, kQFifoRkey = 56;
static_assert(kQFifoRkey + 4 <= kQpInfoBytes);

}  // namespace

void encodeHandle(const Handle& h, void* out) {
  auto* p = static_cast<uint8_t*>(out);
  std::memset(p, 0, WEFT_NET_HANDLE_MAXSIZE);
  put<uint32_t>(p, 0, kHandleMagic);
  put<uint16_t>(p, 4, kWireVersion);
  const size_t a = kHandleAddrOffset;
  put<uint16_t>(p, a, static_cast<uint16_t>(h.addr.sa.sa_family));
  if (h.addr.sa.sa_family == AF_INET) {
    std::memcpy(p + a + 2, &h.addr.in4.sin_port, 2);
    std::memcpy(p + a + 4, &h.addr.in4.sin_addr, 4);
  } else {
    std::memcpy(p + a + 2, &h.addr.in6.sin6_port, 2);
    std::memcpy(p + a + 4, &h.addr.in6.sin6_addr, 16);
    put<uint32_t>(p, a + 20, h.addr.in6.sin6_scope_id);
  }
  put<uint64_t>(p, kHandleTokenOffset, h.token);
  storeConnecting(p, h.connecting);
}

void storeConnecting(void* handleBytes, Connecting* c) {
  std::memcpy(static_cast<uint8_t*>(handleBytes) + kHandleConnectingOffset, &c, sizeof(c));
}

std::optional<Handle> decodeHandle(const void* in, std::string* why) {
  const auto* p = static_cast<const uint8_t*>(in);
  if (get<uint32_t>(p, 0) != kHandleMagic) {
    *why = "not an IB plugin handle (wrong magic)";
    return std::nullopt;
  }
  if (uint16_t v = get<uint16_t>(p, 4); v != kWireVersion) {
    *why = "IB handle of wire version " + std::to_string(v) + ", expected " + std::to_string(kWireVersion);
    return std::nullopt;
  }
  Handle h;
  const size_t a = kHandleAddrOffset;
  uint16_t family = get<uint16_t>(p, a);
  if (family == AF_INET) {
    h.addr.in4.sin_family = AF_INET;
    std::memcpy(&h.addr.in4.sin_port, p + a + 2, 2);
    std::memcpy(&h.addr.in4.sin_addr, p + a + 4, 4);
  } else if (family == AF_INET6) {
    h.addr.in6.sin6_family = AF_INET6;
    std::memcpy(&h.addr.in6.sin6_port, p + a + 2, 2);
    std::memcpy(&h.addr.in6.sin6_addr, p + a + 4, 16);
    h.addr.in6.sin6_scope_id = get<uint32_t>(p, a + 20);
  } else {
    *why = "IB handle with address family " + std::to_string(family) + " (neither IPv4 nor IPv6)";
    return std::nullopt;
  }
  h.token = get<uint64_t>(p, kHandleTokenOffset);
  std::memcpy(&h.connecting, p + kHandleConnectingOffset, sizeof(h.connecting));
  return h;
}

void encodeQpInfo(const QpInfo& q, uint8_t (&out)[kQpInfoBytes]) {
  std::memset(out, 0, kQpInfoBytes);
  put<uint32_t>(out, kQMagic, kQpInfoMagic);
  put<uint16_t>(out, kQVersion, kWireVersion);
  put<uint64_t>(out, kQToken, q.token);
  put<uint32_t>(out, kQQpn, q.qpn);
  put<uint32_t>(out, kQPsn, q.psn);
  put<uint16_t>(out, kQLid, q.lid);
  out[kQLink] = q.linkLayer;
  out[kQMtu] = q.mtu;
  out[kQPort] = q.ibPort;
  out[kQGidIndex] = q.gidIndex;
  std::memcpy(out + kQGid, q.gid.data(), q.gid.size());
  put<uint64_t>(out, kQFifoAddr, q.fifoAddr);
  put<uint32_t>(out, kQFifoRkey, q.fifoRkey);
}

std::optional<QpInfo> decodeQpInfo(const uint8_t (&in)[kQpInfoBytes], std::string* why) {
  if (get<uint32_t>(in, kQMagic) != kQpInfoMagic) {
    *why = "not an IB queue pair description (wrong magic)";
    return std::nullopt;
  }
  if (uint16_t v = get<uint16_t>(in, kQVersion); v != kWireVersion) {
    *why = "queue pair description of wire version " + std::to_string(v);
    return std::nullopt;
  }
  QpInfo q;
  q.token = get<uint64_t>(in, kQToken);
  q.qpn = get<uint32_t>(in, kQQpn);
  q.psn = get<uint32_t>(in, kQPsn);
  q.lid = get<uint16_t>(in, kQLid);
  q.linkLayer = in[kQLink];
  q.mtu = in[kQMtu];
  q.ibPort = in[kQPort];
  q.gidIndex = in[kQGidIndex];
  std::memcpy(q.gid.data(), in + kQGid, q.gid.size());
  q.fifoAddr = get<uint64_t>(in, kQFifoAddr);
  q.fifoRkey = get<uint32_t>(in, kQFifoRkey);
  if (q.psn > 0xffffff || q.qpn > 0xffffff) {
    *why = "queue pair number or PSN wider than 24 bits";
    return std::nullopt;
  }
  if (q.mtu < IBV_MTU_256 || q.mtu > IBV_MTU_4096) {
    *why = "MTU code " + std::to_string(q.mtu) + " is not an ibv_mtu";
    return std::nullopt;
  }
  if (q.linkLayer != IBV_LINK_LAYER_INFINIBAND && q.linkLayer != IBV_LINK_LAYER_ETHERNET) {
    *why = "unknown link layer " + std::to_string(q.linkLayer);
    return std::nullopt;
  }
  return q;
}

}  // namespace weft::ib
