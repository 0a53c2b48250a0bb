// Typed setting values and their parsers, with NCCL's value syntax and quirks. Modules read
// these structures from Settings' typed getters and never parse setting strings themselves.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/config/table.h"

namespace weft::config {

// ---- integers --------------------------------------------------------------------------------

// strtoll(…, 0) over the whole (trimmed) text: 16, 0x10 and 020 are all sixteen.
Result<int64_t> parseInteger(std::string_view text);

// ---- path levels -----------------------------------------------------------------------------

// NCCL's path-type names, indexed by value (LOC=0 … SYS=9); NCCL_P2P_LEVEL and
// NCCL_NET_GDR_LEVEL accept LOC…SYS (upper case, as NCCL compares with strcmp) or the old
// integer levels {0:LOC, 1:PIX, 2:PXB, 3:PHB, 4:SYS, 5:SYS}, larger integers meaning SYS.
std::optional<int> parsePathLevel(std::string_view text);
const char* pathLevelName(int level);  // "PXB"; "?" when out of range

// ---- interface / HCA lists -------------------------------------------------------------------

struct IfItem {
  std::string name;  // a prefix, or the exact name when IfList::exact
  int port = -1;     // -1: any port (NCCL_IB_HCA=mlx5_0:1 names port 1)
};

// NCCL_SOCKET_IFNAME / NCCL_IB_HCA: "[^][=]name[:port],…". '^' excludes the listed names, '='
// compares whole names instead of prefixes; both apply to the whole list and '^' comes first.
struct IfList {
  bool exclude = false;
  bool exact = false;
  std::vector<IfItem> items;

  bool empty() const { return items.empty(); }
  // NCCL's matchIfList, '^' included: an empty list matches every interface.
  bool matches(std::string_view name, int port = -1) const;
};
Result<IfList> parseIfList(std::string_view text);

// ---- NCCL_ALGO / NCCL_PROTO ------------------------------------------------------------------

enum class Func : int { kBroadcast, kReduce, kAllGather, kReduceScatter, kAllReduce, kSendRecv };
enum class Algo : int { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
enum class Proto : int { kLL, kLL128, kSimple };
inline constexpr int kNumFuncs = 6;
inline constexpr int kNumAlgos = 7;
inline constexpr int kNumProtos = 3;

const char* funcName(Func f);    // "AllReduce"
const char* algoName(Algo a);    // "Ring"
const char* protoName(Proto p);  // "LL128"

// "[^]list[;func:[^]list]…", names case-insensitive. The first section may omit the function and
// then applies to every function; later sections replace the list of their function. '^' selects
// everything but the listed names. Example: "ring,tree;allreduce:^tree".
struct Selection {
  // Per function, bit i set = item i (Algo or Proto value) enabled; nullopt where the value
  // says nothing about the function, so NCCL's default applies.
  std::array<std::optional<uint32_t>, kNumFuncs> perFunc{};

  bool empty() const;  // the setting is unset
  // Whether item `i` may be used for `f`; `byDefault` where the value says nothing about f.
  bool allows(Func f, int i, bool byDefault = true) const;
};
Result<Selection> parseAlgoSelection(std::string_view text);
Result<Selection> parseProtoSelection(std::string_view text);

// ---- enums -----------------------------------------------------------------------------------

// NCCL_NETDEVS_POLICY: AUTO, ALL or MAX:n (case-insensitive, n > 0).
struct NetDevsPolicy {
  enum class Kind { kAuto, kAll, kMax };
  Kind kind = Kind::kAuto;
  int max = 0;  // kMax only
};
Result<NetDevsPolicy> parseNetDevsPolicy(std::string_view text);

// WEFT_NET_FALLBACK.
enum class NetFallback { kAllow, kDeny };

// Comma list, empty items dropped (NCCL tokenizes with strtok).
std::vector<std::string> parseNameList(std::string_view text);

// ---- validation ------------------------------------------------------------------------------

// Checks `text` against def's type and range. The error message says what is wrong and what is
// expected, without naming where the value came from (the caller adds that).
Status validateValue(const SettingDef& def, std::string_view text);
// validateValue, except that "" (the default) is always accepted, with the error phrased for a user: "WHERE: KEY: bad value "V": why; expected
// FORM". `key` is the name as the user wrote it, `where` the source ("env", "weft.yaml:3:16").
Status checkValue(const SettingDef& def, std::string_view key, std::string_view value,
                  std::string_view where);

}  // namespace weft::config
