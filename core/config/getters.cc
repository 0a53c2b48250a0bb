// Settings' typed getters. Values were checked when they were set, so a parse that fails here
// can only be a default in the table that does not parse (a table test catches that).
#include "core/base/strings.h"
#include "core/config/settings.h"

namespace weft::config {

int64_t Settings::integer(std::string_view name) const {
  const Value* v = effective(def(name));
  if (v == nullptr) return 0;
  return parseInt(v->text, 0).value_or(0);
}

std::optional<int64_t> Settings::integerIfSet(std::string_view name) const {
  if (!isSet(name)) return std::nullopt;
  return integer(name);
}

std::string Settings::string(std::string_view name) const {
  const Value* v = effective(def(name));
  return v != nullptr ? v->text : std::string();
}

bool Settings::flag(std::string_view name) const { return integer(name) != 0; }

std::optional<int> Settings::pathLevel(std::string_view name) const {
  const Value* v = effective(def(name));
  if (v == nullptr) return std::nullopt;
  return parsePathLevel(v->text);
}

std::vector<std::string> Settings::list(std::string_view name) const {
  return parseNameList(string(name));
}

IfList Settings::interfaceList(std::string_view name) const {
  const Value* v = effective(def(name));
  if (v == nullptr) return {};
  auto parsed = parseIfList(v->text);
  return parsed.isOk() ? std::move(parsed).value() : IfList{};
}

Selection Settings::algorithms() const {
  const Value* v = effective(def("NCCL_ALGO"));
  if (v == nullptr) return {};
  auto parsed = parseAlgoSelection(v->text);
  return parsed.isOk() ? *parsed : Selection{};
}

Selection Settings::protocols() const {
  const Value* v = effective(def("NCCL_PROTO"));
  if (v == nullptr) return {};
  auto parsed = parseProtoSelection(v->text);
  return parsed.isOk() ? *parsed : Selection{};
}

NetDevsPolicy Settings::netDevsPolicy() const {
  auto parsed = parseNetDevsPolicy(string("NCCL_NETDEVS_POLICY"));
  return parsed.isOk() ? *parsed : NetDevsPolicy{};
}

NetFallback Settings::netFallback() const {
  return iequals(string("WEFT_NET_FALLBACK"), "deny") ? NetFallback::kDeny : NetFallback::kAllow;
}

}  // namespace weft::config
