#include "core/config/yaml_util.h"

#include "core/base/strings.h"

namespace weft::config {

std::string nodeKind(const YamlNode& node) {
  switch (node.kind) {
    case YamlNode::Kind::kSequence: return "a list";
    case YamlNode::Kind::kMap: return "a map";
    case YamlNode::Kind::kScalar: return "\"" + node.scalar + "\"";
    case YamlNode::Kind::kNull: return "nothing";
  }
  return "nothing";
}

std::optional<bool> plainBool(const YamlNode& node) {
  // "?" is yaml-cpp's tag for a plain scalar; a quoted one ("true") is text.
  if (!node.isScalar() || node.tag != "?") return std::nullopt;
  for (const char* t : {"true", "yes", "on"})
    if (iequals(node.scalar, t)) return true;
  for (const char* f : {"false", "no", "off"})
    if (iequals(node.scalar, f)) return false;
  return std::nullopt;
}

Status YamlKey::check(const YamlNode& key, const std::string& path) {
  if (!key.isScalar()) return invalidArgument(positionText(path, key) + ": keys must be names, got " + nodeKind(key));
  return Status::ok();
}

}  // namespace weft::config
