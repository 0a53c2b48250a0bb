// A YAML document as a small tree with positions, built from yaml-cpp's event parser. Internal
// to core/config. weft builds its own tree instead of using YAML::LoadAll because:
//  - yaml-cpp 0.7's LoadAll never returns on some malformed inputs (a lone ",": it keeps
//    producing empty documents, jbeder/yaml-cpp#1040, fixed upstream after 0.7);
//  - aliases are expanded here under a size budget, so "billion laughs" inputs are an error,
//    not an out-of-memory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace weft::config {

struct YamlNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };

  Kind kind = Kind::kNull;
  std::string tag;     // "?" for a plain (unquoted) scalar, as yaml-cpp reports it
  std::string scalar;  // kScalar
  int line = -1;       // 0-based position of the node; -1 when unknown
  int column = -1;
  // kSequence: the items. kMap: the values, keys[i] being the key of items[i], in document
  // order with duplicates kept. (Two vectors: a vector of pairs of an incomplete type is not
  // allowed.)
  std::vector<YamlNode> items;
  std::vector<YamlNode> keys;

  bool isNull() const { return kind == Kind::kNull; }
  bool isScalar() const { return kind == Kind::kScalar; }
  bool isSequence() const { return kind == Kind::kSequence; }
  bool isMap() const { return kind == Kind::kMap; }
  size_t size() const { return items.size(); }
};

// The one document of `text` (a null node when the text is empty). A second document is an
// error, and so is a YAML syntax error; errors start with "PATH:LINE:COLUMN: ".
Result<YamlNode> parseYamlDocument(std::string_view text, const std::string& path);

// "weft.yaml:3:16" (1-based), or just the path when the position is unknown.
std::string positionText(const std::string& path, int line, int column);
inline std::string positionText(const std::string& path, const YamlNode& node) {
  return positionText(path, node.line, node.column);
}

}  // namespace weft::config
