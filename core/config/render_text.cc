// `weft info --config` as text.
#include <algorithm>

#include "core/base/strings.h"
#include "core/config/render.h"
#include "core/config/render_util.h"

namespace weft::config {
namespace {

// Left-aligned in `width` columns, and at least two spaces before the next column.
std::string pad(std::string s, size_t width) {
  s.append(s.size() + 2 <= width ? width - s.size() : 2, ' ');
  return s;
}

std::string header(const Policy& policy, const Facts& facts) {
  std::string out = "facts: " + facts.describe() + "\n";
  bool yaml = false;
  for (const FileRead& f : policy.files()) {
    std::string role = f.role == f.path ? "" : f.role;
    std::string note = role + (f.found ? "" : role.empty() ? "not found" : ", not found");
    out += "file: " + f.path + (note.empty() ? "" : " (" + note + ")") + "\n";
    yaml = yaml || startsWith(f.role, "YAML");
  }
  if (!yaml) out += "file: no YAML policy ($WEFT_CONFIG, ~/.config/weft/weft.yaml, /etc/weft.yaml)\n";
  for (const ProfileStatus& p : profileStatus(policy, facts)) {
    out += p.label + " " + p.where + " (" + p.match + "): " +
           (p.whyNot.empty() ? "applies" : "does not apply: " + p.whyNot) + "\n";
  }
  for (const UnknownName& u : policy.unknown()) {
    out += "ignored: " + u.name + " (" + u.where + (u.suggestion ? "; did you mean " + *u.suggestion + "?" : "") + ")\n";
  }
  return out;
}

std::string settingsText(const Settings& settings, const Policy& policy, const Facts& facts) {
  std::vector<SettingRow> rows;
  size_t wName = 4, wValue = 5, wSource = 6;
  for (const SettingDef& d : table()) {
    rows.push_back(settingRow(d, settings));
    const SettingRow& r = rows.back();
    wName = std::max(wName, d.name.size());
    wValue = std::max(wValue, std::min<size_t>(r.unset ? 7 : r.value.size(), 24));
    wSource = std::max(wSource, std::min<size_t>(r.source.size(), 32));
  }
  std::string out = header(policy, facts) + "\n";
  out += pad("NAME", wName + 2) + pad("VALUE", wValue + 2) + pad("SOURCE", wSource + 2) + "DOC\n";
  for (const SettingRow& r : rows) {
    out += pad(std::string(r.def->name), wName + 2) + pad(r.unset ? "(unset)" : r.value, wValue + 2) +
           pad(r.source, wSource + 2) + std::string(r.def->doc) + "\n";
  }
  return out;
}

std::string explainText(const SettingDef& def, const Settings& settings, const Policy& policy, const Facts& facts) {
  SettingRow row = settingRow(def, settings);
  std::string out = std::string(def.name) + " = " + (row.unset ? "(unset)" : row.value) + "\n";
  out += "  " + std::string(def.doc) + "\n";
  out += "  accepts " + expectedForm(def) + "; default " + displayDefault(def) + "; read by " +
         std::string(def.module) + "\n";
  out += "  YAML key: " + std::string(shortName(def.name)) + (def.scope == Scope::kEnvOnly ? " (environment only)" : "");
  for (std::string_view a : def.aliases) out += "; older name: " + std::string(a);
  out += "\nsources, highest precedence first:\n";
  std::vector<Value> history = settings.history(def.name);
  for (size_t i = 0; i < history.size(); ++i) {
    const Value& v = history[i];
    std::string text = v.text.empty() && v.source == Source::kDefault ? "(unset)" : v.text.empty() ? "\"\"" : v.text;
    out += std::string(i == 0 ? "  * " : "    ") + pad(text, 16) + " " + sourceText(v) + (i == 0 ? "   <- wins" : "") + "\n";
  }
  std::vector<NotApplied> skipped = notApplied(def, policy, facts);
  if (!skipped.empty()) out += "profiles that set it but do not apply (" + facts.describe() + "):\n";
  for (const NotApplied& n : skipped) out += "    " + pad(n.value, 16) + " " + n.where + ": " + n.whyNot + "\n";
  return out;
}

}  // namespace

std::string renderSettings(const Settings& settings, const Policy& policy, const Facts& facts, Format format) {
  return format == Format::kJson ? settingsJson(settings, policy, facts) : settingsText(settings, policy, facts);
}

std::string renderExplain(const SettingDef& def, const Settings& settings, const Policy& policy,
                          const Facts& facts, Format format) {
  return format == Format::kJson ? explainJson(def, settings, policy, facts)
                                 : explainText(def, settings, policy, facts);
}

}  // namespace weft::config
