// Which GID a port's queue pairs use. On InfiniBand the LID routes and GID 0 (the port GID) is
// only carried along. On RoCE the GID is the address: NCCL_IB_GID_INDEX names one, else the
// first valid entry of the RoCE version NCCL_IB_ROCE_VERSION_NUM asks for (2 by default: UDP
// encapsulated, routable) whose address is of family NCCL_IB_ADDR_FAMILY (IPv4 by default,
// i.e. an IPv4-mapped ::ffff:a.b.c.d GID), as NCCL chooses.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::ib {

enum class GidType { kIb, kRoceV1, kRoceV2 };

struct GidEntry {
  uint32_t index;
  GidType type;
  std::array<uint8_t, 16> raw;
};

struct GidPreference {
  bool ethernet = false;  // the port's link layer is Ethernet (RoCE)
  int index = -1;         // NCCL_IB_GID_INDEX
  int roceVersion = 2;    // NCCL_IB_ROCE_VERSION_NUM
  int family = 0;         // AF_INET or AF_INET6 (NCCL_IB_ADDR_FAMILY)
};

// An all-zero GID is an empty table slot.
bool gidIsZero(const std::array<uint8_t, 16>& gid);
// ::ffff:a.b.c.d: a RoCE GID that carries an IPv4 address.
bool gidIsIpv4Mapped(const std::array<uint8_t, 16>& gid);
// fe80::/10, the link-local IPv6 GIDs every RoCE port has: not routable.
bool gidIsLinkLocal(const std::array<uint8_t, 16>& gid);

// The GID index to use among `table` (the port's valid entries, any order), or nullopt with
// `*why` set. On RoCE without an explicit index, in order: the requested version and family;
// the requested version, any routable family; any version and the requested family. The
// explicit index must be in the table.
std::optional<uint32_t> chooseGid(const std::vector<GidEntry>& table, const GidPreference& want, std::string* why);

// "fe80::1" style text for logs (no zero compression, which is all a log line needs).
std::string gidToString(const std::array<uint8_t, 16>& gid);

}  // namespace weft::ib
