#include "plugins/net-ofi/wire.h"

#include <bit>

namespace weft::ofi {

std::optional<std::string> helloProblem(const Hello& h, size_t receivedBytes, HelloKind expected,
                                        uint64_t token, std::optional<uint64_t> connId) {
  const size_t header = offsetof(Hello, addr);
  if (receivedBytes < header) return "a " + std::to_string(receivedBytes) + "-byte message is not a weft hello";
  if (h.magic != kHelloMagic) return std::string("not a weft hello (wrong magic)");
  if (h.version != kWireVersion) return "wire version " + std::to_string(h.version) + ", expected " + std::to_string(kWireVersion);
  if (h.kind != expected) return std::string("unexpected hello kind");
  if (h.addrLen == 0 || h.addrLen > sizeof(h.addr) || receivedBytes < header + h.addrLen) {
    return "bad address length " + std::to_string(h.addrLen);
  }
  if (h.token != token) return std::string("wrong token (not for this listener)");
  if (connId && h.connId != *connId) return std::string("answer for another connection");
  return std::nullopt;
}

std::optional<TagLayout> TagLayout::fromFormat(uint64_t memTagFormat) {
  TagLayout t;
  t.bits = memTagFormat == 0 ? 64 : 64 - std::countl_zero(memTagFormat);
  // 32 bits of user tag, 1 control bit, and at least 8 bits of key.
  if (t.bits < 41) return std::nullopt;
  int keyBits = t.bits - 33;
  t.keyMask = ((uint64_t{1} << keyBits) - 1) << 32;
  return t;
}

}  // namespace weft::ofi
