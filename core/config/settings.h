// Settings: the effective value of every setting in the table, with where each came from. A
// Settings object is built once (per communicator or per tool run, see loader.h) and passed
// explicitly to whoever needs it; nothing reads getenv directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/config/table.h"
#include "core/config/values.h"

namespace weft::config {

// Sources, lowest precedence first; see sourceRank().
enum class Source { kDefault, kEnv, kYaml, kYamlProfile, kConfFile, kEtcConf, kOverride };
const char* sourceName(Source source);
// Precedence: override > env > YAML profiles > YAML base keys > NCCL_CONF_FILE or ~/.nccl.conf
// > /etc/nccl.conf > default.
int sourceRank(Source source);

struct Value {
  std::string text{};  // "" set by a source means "use the default", as NCCL reads empty variables
  Source source = Source::kDefault;
  std::string where{};  // "env", "weft.yaml:12", "profile[0] weft.yaml:12", "/etc/nccl.conf:3", "default"
  int order = 0;      // within one source: higher wins (profile index; minus the conf-file line)
  std::string setAs{};  // the name as written when it was not the full name (older name, YAML key)
  bool alias = false;  // set through an older name: loses to the full name from any source
};

class Settings {
 public:
  // Built-in defaults only.
  Settings() = default;

  // The process environment only (no files). Unknown names and bad values are ignored here;
  // loader.h's Policy is the checked path.
  static Settings fromEnvironment();

  // Explicit values, as if from the environment (tests, the offline tool's --set). The name may
  // be written in any spelling findDef() accepts; the value is checked against the table.
  Status set(std::string_view name, std::string value, Source source = Source::kOverride,
             std::string where = "override");
  // Records a value already checked against `def` (the loaders' path). A value from the same
  // source with the same order and spelling kind replaces the earlier one.
  void add(const SettingDef& def, Value value);

  // The effective value of a setting, or nullptr when it is unset and has no default.
  const Value* lookup(std::string_view name) const;
  bool isSet(std::string_view name) const;  // set to a non-empty value by a source other than the default

  // Typed getters. The name must be in the table (a programming error otherwise). A value that
  // does not parse was rejected when it was set; getters never fail.
  int64_t integer(std::string_view name) const;
  std::optional<int64_t> integerIfSet(std::string_view name) const;
  std::string string(std::string_view name) const;
  bool flag(std::string_view name) const;                      // integer != 0
  std::optional<int> pathLevel(std::string_view name) const;   // nullopt: unset (NCCL's auto)
  std::vector<std::string> list(std::string_view name) const;  // comma lists
  IfList interfaceList(std::string_view name) const;           // empty: unset
  Selection algorithms() const;                                // NCCL_ALGO
  Selection protocols() const;                                 // NCCL_PROTO
  NetDevsPolicy netDevsPolicy() const;                         // NCCL_NETDEVS_POLICY
  NetFallback netFallback() const;                             // WEFT_NET_FALLBACK

  // Provenance: every value any source gave, the winner first, the default last.
  std::vector<Value> history(std::string_view name) const;
  // The winning value from a source, or nullptr (the default applies).
  const Value* winner(const SettingDef& def) const;

  // Settings the plugin libraries read from their own environment (module plugins/…), set by a
  // source other than the environment, as NAME=value pairs. The plugin loader exports them
  // (without overwriting) before loading a plugin, so a YAML policy reaches the plugins too.
  std::vector<std::pair<std::string, std::string>> pluginEnvironment() const;

 private:
  const Value* effective(const SettingDef& def) const;
  const SettingDef& def(std::string_view name) const;

  std::vector<std::vector<Value>> values_;  // per table row, best first; empty until a set
};

}  // namespace weft::config
