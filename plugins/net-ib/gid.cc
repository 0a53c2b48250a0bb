#include "plugins/net-ib/gid.h"

#include <sys/socket.h>

#include <cstdio>
#include <functional>

namespace weft::ib {
namespace {

int familyOf(const std::array<uint8_t, 16>& gid) { return gidIsIpv4Mapped(gid) ? AF_INET : AF_INET6; }

GidType roceType(int version) { return version == 1 ? GidType::kRoceV1 : GidType::kRoceV2; }

std::optional<uint32_t> firstWhere(const std::vector<GidEntry>& table, const std::function<bool(const GidEntry&)>& ok) {
  const GidEntry* best = nullptr;
  for (const GidEntry& e : table)
    if (!gidIsZero(e.raw) && ok(e) && (best == nullptr || e.index < best->index)) best = &e;
  return best ? std::optional<uint32_t>(best->index) : std::nullopt;
}

}  // namespace

bool gidIsZero(const std::array<uint8_t, 16>& gid) {
  for (uint8_t b : gid)
    if (b != 0) return false;
  return true;
}

bool gidIsIpv4Mapped(const std::array<uint8_t, 16>& gid) {
  for (int i = 0; i < 10; ++i)
    if (gid[i] != 0) return false;
  return gid[10] == 0xff && gid[11] == 0xff;
}

bool gidIsLinkLocal(const std::array<uint8_t, 16>& gid) { return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80; }

std::optional<uint32_t> chooseGid(const std::vector<GidEntry>& table, const GidPreference& want, std::string* why) {
  if (want.index >= 0) {
    for (const GidEntry& e : table)
      if (e.index == static_cast<uint32_t>(want.index) && !gidIsZero(e.raw)) return e.index;
    *why = "NCCL_IB_GID_INDEX=" + std::to_string(want.index) + " is not a valid GID of this port";
    return std::nullopt;
  }
  if (!want.ethernet) {
    // InfiniBand: GID 0 is the port GID, always present on an active port.
    if (auto i = firstWhere(table, [](const GidEntry& e) { return e.index == 0; })) return i;
    *why = "the port has no GID 0";
    return std::nullopt;
  }
  const GidType type = roceType(want.roceVersion);
  const int family = want.family == AF_INET6 ? AF_INET6 : AF_INET;
  auto routable = [](const GidEntry& e) { return !gidIsLinkLocal(e.raw); };
  if (auto i = firstWhere(table, [&](const GidEntry& e) { return e.type == type && familyOf(e.raw) == family && routable(e); })) return i;
  if (auto i = firstWhere(table, [&](const GidEntry& e) { return e.type == type && routable(e); })) return i;
  if (auto i = firstWhere(table, [&](const GidEntry& e) { return e.type != GidType::kIb && familyOf(e.raw) == family && routable(e); })) return i;
  *why = "no routable RoCEv" + std::to_string(want.roceVersion) + " GID (the port has " + std::to_string(table.size()) +
         " GID entries; set NCCL_IB_GID_INDEX to choose one)";
  return std::nullopt;
}

std::string gidToString(const std::array<uint8_t, 16>& gid) {
  char text[48];
  int n = 0;
  for (int i = 0; i < 16; i += 2)
    n += std::snprintf(text + n, sizeof(text) - static_cast<size_t>(n), i ? ":%x" : "%x", (gid[i] << 8) | gid[i + 1]);
  return text;
}

}  // namespace weft::ib
