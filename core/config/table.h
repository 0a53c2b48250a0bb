// The one declarative table of every setting weft reads: name, older names, type, default,
// allowed values, one-line doc and the module that reads it. Environment, YAML policy and NCCL
// conf files all feed it; `weft info --config` and docs/settings.md are printed from it.
//
// Names. A setting is named as in the environment: `NCCL_*` for NCCL's own variables (same
// meaning, syntax and default as NCCL 2.28) and `WEFT_*` for weft's additions. In a YAML policy
// the prefix may be left out: `MAX_NCHANNELS` is NCCL_MAX_NCHANNELS and `NET_FALLBACK` is
// WEFT_NET_FALLBACK. No two settings share a name once the prefix is removed.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::config {

enum class Type {
  kInt,            // strtoll(…, 0): decimal, 0x hex, 0 octal
  kString,         // free text (paths, names)
  kPathLevel,      // LOC…SYS names or NCCL's old integers 0-5
  kEnum,           // one word of SettingDef::choices
  kList,           // comma list of names (NCCL_NET_PLUGIN)
  kIfList,         // [^][=]name[:port],… (NCCL_SOCKET_IFNAME, NCCL_IB_HCA)
  kAlgoList,       // [^]algo,…[;func:[^]algo,…]… (NCCL_ALGO)
  kProtoList,      // [^]proto,…[;func:[^]proto,…]… (NCCL_PROTO)
  kNetDevsPolicy,  // AUTO, ALL or MAX:n
  kSubsysList,     // [^]subsystem,… (NCCL_DEBUG_SUBSYS)
};

// Where a setting may come from.
enum class Scope {
  kAnywhere,  // environment, YAML policy, conf files
  kEnvOnly,   // the environment only: it chooses which files are read
};

// Integers: the accepted range, and whether -2 ("auto", NCCL's "not set") is accepted too.
struct IntRange {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  bool autoValue = false;
};

// One row of the table.
struct SettingDef {
  std::string_view name{};                  // NCCL_CROSS_NIC, WEFT_NET_FALLBACK
  std::vector<std::string_view> aliases{};  // older names, lower precedence (NCCL_MIN_NRINGS)
  Type type = Type::kString;
  std::string_view defaultValue{};          // as NCCL would print it; "" means unset
  std::string_view doc{};                   // one line
  std::string_view module{};                // which part of weft reads it
  IntRange range{};                       // kInt only
  std::vector<std::string_view> choices{};  // kEnum only
  bool caseSensitive = false;             // kEnum: NCCL compares with strcmp
  Scope scope = Scope::kAnywhere;
};

const std::vector<SettingDef>& table();

// The row for `name`: its full name, an older name, or either without its NCCL_/WEFT_ prefix
// (the YAML spelling). nullptr when there is none.
const SettingDef* findDef(std::string_view name);
// The row for an environment variable: full names and older names only, exact case.
const SettingDef* findEnvDef(std::string_view name);
// Position of `def` in table().
size_t defIndex(const SettingDef& def);

// `name` without its NCCL_ or WEFT_ prefix: the short YAML key.
std::string_view shortName(std::string_view name);
// True when `name` is one of def's older names (in any accepted spelling).
bool isAliasOf(const SettingDef& def, std::string_view name);

// The closest known name to `unknown` in the spelling family of `unknown` (full name when it
// has a prefix, short YAML key otherwise), when it is close enough to be a likely misspelling.
std::optional<std::string> suggestName(std::string_view unknown);

// What a value must look like, for error messages and docs ("an integer 0-2").
std::string expectedForm(const SettingDef& def);
// Short type name for tables ("integer", "path type", …).
std::string_view typeName(Type type);

}  // namespace weft::config
