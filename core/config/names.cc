// Name handling for the settings table: full names, older names, short YAML keys, and the
// "did you mean" hint for misspellings.
#include <unordered_map>

#include "core/base/strings.h"
#include "core/config/table.h"

namespace weft::config {
namespace {

constexpr std::string_view kPrefixes[] = {"NCCL_", "WEFT_"};

struct NameIndex {
  std::unordered_map<std::string_view, size_t> any;   // every accepted spelling
  std::unordered_map<std::string_view, size_t> full;  // full names and older names
};

NameIndex buildIndex() {
  NameIndex idx;
  const std::vector<SettingDef>& rows = table();
  for (size_t i = 0; i < rows.size(); ++i) {
    auto add = [&](std::string_view n) {
      idx.full.emplace(n, i);
      idx.any.emplace(n, i);
      idx.any.emplace(shortName(n), i);
    };
    add(rows[i].name);
    for (std::string_view a : rows[i].aliases) add(a);
  }
  return idx;
}

const NameIndex& nameIndex() {
  static const NameIndex kIndex = buildIndex();
  return kIndex;
}

bool hasPrefix(std::string_view name) {
  for (std::string_view p : kPrefixes)
    if (startsWith(name, p)) return true;
  return false;
}

}  // namespace

std::string_view shortName(std::string_view name) {
  for (std::string_view p : kPrefixes)
    if (startsWith(name, p)) return name.substr(p.size());
  return name;
}

const SettingDef* findDef(std::string_view name) {
  const auto& any = nameIndex().any;
  auto it = any.find(name);
  return it == any.end() ? nullptr : &table()[it->second];
}

const SettingDef* findEnvDef(std::string_view name) {
  const auto& full = nameIndex().full;
  auto it = full.find(name);
  return it == full.end() ? nullptr : &table()[it->second];
}

size_t defIndex(const SettingDef& def) { return static_cast<size_t>(&def - table().data()); }

bool isAliasOf(const SettingDef& def, std::string_view name) {
  for (std::string_view a : def.aliases)
    if (a == name || shortName(a) == name) return true;
  return false;
}

std::optional<std::string> suggestName(std::string_view unknown) {
  // A misspelling is a few edits away; a third of the name keeps short names from matching
  // everything ("ALG" is not a misspelling of "AL").
  bool full = hasPrefix(unknown);
  size_t best = std::max<size_t>(1, std::min<size_t>(3, unknown.size() / 3)) + 1;
  std::optional<std::string> out;
  auto consider = [&](std::string_view candidate) {
    size_t d = editDistance(unknown, candidate);
    if (d < best) {
      best = d;
      out = std::string(candidate);
    }
  };
  for (const SettingDef& d : table()) {
    consider(full ? d.name : shortName(d.name));
    for (std::string_view a : d.aliases) consider(full ? a : shortName(a));
  }
  return out;
}

}  // namespace weft::config
