#include "core/topo/system_print.h"

#include <charconv>

#include "core/base/strings.h"

namespace weft::topo {
namespace {

unsigned long hexSys(int64_t id) { return static_cast<unsigned long>(systemIdOf(id)); }
unsigned long hexLocal(int64_t id) { return static_cast<unsigned long>(localIdOf(id)); }

// to_chars appended to `out`; its output is printf's for the same conversion ("%d", "%lx",
// "%.1f"), without a format string to parse (path lines are most of what a search prints).
template <typename... Args>
void appendChars(std::string& out, Args... args) {
  char buf[64];
  std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), args...);
  out.append(buf, r.ptr);
}

void appendNodeName(std::string& out, const Node& n) {
  out += nodeTypeName(n.type);
  out += '/';
  appendChars(out, hexSys(n.id), 16);
  out += '-';
  appendChars(out, hexLocal(n.id), 16);
}

std::string describe(const Node& n) {
  std::string name = nodeName(n);
  switch (n.type) {
    case NodeType::kGpu: return name + strprintf(" (%d)", n.gpu.rank);
    case NodeType::kCpu: return name + strprintf(" (%d/%d/%d)", n.cpu.arch, n.cpu.vendor, n.cpu.model);
    case NodeType::kPci: return name + strprintf(" (%lx)", static_cast<unsigned long>(n.pci.device));
    default: return name;
  }
}

std::string describeNet(const Node& n) {
  return nodeName(n) + strprintf(" (%d/%lx/%d/%f)", n.net.collSupport, static_cast<unsigned long>(n.net.asic),
                                 n.net.port, static_cast<double>(n.net.bw));
}

// Prints `node` after `head` (the text that leads to it), then its links indented to the
// width of that text, descending along PCI links but never back to where it came from.
void printRec(const System& s, const Node& node, const Node* prev, const std::string& head,
              std::vector<std::string>& out) {
  out.push_back(head + describe(node));
  std::string indent(head.size(), ' ');
  for (const Link& link : node.links) {
    const Node& rem = s.node(link.rem);
    std::string lead = indent + strprintf("+ %.*s[%2.1f] - ", static_cast<int>(linkTypeName(link.type).size()),
                                          linkTypeName(link.type).data(), static_cast<double>(link.bw));
    if (link.type == LinkType::kLoc) {
      out.push_back(lead + nodeName(rem));
    } else if (link.type != LinkType::kPci || &rem != prev) {
      if (link.type == LinkType::kPci) printRec(s, rem, &node, lead, out);
      else out.push_back(lead + (rem.type == NodeType::kNet ? describeNet(rem) : nodeName(rem)));
    }
  }
}

}  // namespace

std::string nodeName(const Node& n) {
  std::string out;
  appendNodeName(out, n);
  return out;
}

std::vector<std::string> systemBlock(const System& s) {
  std::vector<std::string> out;
  out.push_back(strprintf("=== System : maxBw %2.1f totalBw %2.1f ===", static_cast<double>(s.maxBw),
                          static_cast<double>(s.totalBw)));
  for (const Node& cpu : s.nodes(NodeType::kCpu)) printRec(s, cpu, nullptr, "", out);
  out.push_back("==========================================");
  return out;
}

std::vector<std::string> pathLines(const System& s) {
  std::vector<std::string> out;
  for (NodeType t : {NodeType::kGpu, NodeType::kNet}) {
    for (const Node& n : s.nodes(t)) {
      std::string line;
      appendNodeName(line, n);
      line += " :";
      for (NodeType pt : kAllNodeTypes) {
        const auto& paths = n.paths[idx(pt)];
        for (size_t i = 0; i < paths.size(); ++i) {
          const Path& p = paths[i];
          appendNodeName(line, s.node(pt, static_cast<int>(i)));
          line += " (";
          appendChars(line, p.count());
          line += '/';
          appendChars(line, static_cast<double>(p.bw), std::chars_format::fixed, 1);
          line += '/';
          line += pathTypeName(p.type);
          line += ") ";
        }
      }
      // NCCL writes the line into 1024 bytes: what does not fit is not printed.
      if (line.size() > kPathLineMax) line.resize(kPathLineMax);
      out.push_back(std::move(line));
    }
  }
  return out;
}

}  // namespace weft::topo
