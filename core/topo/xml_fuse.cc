#include "core/topo/xml_fuse.h"

#include <string_view>
#include <vector>

namespace weft::topo {
namespace {

// NCCL looks the tag up among every element in creation order, which for a parsed document is
// document order.
XmlNode* firstNamed(XmlNode* node, std::string_view name) {
  if (node == nullptr || node->name() == name) return node;
  for (const auto& c : node->children())
    if (XmlNode* found = firstNamed(c.get(), name)) return found;
  return nullptr;
}

XmlNode* findMatch(const XmlNode& dstParent, const XmlNode& srcNode) {
  for (const auto& c : dstParent.children())
    if (sameFusionNode(*c, srcNode)) return c.get();
  return nullptr;
}

void fuseChildren(XmlNode& dstParent, const XmlNode& srcParent) {
  for (const auto& srcChild : srcParent.children()) {
    if (XmlNode* match = findMatch(dstParent, *srcChild)) fuseChildren(*match, *srcChild);
    else dstParent.adopt(srcChild->clone());
  }
}

bool isTrimmable(std::string_view name) { return name == "pci" || name == "cpu" || name == "nic" || name == "net"; }

int trimRec(XmlNode& node) {
  if (const std::string* keep = node.find("keep"); keep != nullptr && *keep == "1") {
    node.erase("keep");
    return 1;
  }
  // Children are removed while walking: walk a copy of the list.
  std::vector<XmlNode*> children;
  for (const auto& c : node.children()) children.push_back(c.get());
  int kept = 0;
  for (XmlNode* c : children) {
    int k = trimRec(*c);
    kept += k;
    if (k == 0 && isTrimmable(c->name())) node.detach(c);
  }
  return kept;
}

}  // namespace

bool sameFusionNode(const XmlNode& a, const XmlNode& b) {
  if (a.name() != b.name() || a.form() != b.form() || a.attrs().size() != b.attrs().size()) return false;
  for (const auto& [key, value] : b.attrs()) {
    const std::string* other = a.find(key);
    if (other == nullptr || *other != value) return false;
  }
  return true;
}

Status fuseXml(TopoXml& dst, const TopoXml& src) {
  XmlNode* srcTop = firstNamed(src.root(), "system");
  if (srcTop == nullptr) return invalidArgument(src.source() + ": no <system> element to fuse");
  if (&dst == &src) return Status::ok();  // every element matches itself
  if (dst.empty()) {
    // NCCL copies the whole first document, whatever its top element.
    dst.setRoot(src.root()->clone());
    return Status::ok();
  }
  XmlNode* dstTop = firstNamed(dst.root(), "system");
  if (dstTop == nullptr) return invalidArgument(dst.source() + ": no <system> element to fuse " + src.source() + " into");
  fuseChildren(*dstTop, *srcTop);
  return Status::ok();
}

Result<TopoXml> fuseXmls(std::span<const TopoXml> xmls, std::string source) {
  TopoXml out;
  out.setSource(std::move(source));
  for (const TopoXml& x : xmls) WEFT_TRY(fuseXml(out, x));
  return out;
}

int trimXml(TopoXml& xml) {
  if (xml.empty()) return 0;
  // The top element is never removed, as in NCCL (it has no parent to be removed from).
  return trimRec(*xml.root());
}

}  // namespace weft::topo
