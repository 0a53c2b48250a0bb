#include "core/config/settings.h"

#include <algorithm>
#include <cassert>

#include "core/base/strings.h"
#include "core/config/environment.h"

namespace weft::config {
namespace {

// One immutable Value per row for its default, so lookup() can return a stable pointer.
const std::vector<Value>& defaultValues() {
  static const std::vector<Value> kDefaults = [] {
    std::vector<Value> out;
    for (const SettingDef& d : table()) out.push_back(Value{std::string(d.defaultValue), Source::kDefault, "default"});
    return out;
  }();
  return kDefaults;
}

// Whether `a` beats `b`: the full name over older names (NCCL reads the new name last, so it
// wins whichever file set it), then the higher source, then the higher order within it.
bool beats(const Value& a, const Value& b) {
  if (a.alias != b.alias) return !a.alias;
  if (sourceRank(a.source) != sourceRank(b.source)) return sourceRank(a.source) > sourceRank(b.source);
  return a.order > b.order;
}

bool isPluginModule(std::string_view module) {
  return module.find("plugins/") != std::string_view::npos;
}

}  // namespace

const char* sourceName(Source source) {
  switch (source) {
    case Source::kDefault: return "default";
    case Source::kEnv: return "env";
    case Source::kYaml: return "yaml";
    case Source::kYamlProfile: return "profile";
    case Source::kConfFile: return "conf";
    case Source::kEtcConf: return "/etc/nccl.conf";
    case Source::kOverride: return "override";
  }
  return "?";
}

int sourceRank(Source source) {
  switch (source) {
    case Source::kDefault: return 0;
    case Source::kEtcConf: return 1;
    case Source::kConfFile: return 2;
    case Source::kYaml: return 3;
    case Source::kYamlProfile: return 4;
    case Source::kEnv: return 5;
    case Source::kOverride: return 6;
  }
  return 0;
}

Settings Settings::fromEnvironment() {
  Settings s;
  for (const auto& [name, value] : processEnvironment()) {
    const SettingDef* d = findEnvDef(name);
    if (d == nullptr || value.empty() || !validateValue(*d, value).isOk()) continue;
    s.add(*d, Value{value, Source::kEnv, "env", 0, d->name == name ? "" : name, d->name != name});
  }
  return s;
}

Status Settings::set(std::string_view name, std::string value, Source source, std::string where) {
  const SettingDef* d = findDef(name);
  if (d == nullptr) {
    std::string msg = "unknown setting " + std::string(name);
    if (auto s = suggestName(name)) msg += " (did you mean " + *s + "?)";
    return invalidUsage(msg);
  }
  WEFT_TRY(checkValue(*d, name, value, where));
  bool alias = isAliasOf(*d, name);
  std::string setAs = name == d->name ? "" : std::string(name);
  add(*d, Value{std::move(value), source, std::move(where), 0, std::move(setAs), alias});
  return Status::ok();
}

void Settings::add(const SettingDef& d, Value value) {
  if (values_.empty()) values_.resize(table().size());
  std::vector<Value>& slot = values_[defIndex(d)];
  auto same = std::find_if(slot.begin(), slot.end(), [&](const Value& v) {
    return v.source == value.source && v.order == value.order && v.alias == value.alias;
  });
  if (same != slot.end()) slot.erase(same);
  auto pos = std::find_if(slot.begin(), slot.end(), [&](const Value& v) { return beats(value, v); });
  slot.insert(pos, std::move(value));
}

const Value* Settings::winner(const SettingDef& d) const {
  if (values_.empty()) return nullptr;
  const std::vector<Value>& slot = values_[defIndex(d)];
  return slot.empty() ? nullptr : &slot.front();
}

const Value* Settings::effective(const SettingDef& d) const {
  const Value* w = winner(d);
  if (w != nullptr && !w->text.empty()) return w;
  const Value& dflt = defaultValues()[defIndex(d)];
  return dflt.text.empty() ? nullptr : &dflt;
}

const SettingDef& Settings::def(std::string_view name) const {
  const SettingDef* d = findDef(name);
  assert(d != nullptr && "setting not in the table");
  return d != nullptr ? *d : table().front();
}

const Value* Settings::lookup(std::string_view name) const {
  const SettingDef* d = findDef(name);
  return d == nullptr ? nullptr : effective(*d);
}

bool Settings::isSet(std::string_view name) const {
  const SettingDef* d = findDef(name);
  if (d == nullptr) return false;
  const Value* w = winner(*d);
  return w != nullptr && !w->text.empty();
}

std::vector<Value> Settings::history(std::string_view name) const {
  std::vector<Value> out;
  const SettingDef* d = findDef(name);
  if (d == nullptr) return out;
  if (!values_.empty()) out = values_[defIndex(*d)];
  out.push_back(defaultValues()[defIndex(*d)]);
  return out;
}

std::vector<std::pair<std::string, std::string>> Settings::pluginEnvironment() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const SettingDef& d : table()) {
    const Value* w = winner(d);
    if (!isPluginModule(d.module) || w == nullptr || w->text.empty() || w->source == Source::kEnv) continue;
    out.emplace_back(std::string(d.name), w->text);
  }
  return out;
}

}  // namespace weft::config
