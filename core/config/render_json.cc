// `weft info --config --format json`: the same content as the text form, for tools, written
// with the shared JsonWriter.
#include "core/base/json.h"
#include "core/config/render.h"
#include "core/config/render_util.h"

namespace weft::config {
namespace {

template <typename T>
void optional(JsonWriter& w, std::string_view key, const std::optional<T>& v) {
  w.key(key);
  if (v) {
    w.value(*v);
  } else {
    w.null();
  }
}

void facts(JsonWriter& w, const Facts& f) {
  w.key("facts").beginObject();
  optional(w, "host", f.host);
  optional(w, "nodes", f.nodes);
  optional(w, "gpus", f.gpusPerNode);
  optional(w, "arch", f.smArch ? std::optional<std::string>("sm" + std::to_string(*f.smArch)) : std::nullopt);
  optional(w, "net", f.netPlugin);
  w.endObject();
}

void row(JsonWriter& w, const SettingRow& r) {
  const SettingDef& d = *r.def;
  w.beginObject().key("name").value(d.name);
  optional(w, "value", r.unset ? std::nullopt : std::optional<std::string>(r.value));
  w.field("source", r.source);
  optional(w, "default", d.defaultValue.empty() ? std::nullopt : std::optional<std::string>(d.defaultValue));
  w.field("type", typeName(d.type)).field("yaml_key", shortName(d.name)).field("module", d.module);
  w.field("doc", d.doc).endObject();
}

void header(JsonWriter& w, const Policy& policy, const Facts& f) {
  facts(w, f);
  w.key("files").beginArray();
  for (const FileRead& file : policy.files()) {
    w.beginObject().field("path", file.path).field("role", file.role).field("found", file.found).endObject();
  }
  w.endArray().key("profiles").beginArray();
  for (const ProfileStatus& p : profileStatus(policy, f)) {
    w.beginObject().field("profile", p.label).field("where", p.where).field("match", p.match);
    w.field("applies", p.whyNot.empty());
    optional(w, "why_not", p.whyNot.empty() ? std::nullopt : std::optional<std::string>(p.whyNot));
    w.endObject();
  }
  w.endArray().key("ignored").beginArray();
  for (const UnknownName& u : policy.unknown()) {
    w.beginObject().field("name", u.name).field("where", u.where);
    optional(w, "suggestion", u.suggestion);
    w.endObject();
  }
  w.endArray();
}

}  // namespace

std::string settingsJson(const Settings& settings, const Policy& policy, const Facts& f) {
  JsonWriter w;
  w.beginObject();
  header(w, policy, f);
  w.key("settings").beginArray();
  for (const SettingDef& d : table()) row(w, settingRow(d, settings));
  w.endArray().endObject();
  return w.str() + "\n";
}

std::string explainJson(const SettingDef& def, const Settings& settings, const Policy& policy, const Facts& f) {
  JsonWriter w;
  w.beginObject().key("setting");
  row(w, settingRow(def, settings));
  w.field("expected", expectedForm(def));
  facts(w, f);
  w.key("history").beginArray();
  for (const Value& v : settings.history(def.name)) {
    w.beginObject().field("value", v.text).field("source", sourceName(v.source)).field("where", v.where);
    optional(w, "set_as", v.setAs.empty() ? std::nullopt : std::optional<std::string>(v.setAs));
    w.endObject();
  }
  w.endArray().key("not_applied").beginArray();
  for (const NotApplied& n : notApplied(def, policy, f)) {
    w.beginObject().field("where", n.where).field("value", n.value).field("why_not", n.whyNot).endObject();
  }
  w.endArray().endObject();
  return w.str() + "\n";
}

}  // namespace weft::config
