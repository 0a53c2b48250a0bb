// Settings: every NCCL_* variable weft reads, from one declarative table, with the value's
// source. A Settings object is built once (per communicator or per tool run) and passed
// explicitly to whoever needs it; nothing reads getenv directly.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace weft::config {

enum class Type {
  kInt,        // strtoll(…, 0): decimal, 0x hex, 0 octal
  kString,
  kPathLevel,  // LOC…SYS names or NCCL's old integers 0-5
};

// One row of the table.
struct SettingDef {
  std::string_view name;           // NCCL_CROSS_NIC
  std::vector<std::string_view> aliases;  // older names, lower precedence (NCCL_MIN_NRINGS)
  Type type;
  std::string_view defaultValue;   // as NCCL would print it; "" means unset
  std::string_view doc;            // one line
  std::string_view module;         // which part of weft reads it
};

const std::vector<SettingDef>& table();
const SettingDef* findDef(std::string_view name);  // accepts the name with or without NCCL_

enum class Source { kDefault, kEnv, kYaml, kYamlProfile, kConfFile, kEtcConf, kOverride };
const char* sourceName(Source source);

struct Value {
  std::string text;
  Source source = Source::kDefault;
  std::string where;  // "env", "file:line", … for provenance
};

class Settings {
 public:
  // Built-in defaults only.
  Settings() = default;

  // The process environment only (no files). Unknown NCCL_* names are ignored here.
  static Settings fromEnvironment();

  // Explicit values, as if from the environment (tests, the offline tool's --set).
  Status set(std::string_view name, std::string value, Source source = Source::kOverride,
             std::string where = "override");

  // The effective value of a setting, or nullptr when it is unset and has no default.
  const Value* lookup(std::string_view name) const;
  bool isSet(std::string_view name) const;  // set by any source other than the default

  // Typed getters. The name must be in the table (a programming error otherwise). A value that
  // does not parse was rejected by set(); getters never fail.
  int64_t integer(std::string_view name) const;
  std::optional<int64_t> integerIfSet(std::string_view name) const;
  std::string string(std::string_view name) const;

 private:
  std::map<std::string, Value, std::less<>> values_;  // keyed by canonical NCCL_* name
};

// NCCL's path-type names, indexed by value (LOC=0 … DIS=11).
std::optional<int> parsePathLevel(std::string_view text);

}  // namespace weft::config
