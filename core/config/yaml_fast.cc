#include "core/config/yaml_fast.h"

#include <cstring>
#include <vector>

namespace weft::config {
namespace {

// One non-blank, non-comment line.
struct Line {
  int number;      // 0-based
  int indent;      // columns of leading spaces
  std::string_view text;  // from the first non-space character to the end of the line
};

struct Declined {};  // outside the subset: let yaml-cpp read it

bool isPlainKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == '-';
}

// Characters that may not start a plain scalar here (YAML indicators; '-' and digits are handled
// by the caller).
bool isIndicator(char c) { return std::strchr("-?:,[]{}#&*!|>'\"%@`", c) != nullptr; }

// yaml-cpp reports these plain scalars as null nodes: left to it.
bool isNullWord(std::string_view v) { return v == "~" || v == "null" || v == "Null" || v == "NULL"; }

YamlNode scalar(int line, int column, std::string_view value, bool quoted) {
  if (!quoted && isNullWord(value)) throw Declined{};
  YamlNode n;
  n.kind = YamlNode::Kind::kScalar;
  n.tag = quoted ? "!" : "?";
  n.scalar = std::string(value);
  n.line = line;
  n.column = column;
  return n;
}

YamlNode collection(YamlNode::Kind kind, int line, int column) {
  YamlNode n;
  n.kind = kind;
  n.tag = "?";
  n.line = line;
  n.column = column;
  return n;
}

std::vector<Line> splitLines(std::string_view text) {
  std::vector<Line> out;
  int number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    size_t first = raw.find_first_not_of(' ');
    if (first != std::string_view::npos && raw[first] != '#') {
      // Tabs, carriage returns, other control characters and non-ASCII on a line with content
      // (columns would count differently): yaml-cpp's business. Comment lines may hold anything.
      for (char c : raw) {
        unsigned char u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x7f) throw Declined{};
      }
      if (first == 0 && (raw.substr(0, 3) == "---" || raw.substr(0, 3) == "..." || raw[0] == '%')) throw Declined{};
      out.push_back(Line{number, static_cast<int>(first), raw.substr(first)});
    }
    if (end == text.size()) break;
    pos = end + 1;
    ++number;
  }
  return out;
}

// The rest of a line after a value: nothing, or spaces then a comment.
void expectEnd(std::string_view rest) {
  size_t i = rest.find_first_not_of(' ');
  if (i == std::string_view::npos) return;
  if (rest[i] == '#' && i > 0) return;
  throw Declined{};
}

// A double- or single-quoted scalar starting at text[0]; returns the characters consumed.
size_t quoted(std::string_view text, int line, int column, YamlNode* out) {
  char q = text[0];
  size_t end = text.find(q, 1);
  if (end == std::string_view::npos) throw Declined{};
  std::string_view body = text.substr(1, end - 1);
  if (q == '"' && body.find('\\') != std::string_view::npos) throw Declined{};  // escapes
  if (q == '\'' && end + 1 < text.size() && text[end + 1] == '\'') throw Declined{};  // '' escape
  *out = scalar(line, column, body, true);
  return end + 1;
}

// A plain scalar inside [ ] or { }: up to ',' or the closing bracket, trailing spaces dropped.
size_t flowPlain(std::string_view text, int line, int column, YamlNode* out) {
  size_t i = 0;
  while (i < text.size() && std::strchr(",[]{}#\"'", text[i]) == nullptr) {
    if (text[i] == ':' && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == ',')) break;
    ++i;
  }
  std::string_view v = text.substr(0, i);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.empty() || isIndicator(v[0])) throw Declined{};
  *out = scalar(line, column, v, false);
  return i;
}

size_t flow(std::string_view text, int line, int column, YamlNode* out, int depth);

// A flow item: a scalar, or (a few levels deep) another flow collection.
size_t flowItem(std::string_view text, int line, int column, YamlNode* out, int depth) {
  if (text.empty()) throw Declined{};
  if (text[0] == '[' || text[0] == '{') {
    if (depth >= 4) throw Declined{};
    return flow(text, line, column, out, depth + 1);
  }
  if (text[0] == '"' || text[0] == '\'') return quoted(text, line, column, out);
  return flowPlain(text, line, column, out);
}

size_t skipSpaces(std::string_view text, size_t i) {
  while (i < text.size() && text[i] == ' ') ++i;
  return i;
}

// [a, "b", c] or {k: v, k2: [x, y]} on one line.
size_t flow(std::string_view text, int line, int column, YamlNode* out, int depth) {
  bool isMap = text[0] == '{';
  char close = isMap ? '}' : ']';
  *out = collection(isMap ? YamlNode::Kind::kMap : YamlNode::Kind::kSequence, line, column);
  size_t i = skipSpaces(text, 1);
  if (i < text.size() && text[i] == close) return i + 1;
  while (true) {
    YamlNode item;
    if (isMap && (text[i] == '[' || text[i] == '{')) throw Declined{};  // complex keys
    i += flowItem(text.substr(i), line, column + static_cast<int>(i), &item, depth);
    if (isMap) {
      if (item.tag != "?" || i >= text.size() || text[i] != ':') throw Declined{};
      i = skipSpaces(text, i + 1);
      YamlNode value;
      i += flowItem(text.substr(i), line, column + static_cast<int>(i), &value, depth);
      out->keys.push_back(std::move(item));
      out->items.push_back(std::move(value));
    } else {
      out->items.push_back(std::move(item));
    }
    i = skipSpaces(text, i);
    if (i >= text.size()) throw Declined{};
    if (text[i] == close) return i + 1;
    if (text[i] != ',') throw Declined{};
    i = skipSpaces(text, i + 1);
  }
}

// A value written on the same line as its key or dash: plain, quoted or flow.
YamlNode inlineValue(std::string_view text, int line, int column) {
  YamlNode n;
  char c = text[0];
  if (c == '[' || c == '{') {
    size_t used = flow(text, line, column, &n, 0);
    expectEnd(text.substr(used));
    return n;
  }
  if (c == '"' || c == '\'') {
    size_t used = quoted(text, line, column, &n);
    expectEnd(text.substr(used));
    return n;
  }
  if (isIndicator(c) && !(c == '-' && text.size() > 1 && text[1] >= '0' && text[1] <= '9')) throw Declined{};
  size_t comment = text.find(" #");
  std::string_view v = text.substr(0, comment);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.find(": ") != std::string_view::npos || v.back() == ':') throw Declined{};
  return scalar(line, column, v, false);
}

class Reader {
 public:
  explicit Reader(std::vector<Line> lines) : lines_(std::move(lines)) {}

  YamlNode document() {
    if (lines_.empty() || lines_[0].indent != 0) throw Declined{};
    YamlNode root = blockMap(0);
    if (next_ != lines_.size()) throw Declined{};
    return root;
  }

 private:
  // "key: value" or "key:" at lines_[next_], starting at `offset` within the line's text.
  void mapEntry(YamlNode& map, int indent, size_t offset) {
    const Line& l = lines_[next_];
    std::string_view t = l.text.substr(offset);
    size_t k = 0;
    while (k < t.size() && isPlainKeyChar(t[k])) ++k;
    if (k == 0 || t[0] == '-' || k >= t.size() || t[k] != ':') throw Declined{};
    if (k + 1 < t.size() && t[k + 1] != ' ') throw Declined{};
    map.keys.push_back(scalar(l.number, indent, t.substr(0, k), false));
    size_t v = skipSpaces(t, k + 1);
    ++next_;
    if (v < t.size() && t[v] != '#') {
      map.items.push_back(inlineValue(t.substr(v), l.number, indent + static_cast<int>(v)));
      return;
    }
    map.items.push_back(nestedBlock(indent));
  }

  // The block collection below a "key:" line: a deeper mapping, or a sequence at the key's
  // indent or deeper. Nothing there (a null value) is left to yaml-cpp.
  YamlNode nestedBlock(int keyIndent) {
    if (next_ >= lines_.size()) throw Declined{};
    const Line& l = lines_[next_];
    bool dash = l.text[0] == '-' && (l.text.size() == 1 || l.text[1] == ' ');
    if (dash && l.indent >= keyIndent) return blockSeq(l.indent);
    if (!dash && l.indent > keyIndent) return blockMap(l.indent);
    throw Declined{};
  }

  YamlNode blockMap(int indent) {
    const Line& first = lines_[next_];
    YamlNode map = collection(YamlNode::Kind::kMap, first.number, indent);
    while (next_ < lines_.size() && lines_[next_].indent == indent && lines_[next_].text[0] != '-')
      mapEntry(map, indent, 0);
    if (next_ < lines_.size() && lines_[next_].indent > indent) throw Declined{};
    return map;
  }

  // "- value" items at `indent`; an item may open a mapping ("- key: value" plus deeper lines).
  YamlNode blockSeq(int indent) {
    YamlNode seq = collection(YamlNode::Kind::kSequence, lines_[next_].number, indent);
    while (next_ < lines_.size() && lines_[next_].indent == indent && lines_[next_].text[0] == '-') {
      const Line& l = lines_[next_];
      if (l.text.size() < 3 || l.text[1] != ' ') throw Declined{};
      size_t v = skipSpaces(l.text, 1);
      if (v >= l.text.size() || l.text[v] == '#') throw Declined{};
      int column = indent + static_cast<int>(v);
      std::string_view rest = l.text.substr(v);
      size_t colon = rest.find(": ");
      bool opensMap = rest[0] != '[' && rest[0] != '{' && rest[0] != '"' && rest[0] != '\'' &&
                      (colon != std::string_view::npos || rest.back() == ':');
      if (!opensMap) {
        seq.items.push_back(inlineValue(rest, l.number, column));
        ++next_;
        continue;
      }
      seq.items.push_back(itemMap(column, v));
    }
    if (next_ < lines_.size() && lines_[next_].indent > indent) throw Declined{};
    return seq;
  }

  // The mapping that starts after "- " at `column`; its later keys sit at that column.
  YamlNode itemMap(int column, size_t offset) {
    YamlNode map = collection(YamlNode::Kind::kMap, lines_[next_].number, column);
    mapEntry(map, column, offset);
    while (next_ < lines_.size() && lines_[next_].indent == column && lines_[next_].text[0] != '-')
      mapEntry(map, column, 0);
    if (next_ < lines_.size() && lines_[next_].indent > column) throw Declined{};
    return map;
  }

  std::vector<Line> lines_;
  size_t next_ = 0;
};

}  // namespace

std::optional<YamlNode> parseSimpleYaml(std::string_view text) {
  // A byte-order mark or a carriage return anywhere changes how yaml-cpp counts: declined.
  if (text.find('\r') != std::string_view::npos || (text.size() >= 3 && text.substr(0, 3) == "\xef\xbb\xbf"))
    return std::nullopt;
  try {
    Reader reader(splitLines(text));
    return reader.document();
  } catch (const Declined&) {
    return std::nullopt;
  }
}

bool sameTree(const YamlNode& a, const YamlNode& b) {
  if (a.kind != b.kind || a.tag != b.tag || a.scalar != b.scalar || a.line != b.line || a.column != b.column ||
      a.items.size() != b.items.size() || a.keys.size() != b.keys.size())
    return false;
  for (size_t i = 0; i < a.items.size(); ++i)
    if (!sameTree(a.items[i], b.items[i])) return false;
  for (size_t i = 0; i < a.keys.size(); ++i)
    if (!sameTree(a.keys[i], b.keys[i])) return false;
  return true;
}

}  // namespace weft::config
