// `weft info --config --format json`: the same content as the text form, for tools.
#include "core/config/render.h"
#include "core/config/render_util.h"

namespace weft::config {
namespace {

std::string optJson(const std::optional<std::string>& v) { return v ? jsonString(*v) : "null"; }
std::string optJson(const std::optional<int>& v) { return v ? std::to_string(*v) : "null"; }

std::string factsJson(const Facts& f) {
  return "{\"host\": " + optJson(f.host) + ", \"nodes\": " + optJson(f.nodes) + ", \"gpus\": " +
         optJson(f.gpusPerNode) + ", \"arch\": " + (f.smArch ? jsonString("sm" + std::to_string(*f.smArch)) : "null") +
         ", \"net\": " + optJson(f.netPlugin) + "}";
}

template <typename T, typename Fn>
std::string array(const std::vector<T>& items, Fn item) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\n    " : "\n    ") + item(items[i]);
  return out + (items.empty() ? "]" : "\n  ]");
}

std::string rowJson(const SettingRow& r) {
  const SettingDef& d = *r.def;
  return "{\"name\": " + jsonString(d.name) + ", \"value\": " + (r.unset ? "null" : jsonString(r.value)) +
         ", \"source\": " + jsonString(r.source) + ", \"default\": " +
         (d.defaultValue.empty() ? "null" : jsonString(d.defaultValue)) + ", \"type\": " + jsonString(typeName(d.type)) +
         ", \"yaml_key\": " + jsonString(shortName(d.name)) + ", \"module\": " + jsonString(d.module) +
         ", \"doc\": " + jsonString(d.doc) + "}";
}

std::string valueJson(const Value& v) {
  return "{\"value\": " + jsonString(v.text) + ", \"source\": " + jsonString(sourceName(v.source)) +
         ", \"where\": " + jsonString(v.where) + ", \"set_as\": " + (v.setAs.empty() ? "null" : jsonString(v.setAs)) + "}";
}

}  // namespace

std::string settingsJson(const Settings& settings, const Policy& policy, const Facts& facts) {
  std::vector<SettingRow> rows;
  for (const SettingDef& d : table()) rows.push_back(settingRow(d, settings));
  std::string out = "{\n  \"facts\": " + factsJson(facts) + ",\n";
  out += "  \"files\": " + array(policy.files(), [](const FileRead& f) {
    return "{\"path\": " + jsonString(f.path) + ", \"role\": " + jsonString(f.role) +
           ", \"found\": " + (f.found ? "true" : "false") + "}";
  }) + ",\n";
  out += "  \"profiles\": " + array(profileStatus(policy, facts), [](const ProfileStatus& p) {
    return "{\"profile\": " + jsonString(p.label) + ", \"where\": " + jsonString(p.where) + ", \"match\": " +
           jsonString(p.match) + ", \"applies\": " + (p.whyNot.empty() ? "true" : "false") +
           ", \"why_not\": " + (p.whyNot.empty() ? "null" : jsonString(p.whyNot)) + "}";
  }) + ",\n";
  out += "  \"ignored\": " + array(policy.unknown(), [](const UnknownName& u) {
    return "{\"name\": " + jsonString(u.name) + ", \"where\": " + jsonString(u.where) +
           ", \"suggestion\": " + optJson(u.suggestion) + "}";
  }) + ",\n";
  out += "  \"settings\": " + array(rows, rowJson) + "\n}\n";
  return out;
}

std::string explainJson(const SettingDef& def, const Settings& settings, const Policy& policy, const Facts& facts) {
  SettingRow row = settingRow(def, settings);
  std::string out = "{\n  \"setting\": " + rowJson(row) + ",\n";
  out += "  \"expected\": " + jsonString(expectedForm(def)) + ",\n";
  out += "  \"facts\": " + factsJson(facts) + ",\n";
  out += "  \"history\": " + array(settings.history(def.name), valueJson) + ",\n";
  out += "  \"not_applied\": " + array(notApplied(def, policy, facts), [](const NotApplied& n) {
    return "{\"where\": " + jsonString(n.where) + ", \"value\": " + jsonString(n.value) + ", \"why_not\": " +
           jsonString(n.whyNot) + "}";
  }) + "\n}\n";
  return out;
}

}  // namespace weft::config
