#include "core/topo/xml.h"


#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <pugixml.hpp>

#include "core/base/files.h"
#include "core/base/strings.h"

namespace weft::topo {

// ---------------------------------------------------------------------------
// XmlNode
// ---------------------------------------------------------------------------

const std::string* XmlNode::find(std::string_view key) const {
  for (const auto& [k, v] : attrs_)
    if (k == key) return &v;
  return nullptr;
}

std::string XmlNode::get(std::string_view key, std::string_view fallback) const {
  const std::string* v = find(key);
  return v ? *v : std::string(fallback);
}

void XmlNode::set(std::string_view key, std::string value) {
  for (auto& [k, v] : attrs_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  attrs_.emplace_back(std::string(key), std::move(value));
}

void XmlNode::init(std::string_view key, std::string value) {
  if (!has(key)) attrs_.emplace_back(std::string(key), std::move(value));
}

bool XmlNode::erase(std::string_view key) {
  auto it = std::find_if(attrs_.begin(), attrs_.end(), [&](const Attr& a) { return a.first == key; });
  if (it == attrs_.end()) return false;
  attrs_.erase(it);
  return true;
}

XmlNode& XmlNode::addChild(std::string name, int line) {
  return adopt(std::make_unique<XmlNode>(std::move(name), line));
}

XmlNode& XmlNode::adopt(std::unique_ptr<XmlNode> child) {
  child->parent_ = this;
  children_.push_back(std::move(child));
  return *children_.back();
}

XmlNode& XmlNode::insert(size_t pos, std::unique_ptr<XmlNode> child) {
  child->parent_ = this;
  pos = std::min(pos, children_.size());
  auto it = children_.insert(children_.begin() + static_cast<ptrdiff_t>(pos), std::move(child));
  return **it;
}

std::unique_ptr<XmlNode> XmlNode::detach(const XmlNode* child) {
  auto it = std::find_if(children_.begin(), children_.end(),
                         [&](const std::unique_ptr<XmlNode>& c) { return c.get() == child; });
  if (it == children_.end()) return nullptr;
  std::unique_ptr<XmlNode> out = std::move(*it);
  children_.erase(it);
  out->parent_ = nullptr;
  return out;
}

XmlNode* XmlNode::child(std::string_view name) const {
  for (const auto& c : children_)
    if (c->name_ == name) return c.get();
  return nullptr;
}

XmlNode* XmlNode::childWith(std::string_view name, std::string_view key, std::string_view value) const {
  for (const auto& c : children_) {
    if (c->name_ != name) continue;
    const std::string* v = c->find(key);
    if (v && *v == value) return c.get();
  }
  return nullptr;
}

std::unique_ptr<XmlNode> XmlNode::clone() const {
  auto copy = std::make_unique<XmlNode>(name_, line_);
  copy->form_ = form_;
  copy->attrs_ = attrs_;
  for (const auto& c : children_) copy->adopt(c->clone());
  return copy;
}

bool XmlNode::operator==(const XmlNode& other) const {
  if (name_ != other.name_ || attrs_ != other.attrs_ || children_.size() != other.children_.size())
    return false;
  for (size_t i = 0; i < children_.size(); ++i)
    if (!(*children_[i] == *other.children_[i])) return false;
  return true;
}

std::string XmlNode::describe() const {
  std::string s = "<" + name_;
  // The first attribute usually identifies the element (busid, numaid, name, dev, target).
  // Values are quoted in full up to a length that keeps messages readable.
  if (!attrs_.empty()) {
    const std::string& v = attrs_[0].second;
    s += " " + attrs_[0].first + "=\"" + (v.size() > 64 ? v.substr(0, 64) + "..." : v) + "\"";
  }
  s += ">";
  return s;
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

namespace {

class LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(i + 1);
  }
  // 1-based line and column of a byte offset.
  std::pair<int, int> at(ptrdiff_t offset) const {
    if (offset < 0) return {0, 0};
    auto it = std::upper_bound(starts_.begin(), starts_.end(), static_cast<size_t>(offset));
    size_t line = static_cast<size_t>(it - starts_.begin());
    return {static_cast<int>(line), static_cast<int>(static_cast<size_t>(offset) - starts_[line - 1] + 1)};
  }

 private:
  std::vector<size_t> starts_;
};

// Whether the start tag at `offset` (pugixml's offset of the element) ends with "/>". The
// document parsed, so the tag is well formed: skip quoted values up to the first '>'.
XmlForm formAt(std::string_view text, ptrdiff_t offset) {
  char quote = 0;
  for (size_t i = offset < 0 ? text.size() : static_cast<size_t>(offset); i < text.size(); ++i) {
    char c = text[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '>') {
      return i > 0 && text[i - 1] == '/' ? XmlForm::kSelfClosing : XmlForm::kOpen;
    }
  }
  return XmlForm::kOpen;
}

std::unique_ptr<XmlNode> convert(const pugi::xml_node& in, const LineIndex& lines, std::string_view text) {
  auto node = std::make_unique<XmlNode>(in.name(), lines.at(in.offset_debug()).first);
  node->setForm(formAt(text, in.offset_debug()));
  for (const pugi::xml_attribute& a : in.attributes()) node->set(a.name(), a.value());
  // Repeated attribute names are legal for pugixml; keep the first like NCCL's lookups do.
  for (const pugi::xml_node& c : in.children()) {
    if (c.type() != pugi::node_element) continue;  // text, comments and PIs carry no topology
    node->adopt(convert(c, lines, text));
  }
  return node;
}

// NCCL 2.28.9 reads names and values into MAX_STR_LEN (255) byte buffers and fails ("too long")
// as soon as the byte it stores, terminator included, would be the 255th: a quoted value holds at
// most 253 characters (its closing quote is stored too), an element name 253 (the space, '>' or
// '/' after it is stored), an attribute name 254 (the '=' is not stored). weft takes what NCCL
// takes and rejects the rest with the same limits.
constexpr size_t kMaxValueLen = 253;
constexpr size_t kMaxElementNameLen = 253;
constexpr size_t kMaxAttributeNameLen = 254;
// Real topologies are about ten levels deep; the limit keeps recursive walks off the stack's edge.
constexpr int kMaxDepth = 64;

std::string elementAt(const pugi::xml_node& in, const LineIndex& lines, const std::string& source) {
  return source + ":" + std::to_string(lines.at(in.offset_debug()).first) + ": <" + in.name() + ">: ";
}

Status checkElement(const pugi::xml_node& in, const LineIndex& lines, const std::string& source) {
  size_t nameLen = std::strlen(in.name());
  if (nameLen > kMaxElementNameLen) {
    return invalidArgument(source + ":" + std::to_string(lines.at(in.offset_debug()).first) + ": element name is " +
                           std::to_string(nameLen) + " characters long (NCCL reads at most " +
                           std::to_string(kMaxElementNameLen) + ")");
  }
  for (const pugi::xml_attribute& a : in.attributes()) {
    size_t len = std::strlen(a.value());
    size_t keyLen = std::strlen(a.name());
    if (len > kMaxValueLen || keyLen > kMaxAttributeNameLen) {
      std::string name = std::string(a.name()).substr(0, 32);
      bool value = len > kMaxValueLen;
      return invalidArgument(elementAt(in, lines, source) + "attribute '" + name + "' " + (value ? "value" : "name") +
                             " is " + std::to_string(value ? len : keyLen) + " characters long (NCCL reads at most " +
                             std::to_string(value ? kMaxValueLen : kMaxAttributeNameLen) + ")");
    }
    for (pugi::xml_attribute b = a.next_attribute(); b; b = b.next_attribute()) {
      if (std::string_view(a.name()) == b.name())
        return invalidArgument(elementAt(in, lines, source) + "attribute '" + a.name() + "' appears twice");
    }
  }
  return Status::ok();
}

// Every element, depth first, without recursion: the depth is not known to be sane yet.
Status checkElements(const pugi::xml_node& root, const LineIndex& lines, const std::string& source) {
  int depth = 0;
  for (pugi::xml_node n = root; n;) {
    if (n.type() == pugi::node_element) {
      if (depth >= kMaxDepth)
        return invalidArgument(elementAt(n, lines, source) + "elements nested deeper than " + std::to_string(kMaxDepth) + " levels");
      WEFT_TRY(checkElement(n, lines, source));
    }
    if (n.first_child() && n.type() == pugi::node_element) {
      n = n.first_child();
      ++depth;
      continue;
    }
    while (n && n != root && !n.next_sibling()) {
      n = n.parent();
      --depth;
    }
    if (!n || n == root) break;
    n = n.next_sibling();
  }
  return Status::ok();
}

void escapeTo(std::string& out, std::string_view value) { appendXmlEscaped(out, value); }

void writeRec(std::string& out, const XmlNode& node, int indent) {
  out.append(static_cast<size_t>(indent), ' ');
  out += '<';
  out += node.name();
  for (const auto& [k, v] : node.attrs()) {
    out += ' ';
    out += k;
    out += "=\"";
    escapeTo(out, v);
    out += '"';
  }
  if (node.children().empty()) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  for (const auto& c : node.children()) writeRec(out, *c, indent + 2);
  out.append(static_cast<size_t>(indent), ' ');
  out += "</";
  out += node.name();
  out += ">\n";
}

}  // namespace

Result<TopoXml> TopoXml::parse(std::string_view text, std::string source) {
  pugi::xml_document doc;
  // No parse_comments/parse_pi: NCCL skips them too. parse_escapes decodes &amp; and friends.
  unsigned options = pugi::parse_default & ~pugi::parse_wconv_attribute;
  pugi::xml_parse_result res = doc.load_buffer(text.data(), text.size(), options, pugi::encoding_utf8);
  LineIndex lines(text);
  if (res.status == pugi::status_no_document_element || (res && !doc.document_element()))
    return invalidArgument(source + ": no XML element found (empty, truncated or not XML)");
  if (!res) {
    auto [line, col] = lines.at(res.offset);
    return invalidArgument(source + ":" + std::to_string(line) + ":" + std::to_string(col) +
                           ": malformed XML: " + res.description());
  }
  pugi::xml_node rootIn = doc.document_element();
  for (pugi::xml_node n = rootIn.next_sibling(); n; n = n.next_sibling()) {
    if (n.type() == pugi::node_element)
      return invalidArgument(elementAt(n, lines, source) + "a second top element (the first is <" + rootIn.name() + ">)");
  }
  WEFT_TRY(checkElements(rootIn, lines, source));
  TopoXml xml;
  xml.source_ = std::move(source);
  xml.root_ = convert(rootIn, lines, text);
  return xml;
}

Result<TopoXml> TopoXml::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errnoError("cannot open " + path, errno);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return errnoError("cannot read " + path, errno);
  return parse(buf.str(), path);
}

TopoXml TopoXml::withRoot(std::string name) {
  TopoXml xml;
  xml.root_ = std::make_unique<XmlNode>(std::move(name));
  xml.root_->set("version", "1");
  return xml;
}

TopoXml::TopoXml(const TopoXml& other) : root_(other.root_ ? other.root_->clone() : nullptr), source_(other.source_) {}

TopoXml& TopoXml::operator=(const TopoXml& other) {
  if (this != &other) {
    root_ = other.root_ ? other.root_->clone() : nullptr;
    source_ = other.source_;
  }
  return *this;
}

Status TopoXml::expectRoot(std::string_view name) const {
  if (!root_) return invalidArgument(source_ + ": empty document");
  if (root_->name() != name) {
    return invalidArgument(where(*root_) + "root element is <" + root_->name() + ">, expected <" +
                           std::string(name) + " version=\"1\">");
  }
  const std::string* version = root_->find("version");
  if (version == nullptr) return invalidArgument(where(*root_) + "missing version attribute, expected version=\"1\"");
  if (*version != "1") {
    return invalidArgument(where(*root_) + "XML has wrong version " + *version + ", 1 needed");
  }
  return Status::ok();
}

std::string TopoXml::toString() const {
  std::string out;
  if (root_) writeRec(out, *root_, 0);
  return out;
}

Status TopoXml::save(const std::string& path) const { return writeFileAtomic(path, toString()); }

bool TopoXml::operator==(const TopoXml& other) const {
  if (!root_ || !other.root_) return !root_ && !other.root_;
  return *root_ == *other.root_;
}

std::string TopoXml::where(const XmlNode& node) const {
  std::string s = source_;
  if (node.line() > 0) s += ":" + std::to_string(node.line());
  s += ": " + node.describe() + ": ";
  return s;
}

void findAll(const XmlNode& from, std::string_view name, std::vector<XmlNode*>& out) {
  for (const auto& c : from.children()) {
    if (c->name() == name) out.push_back(c.get());
    findAll(*c, name, out);
  }
}

}  // namespace weft::topo
