// Internal to the renderers: what they all show, computed once.
#pragma once

#include <string>
#include <vector>

#include "core/config/loader.h"

namespace weft::config {

// One line of the settings listing.
struct SettingRow {
  const SettingDef* def = nullptr;
  std::string value;   // effective value, "" when unset
  bool unset = false;
  std::string source;  // "env", "weft.yaml:3", "default", "env (empty: default)"
};
SettingRow settingRow(const SettingDef& def, const Settings& settings);

struct ProfileStatus {
  std::string label;   // "profile[0]"
  std::string where;   // "weft.yaml:12"
  std::string match;   // "nodes=1-2"
  std::string whyNot;  // "" when it applies
};
std::vector<ProfileStatus> profileStatus(const Policy& policy, const Facts& facts);

// A profile that sets `def` but does not apply.
struct NotApplied {
  std::string where;  // "profile[0] weft.yaml:15"
  std::string value;
  std::string whyNot;
};
std::vector<NotApplied> notApplied(const SettingDef& def, const Policy& policy, const Facts& facts);

// How a Value's source reads in listings: its where, "as OLD_NAME" for older names.
std::string sourceText(const Value& v);

}  // namespace weft::config

namespace weft::config {

// The JSON forms, in render_json.cc.
std::string settingsJson(const Settings& settings, const Policy& policy, const Facts& facts);
std::string explainJson(const SettingDef& def, const Settings& settings, const Policy& policy, const Facts& facts);

}  // namespace weft::config
