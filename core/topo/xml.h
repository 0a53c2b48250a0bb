// TopoXml: an NCCL-format XML document (topology or graph file). Elements keep their attributes
// in document order and every element and attribute is kept, known or not, so a file loads and
// saves without loss (RCCL's `xgmi`, `gcn`, … included). The syntax is parsed by pugixml; the
// writer produces NCCL's layout (2-space indent, `<x .../>` for childless elements).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace weft::topo {

// How an element was written where it came from. NCCL's fusion tells `<x .../>` from
// `<x ...>…</x>` and both from an element made in memory (its node `type`: SINGLE, OPEN, NONE),
// so two elements match only when their forms are equal too. Saving ignores it.
enum class XmlForm : uint8_t { kMemory, kOpen, kSelfClosing };

class XmlNode {
 public:
  using Attr = std::pair<std::string, std::string>;

  explicit XmlNode(std::string name, int line = 0) : name_(std::move(name)), line_(line) {}

  const std::string& name() const { return name_; }
  int line() const { return line_; }  // 1-based source line; 0 when built in memory
  XmlNode* parent() const { return parent_; }
  XmlForm form() const { return form_; }
  void setForm(XmlForm form) { form_ = form; }

  // Attributes, in order.
  const std::vector<Attr>& attrs() const { return attrs_; }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const std::string* find(std::string_view key) const;
  std::string get(std::string_view key, std::string_view fallback = "") const;
  // Sets an existing attribute in place, or appends it.
  void set(std::string_view key, std::string value);
  // Sets only if absent (NCCL's xmlInitAttr*).
  void init(std::string_view key, std::string value);
  bool erase(std::string_view key);

  // Children, in order.
  const std::vector<std::unique_ptr<XmlNode>>& children() const { return children_; }
  XmlNode& addChild(std::string name, int line = 0);
  XmlNode& adopt(std::unique_ptr<XmlNode> child);
  // Inserts before the child at `pos` (appends when pos >= the number of children).
  XmlNode& insert(size_t pos, std::unique_ptr<XmlNode> child);
  std::unique_ptr<XmlNode> detach(const XmlNode* child);
  // First child with this name (and attribute value, if given).
  XmlNode* child(std::string_view name) const;
  XmlNode* childWith(std::string_view name, std::string_view key, std::string_view value) const;
  std::unique_ptr<XmlNode> clone() const;

  // Structural equality: names, attributes (order included) and children; not the form.
  bool operator==(const XmlNode& other) const;

  // "<pci busid="0000:zz:00.0">" — how errors quote the element.
  std::string describe() const;

 private:
  std::string name_;
  int line_ = 0;
  XmlForm form_ = XmlForm::kMemory;
  XmlNode* parent_ = nullptr;
  std::vector<Attr> attrs_;
  std::vector<std::unique_ptr<XmlNode>> children_;
};

class TopoXml {
 public:
  TopoXml() = default;
  TopoXml(const TopoXml& other);
  TopoXml& operator=(const TopoXml& other);
  TopoXml(TopoXml&&) noexcept = default;
  TopoXml& operator=(TopoXml&&) noexcept = default;

  // Parses a document. `source` names it in errors ("topo.xml:12: ..."). The root element may
  // be anything; check it with expectRoot().
  static Result<TopoXml> parse(std::string_view text, std::string source = "<memory>");
  static Result<TopoXml> load(const std::string& path);

  // A new document whose root is `<name version="1">`.
  static TopoXml withRoot(std::string name);

  // The root must be <name version="1"> (NCCL_TOPO_XML_VERSION / NCCL_GRAPH_XML_VERSION).
  Status expectRoot(std::string_view name) const;

  XmlNode* root() const { return root_.get(); }
  bool empty() const { return root_ == nullptr; }
  void setRoot(std::unique_ptr<XmlNode> root) { root_ = std::move(root); }
  const std::string& source() const { return source_; }
  void setSource(std::string source) { source_ = std::move(source); }

  // NCCL's layout.
  std::string toString() const;
  // Written to a temporary file then renamed: a failed save never leaves a half-written file.
  Status save(const std::string& path) const;

  bool operator==(const TopoXml& other) const;

  // "file:line: <elem ...>: what" for errors about one element.
  std::string where(const XmlNode& node) const;

 private:
  std::unique_ptr<XmlNode> root_;
  std::string source_ = "<memory>";
};

// Depth-first search for elements named `name`.
void findAll(const XmlNode& from, std::string_view name, std::vector<XmlNode*>& out);

}  // namespace weft::topo
