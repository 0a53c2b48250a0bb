// `profiles:` in the YAML policy: a list of {match: {...}, settings: {...}}.
#include <algorithm>
#include <set>

#include "core/base/strings.h"
#include "core/config/yaml_util.h"

namespace weft::config {
namespace {

constexpr const char* kProfileKeys[] = {"match", "settings"};
constexpr const char* kMatchKeys[] = {"host", "nodes", "gpus", "arch", "net"};

// An unknown key among `known`, with the closest one.
template <size_t N>
Status unknownAmong(const YamlKey& k, const char* what, const char* const (&known)[N]) {
  std::string list, best;
  size_t bestDist = 3;
  for (const char* n : known) {
    list += (list.empty() ? "" : ", ") + std::string(n);
    if (size_t d = editDistance(k.name, n); d < bestDist) {
      bestDist = d;
      best = n;
    }
  }
  std::string msg = k.here() + ": unknown " + what + " key \"" + k.name + "\"";
  if (!best.empty()) msg += " (did you mean " + best + "?)";
  return invalidArgument(msg + "; expected " + list);
}

// "8", "2-8", "16+" (or "sm80", "sm80-sm90", "sm90+" for arch).
Result<IntSpan> parseSpan(const std::string& text, bool arch) {
  auto number = [&](std::string_view t) -> std::optional<int64_t> {
    if (arch) {
      auto a = parseArch(t);
      return a.isOk() ? std::optional<int64_t>(*a) : std::nullopt;
    }
    auto v = parseInt(t, 10);
    return v && *v >= 1 ? v : std::nullopt;
  };
  std::string_view t = trim(text);
  IntSpan s;
  std::optional<int64_t> lo, hi;
  size_t dash = t.find('-', 1);
  if (!t.empty() && t.back() == '+') {
    lo = number(t.substr(0, t.size() - 1));
    hi = INT64_MAX;
  } else if (dash != std::string_view::npos) {
    lo = number(t.substr(0, dash));
    hi = number(t.substr(dash + 1));
  } else {
    lo = hi = number(t);
  }
  if (!lo || !hi || *lo > *hi) {
    return invalidArgument(arch ? "expected smXX, smXX+ or smXX-smYY (sm90, sm80+, sm80-sm90)"
                                : "expected N, N+ or N-M with N >= 1 (8, 16+, 2-8)");
  }
  s.lo = *lo;
  s.hi = *hi;
  return s;
}

// A match value: one scalar or a non-empty list of scalars.
Result<std::vector<std::string>> matchItems(const YamlKey& k, const YamlNode& v) {
  std::vector<std::string> out;
  if (v.isScalar()) out.push_back(v.scalar);
  if (v.isSequence()) {
    for (const YamlNode& item : v.items) {
      if (!item.isScalar()) return invalidArgument(k.at(item) + ": match " + k.name + ": expected a value, got " + nodeKind(item));
      out.push_back(item.scalar);
    }
  }
  if (out.empty()) {
    return invalidArgument(k.atValue(v) + ": match " + k.name +
                           ": expected a value or a list of values, got " + nodeKind(v));
  }
  return out;
}

Status parseMatchKey(const YamlKey& k, const YamlNode& v, Match& m) {
  WEFT_ASSIGN_OR_RETURN(std::vector<std::string> items, matchItems(k, v));
  if (k.name == "host") m.hosts = items;
  if (k.name == "net") m.nets = items;
  if (k.name == "host" || k.name == "net") return Status::ok();
  std::vector<IntSpan>& spans = k.name == "nodes" ? m.nodes : k.name == "gpus" ? m.gpus : m.arch;
  for (const std::string& item : items) {
    auto span = parseSpan(item, k.name == "arch");
    if (!span.isOk()) {
      return invalidArgument(k.at(v) + ": match " + k.name + ": bad value \"" + item + "\": " + span.status().message());
    }
    spans.push_back(*span);
  }
  return Status::ok();
}

Result<Match> parseMatch(const YamlKey& mk, const YamlNode& node) {
  if (!node.isMap() || node.size() == 0) {
    return invalidArgument(mk.atValue(node) +
                           ": match: expected a map of conditions (host, nodes, gpus, arch, net), got " +
                           (node.isMap() ? std::string("an empty map") : nodeKind(node)));
  }
  Match m;
  std::set<std::string> seen;
  for (size_t i = 0; i < node.keys.size(); ++i) {
    const YamlNode& value = node.items[i];
    WEFT_TRY(YamlKey::check(node.keys[i], *mk.path));
    YamlKey k(node.keys[i], *mk.path);
    if (std::find(std::begin(kMatchKeys), std::end(kMatchKeys), k.name) == std::end(kMatchKeys)) {
      return unknownAmong(k, "match", kMatchKeys);
    }
    if (!seen.insert(k.name).second) return invalidArgument(k.here() + ": duplicate match key " + k.name);
    WEFT_TRY(parseMatchKey(k, value, m));
  }
  return m;
}

Result<Profile> parseProfile(const YamlNode& node, size_t index, const std::string& path) {
  std::string label = "profile[" + std::to_string(index) + "]";
  if (!node.isMap()) {
    return invalidArgument(positionText(path, node) + ": " + label +
                           ": expected {match: {...}, settings: {...}}, got " + nodeKind(node));
  }
  Profile p;
  p.where = path + ":" + std::to_string(node.line + 1);
  std::optional<YamlKey> matchKey, settingsKey;
  for (size_t i = 0; i < node.keys.size(); ++i) {
    const YamlNode& value = node.items[i];
    WEFT_TRY(YamlKey::check(node.keys[i], path));
    YamlKey k(node.keys[i], path);
    std::optional<YamlKey>* slot = k.name == "match" ? &matchKey : k.name == "settings" ? &settingsKey : nullptr;
    if (slot == nullptr) return unknownAmong(k, "profile", kProfileKeys);
    if (slot->has_value()) return invalidArgument(k.here() + ": " + label + ": duplicate key " + k.name);
    *slot = k;
    if (slot == &matchKey) {
      WEFT_ASSIGN_OR_RETURN(p.match, parseMatch(k, value));
    } else if (!value.isMap() || value.size() == 0) {
      return invalidArgument(k.atValue(value) + ": " + label + ": settings: expected a map of settings (NAME: value), got " +
                             (value.isMap() ? std::string("an empty map") : nodeKind(value)));
    } else {
      WEFT_TRY(parseSettingsMap(value, path, label + " ", p.settings, nullptr));
    }
  }
  if (!matchKey) {
    return invalidArgument(positionText(path, node) + ": " + label +
                           ": no match: (a profile applies only where its match holds; put settings for "
                           "every host at the top level)");
  }
  if (!settingsKey) return invalidArgument(positionText(path, node) + ": " + label + ": no settings:");
  return p;
}

}  // namespace

Status parseProfiles(const YamlNode& list, const std::string& path, std::vector<Profile>& out) {
  if (!list.isSequence()) {
    return invalidArgument(positionText(path, list) +
                           ": profiles: expected a list of {match: {...}, settings: {...}}, got " + nodeKind(list));
  }
  size_t index = 0;
  for (const YamlNode& item : list.items) {
    WEFT_ASSIGN_OR_RETURN(Profile p, parseProfile(item, index++, path));
    out.push_back(std::move(p));
  }
  return Status::ok();
}

}  // namespace weft::config
