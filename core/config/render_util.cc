#include "core/config/render_util.h"

#include "core/base/strings.h"
#include "core/config/render.h"

namespace weft::config {

std::string sourceText(const Value& v) {
  std::string s = v.where;
  if (v.alias) s += " as " + v.setAs;
  if (v.source != Source::kDefault && v.text.empty()) s += " (empty: default)";
  return s;
}

SettingRow settingRow(const SettingDef& def, const Settings& settings) {
  SettingRow r;
  r.def = &def;
  const Value* eff = settings.lookup(def.name);
  r.unset = eff == nullptr;
  r.value = eff != nullptr ? eff->text : std::string();
  const Value* w = settings.winner(def);
  r.source = w != nullptr ? sourceText(*w) : "default";
  return r;
}

std::vector<ProfileStatus> profileStatus(const Policy& policy, const Facts& facts) {
  std::vector<ProfileStatus> out;
  if (!policy.yaml()) return out;
  const auto& profiles = policy.yaml()->profiles;
  for (size_t i = 0; i < profiles.size(); ++i) {
    out.push_back({strprintf("profile[%zu]", i), profiles[i].where, profiles[i].match.describe(),
                   profiles[i].match.whyNot(facts)});
  }
  return out;
}

std::vector<NotApplied> notApplied(const SettingDef& def, const Policy& policy, const Facts& facts) {
  std::vector<NotApplied> out;
  if (!policy.yaml()) return out;
  for (const Profile& p : policy.yaml()->profiles) {
    std::string why = p.match.whyNot(facts);
    if (why.empty()) continue;
    for (const Entry& e : p.settings)
      if (e.def == &def) out.push_back({e.where, e.value, why});
  }
  return out;
}

std::string displayDefault(const SettingDef& def) {
  if (def.defaultValue.empty()) return "unset";
  if (def.type == Type::kInt && def.range.autoValue && def.defaultValue == "-2") return "-2 (auto)";
  return std::string(def.defaultValue);
}

Result<Format> parseFormat(std::string_view text) {
  if (text == "text") return Format::kText;
  if (text == "json") return Format::kJson;
  if (text == "markdown") return Format::kMarkdown;
  return invalidUsage("unknown format \"" + std::string(text) + "\" (expected text, json or markdown)");
}

}  // namespace weft::config
