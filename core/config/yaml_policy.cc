// The YAML policy file: flat setting keys and `profiles:`. yaml-cpp reads the YAML (through
// yaml_tree.h); this file checks the document's shape and every value.

#include "core/base/strings.h"
#include "core/config/sources.h"
#include "core/config/yaml_util.h"
#include "plugins/tuner-yaml/rules.h"

namespace weft::config {
namespace {

constexpr std::string_view kTunerRulesKey = "TUNER_RULES";

// A value longer than this is a mistake (NCCL itself cuts conf-file values at 1023 bytes).
constexpr size_t kMaxValueBytes = 4096;

bool isFlag(const SettingDef& def) {
  return def.type == Type::kInt && def.range.min == 0 && def.range.max == 1;
}

bool isListType(Type t) {
  return t == Type::kList || t == Type::kIfList || t == Type::kSubsysList || t == Type::kAlgoList ||
         t == Type::kProtoList;
}

Result<std::string> listText(const SettingDef& def, const YamlKey& k, const YamlNode& v) {
  std::string joinedText;
  for (const YamlNode& item : v.items) {
    if (!item.isScalar()) return invalidArgument(k.at(item) + ": " + k.name + ": list items must be names, got " + nodeKind(item));
    joinedText += (joinedText.empty() ? "" : ",") + item.scalar;
    if (joinedText.size() > kMaxValueBytes) break;
  }
  if (joinedText.empty()) return invalidArgument(k.at(v) + ": " + k.name + ": empty list; expected " + expectedForm(def));
  return joinedText;
}

// The value of a setting as NCCL would read it from the environment.
Result<std::string> valueText(const SettingDef& def, const YamlKey& k, const YamlNode& v) {
  auto expected = [&] { return "; expected " + expectedForm(def); };
  Result<std::string> text = std::string();
  if (v.isScalar()) {
    std::optional<bool> b = plainBool(v);
    if (b && !isFlag(def)) {
      return invalidArgument(k.at(v) + ": " + k.name + ": bad value " + v.scalar +
                             ": a YAML boolean (quote it if you mean the text)" + expected());
    }
    text = b ? std::string(*b ? "1" : "0") : v.scalar;
  } else if (v.isNull()) {
    return invalidArgument(k.here() + ": " + k.name + ": no value (write \"\" for the default)" + expected());
  } else if (v.isSequence() && isListType(def.type)) {
    text = listText(def, k, v);
  } else {
    return invalidArgument(k.at(v) + ": " + k.name + ": bad value: got " + nodeKind(v) + expected());
  }
  if (text.isOk() && text->size() > kMaxValueBytes) {
    return invalidArgument(k.at(v) + ": " + k.name + ": value longer than " + std::to_string(kMaxValueBytes) + " bytes");
  }
  return text;
}

Status unknownKey(const YamlKey& k, const YamlNode& v, bool topLevel) {
  std::string msg = k.here() + ": unknown setting \"" + k.name + "\"";
  if (v.isScalar()) msg += " (value \"" + v.scalar + "\")";
  std::optional<std::string> hint = suggestName(k.name);
  if (topLevel && editDistance(k.name, "profiles") <= 2) hint = "profiles";
  if (hint && iequals(*hint, k.name)) return invalidArgument(msg + "; keys are upper case: did you mean " + *hint + "?");
  if (hint) return invalidArgument(msg + "; did you mean " + *hint + "?");
  return invalidArgument(msg + "; see `weft info --config` or docs/settings.md for the settings");
}

// One `KEY: value` of a settings map.
Result<Entry> parseSetting(const YamlKey& k, const YamlNode& v, const std::string& wherePrefix, bool topLevel) {
  const SettingDef* def = findDef(k.name);
  if (def == nullptr) return unknownKey(k, v, topLevel);
  if (def->scope == Scope::kEnvOnly) {
    return invalidArgument(k.here() + ": " + k.name + " can only be set in the environment (it chooses which files are read)");
  }
  WEFT_ASSIGN_OR_RETURN(std::string text, valueText(*def, k, v));
  // The position is formatted only for an error: loading stays cheap (bench/).
  if (!text.empty() && !validateValue(*def, text).isOk()) WEFT_TRY(checkValue(*def, k.name, text, k.atValue(v)));
  int line = k.line + 1;
  return Entry{def, k.name, std::move(text), wherePrefix + *k.path + ":" + std::to_string(line), line};
}

}  // namespace

Status parseSettingsMap(const YamlNode& map, const std::string& path, const std::string& wherePrefix,
                        std::vector<Entry>& out, const YamlNode** profiles) {
  constexpr size_t kUnset = SIZE_MAX;
  std::vector<size_t> seen(table().size(), kUnset);  // row -> index in `out` of the entry that set it
  for (size_t i = 0; i < map.keys.size(); ++i) {
    const YamlNode& value = map.items[i];
    WEFT_TRY(YamlKey::check(map.keys[i], path));
    YamlKey k(map.keys[i], path);
    // The YAML tuner's rules (plugins/tuner-yaml): checked by parseYamlPolicy, read by the plugin.
    if (profiles != nullptr && k.name == kTunerRulesKey) continue;
    if (profiles != nullptr && k.name == "profiles") {
      if (*profiles != nullptr) return invalidArgument(k.here() + ": duplicate key profiles");
      *profiles = &value;
      continue;
    }
    WEFT_ASSIGN_OR_RETURN(Entry e, parseSetting(k, value, wherePrefix, profiles != nullptr));
    size_t& slot = seen[defIndex(*e.def)];
    if (slot != kUnset) {
      const Entry& first = out[slot];
      return invalidArgument(strprintf("%s: duplicate key %s (value \"%s\"): %s is already set by %s at line %d",
                                       k.here().c_str(), k.name.c_str(), e.value.c_str(),
                                       std::string(e.def->name).c_str(), first.key.c_str(), first.line));
    }
    slot = out.size();
    out.push_back(std::move(e));
  }
  return Status::ok();
}

Result<YamlPolicy> parseYamlPolicy(std::string_view text, std::string_view path) {
  YamlPolicy out;
  out.path = std::string(path);
  WEFT_ASSIGN_OR_RETURN(YamlNode root, parseYamlDocument(text, out.path));
  if (root.isNull()) return out;
  if (!root.isMap()) {
    return invalidArgument(positionText(out.path, root) +
                           ": expected a map of settings (NAME: value) at the top, got " + nodeKind(root));
  }
  const YamlNode* profiles = nullptr;
  WEFT_TRY(parseSettingsMap(root, out.path, "", out.base, &profiles));
  if (profiles != nullptr) WEFT_TRY(parseProfiles(*profiles, out.path, out.profiles));
  for (const YamlNode& key : root.keys) {
    if (!key.isScalar() || key.scalar != kTunerRulesKey) continue;
    std::vector<tuneryaml::Rule> rules;
    std::string err = tuneryaml::parseRulesDocument(text, out.path, rules);
    if (!err.empty()) return invalidArgument(err);
  }
  return out;
}

}  // namespace weft::config
