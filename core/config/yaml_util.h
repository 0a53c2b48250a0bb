// Helpers shared by the YAML policy parser's files. Internal to core/config.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/config/sources.h"
#include "core/config/yaml_tree.h"

namespace weft::config {

// "a list", "a map", "\"text\"", "nothing" — for "got …" in messages.
std::string nodeKind(const YamlNode& node);
// A plain (unquoted) true/false/yes/no/on/off, as YAML reads it; nullopt otherwise.
std::optional<bool> plainBool(const YamlNode& node);

// A map key, which must be a plain name.
struct YamlKey {
  std::string name;
  int line = -1;
  int column = -1;
  const std::string* path = nullptr;  // the file's, which outlives the key

  YamlKey(const YamlNode& key, const std::string& file)
      : name(key.scalar), line(key.line), column(key.column), path(&file) {}
  // A key must be a plain name, not a list or a map.
  static Status check(const YamlNode& key, const std::string& path);
  std::string here() const { return positionText(*path, line, column); }
  std::string at(const YamlNode& n) const { return positionText(*path, n); }
  // Where a value is, or the key when the value has no position of its own (a missing value).
  std::string atValue(const YamlNode& v) const { return v.isNull() ? here() : at(v); }
};

// The settings of a map (top level or a profile's `settings:`) into `out`. At the top level,
// `profiles` receives the `profiles:` node instead of treating it as a setting.
Status parseSettingsMap(const YamlNode& map, const std::string& path, const std::string& wherePrefix,
                        std::vector<Entry>& out, const YamlNode** profiles);
// The `profiles:` list.
Status parseProfiles(const YamlNode& list, const std::string& path, std::vector<Profile>& out);

}  // namespace weft::config
