#include "core/config/yaml_tree.h"

#include "core/config/yaml_fast.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <map>
#include <sstream>

#include "core/base/strings.h"

namespace weft::config {
namespace {

// Far above any real policy (a few hundred nodes), far below what exhausts memory.
constexpr size_t kMaxNodes = 200000;
constexpr size_t kMaxScalarBytes = 8u << 20;

struct TooLarge {};
struct BadAlias {
  YAML::Mark mark;
};

// Builds YamlNodes from parser events. A container under construction lives on the stack until
// its end event, then moves into its parent.
class TreeBuilder : public YAML::EventHandler {
 public:
  std::vector<YamlNode> documents;

  void OnDocumentStart(const YAML::Mark&) override { stack_.clear(); }
  void OnDocumentEnd() override {
    if (!done_) documents.emplace_back();  // an empty document
    done_ = false;
  }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(leaf(mark, YamlNode::Kind::kNull, "", ""), anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw BadAlias{mark};  // an alias inside the node it names
    YamlNode copy = it->second;
    count(copy);
    copy.line = mark.line;
    copy.column = mark.column;
    add(std::move(copy), 0);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    add(leaf(mark, YamlNode::Kind::kScalar, tag, value), anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    stack_.push_back({leaf(mark, YamlNode::Kind::kSequence, tag, ""), anchor, {}, false});
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    stack_.push_back({leaf(mark, YamlNode::Kind::kMap, tag, ""), anchor, {}, false});
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    YamlNode node;
    YAML::anchor_t anchor;
    YamlNode key;  // a map's key waiting for its value
    bool hasKey;
  };

  YamlNode leaf(const YAML::Mark& mark, YamlNode::Kind kind, const std::string& tag, const std::string& value) {
    if (++nodes_ > kMaxNodes || (bytes_ += value.size()) > kMaxScalarBytes) throw TooLarge{};
    YamlNode n;
    n.kind = kind;
    n.tag = tag;
    n.scalar = value;
    n.line = mark.line;
    n.column = mark.column;
    return n;
  }

  // Charges an alias's copy to the budget.
  void count(const YamlNode& n) {
    if (++nodes_ > kMaxNodes || (bytes_ += n.scalar.size()) > kMaxScalarBytes) throw TooLarge{};
    for (const YamlNode& i : n.items) count(i);
    for (const YamlNode& k : n.keys) count(k);
  }

  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    add(std::move(f.node), f.anchor);
  }

  void add(YamlNode node, YAML::anchor_t anchor) {
    if (anchor != 0) anchors_[anchor] = node;
    if (stack_.empty()) {
      documents.push_back(std::move(node));
      done_ = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.node.kind == YamlNode::Kind::kSequence) {
      top.node.items.push_back(std::move(node));
    } else if (!top.hasKey) {
      top.key = std::move(node);
      top.hasKey = true;
    } else {
      top.node.keys.push_back(std::move(top.key));
      top.node.items.push_back(std::move(node));
      top.hasKey = false;
    }
  }

  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, YamlNode> anchors_;
  size_t nodes_ = 0;
  size_t bytes_ = 0;
  bool done_ = false;
};

// yaml-cpp 0.7 reports a stray token by handing out the same empty document forever.
bool repeatsItself(const std::vector<YamlNode>& docs) {
  size_t n = docs.size();
  return n >= 2 && docs[n - 1].isNull() && docs[n - 2].isNull() && docs[n - 1].line == docs[n - 2].line &&
         docs[n - 1].column == docs[n - 2].column;
}

}  // namespace

std::string positionText(const std::string& path, int line, int column) {
  if (line < 0) return path;
  return strprintf("%s:%d:%d", path.c_str(), line + 1, column + 1);
}

Result<YamlNode> parseYamlDocument(std::string_view text, const std::string& path) {
  // Policies are plain YAML: read them without yaml-cpp's slow scanner when the text stays in
  // the subset that parseSimpleYaml reads exactly as yaml-cpp does.
  if (std::optional<YamlNode> fast = parseSimpleYaml(text)) return std::move(*fast);
  return parseYamlWithYamlCpp(text, path);
}

Result<YamlNode> parseYamlWithYamlCpp(std::string_view text, const std::string& path) {
  TreeBuilder builder;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
      if (repeatsItself(builder.documents)) {
        const YamlNode& d = builder.documents.back();
        return invalidArgument(positionText(path, d) + ": YAML syntax error: unexpected character");
      }
      if (builder.documents.size() > 1) break;
    }
  } catch (const YAML::Exception& e) {
    return invalidArgument(positionText(path, e.mark.line, e.mark.column) + ": YAML syntax error: " + e.msg);
  } catch (const BadAlias& e) {
    return invalidArgument(positionText(path, e.mark.line, e.mark.column) +
                           ": YAML alias refers to the node that contains it");
  } catch (const TooLarge&) {
    return invalidArgument(path + ": too large once YAML aliases are expanded (more than " +
                           std::to_string(kMaxNodes) + " nodes or " + std::to_string(kMaxScalarBytes >> 20) + " MiB)");
  }
  if (builder.documents.size() > 1) {
    return invalidArgument(positionText(path, builder.documents[1]) + ": more than one YAML document; a policy is one");
  }
  if (builder.documents.empty()) return YamlNode{};
  return std::move(builder.documents.front());
}

}  // namespace weft::config
