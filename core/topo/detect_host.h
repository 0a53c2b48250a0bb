// The host hash NCCL puts in every <cpu host_hash> (getHostHash): it tells the hosts of a fused
// topology apart, so weft must compute the same number NCCL does on the same machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace weft::topo {

// NCCL's string hash (DJB2a: h = h * 33 ^ c, from 5381). Characters are `char`, as in NCCL: a
// byte above 0x7f is sign-extended where char is signed (x86), not where it is unsigned (arm64).
uint64_t ncclStringHash(std::string_view text);

// The string NCCL hashes: NCCL_HOSTID when set (non-null `hostId`), else the full host name
// followed by the first word of /proc/sys/kernel/random/boot_id (just the host name when that
// file cannot be read). `bootIdPath` is a parameter for tests.
std::string hostIdentity(const std::string* hostId, const std::string& bootIdPath = "/proc/sys/kernel/random/boot_id");

// ncclStringHash(hostIdentity(...)).
uint64_t hostHash(const std::string* hostId, const std::string& bootIdPath = "/proc/sys/kernel/random/boot_id");

// NCCL's "%#lx" of a host hash: "0x…", or "0" for zero.
std::string formatHostHash(uint64_t hash);

}  // namespace weft::topo
