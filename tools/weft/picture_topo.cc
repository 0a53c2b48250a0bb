#include "tools/weft/picture_topo.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <set>
#include <tuple>
#include <vector>

#include "core/base/strings.h"
#include "core/topo/system_print.h"
#include "tools/weft/picture_dot.h"

namespace weft::tool {
namespace {

using topo::Link;
using topo::LinkType;
using topo::Node;
using topo::NodeRef;
using topo::NodeType;
using topo::System;

// Nodes of every kind numbered one after the other, so that per-node facts fit one vector.
class FlatIndex {
 public:
  explicit FlatIndex(const System& s) {
    int n = 0;
    for (NodeType t : topo::kAllNodeTypes) {
      offset_[static_cast<size_t>(topo::idx(t))] = n;
      n += s.count(t);
    }
    size_ = n;
  }
  int operator()(NodeRef r) const { return offset_[static_cast<size_t>(topo::idx(r.type))] + r.index; }
  int size() const { return size_; }

 private:
  std::array<int, topo::kNodeTypeCount> offset_{};
  int size_ = 0;
};

std::string cpuText(const topo::CpuInfo& c) {
  std::string arch = c.arch == topo::kCpuArchX86     ? "x86"
                     : c.arch == topo::kCpuArchPower ? "POWER"
                     : c.arch == topo::kCpuArchArm   ? "ARM"
                                                     : "";
  if (c.arch != topo::kCpuArchX86) return arch;
  const char* vendor = c.vendor == topo::kCpuVendorIntel     ? " Intel"
                       : c.vendor == topo::kCpuVendorAmd     ? " AMD"
                       : c.vendor == topo::kCpuVendorZhaoxin ? " Zhaoxin"
                                                             : "";
  arch += vendor;
  if (c.vendor == topo::kCpuVendorIntel) {
    static const char* const kModels[] = {"", " BDW", " SKL", " SRP", " ERP"};
    if (c.model >= 1 && c.model <= 4) arch += kModels[c.model];
  }
  return arch;
}

std::string hostPrefix(const Node& n) {
  int64_t host = topo::systemIdOf(n.id);
  return host == 0 ? "" : strprintf("host %ld · ", static_cast<long>(host));
}

// A CPU's NUMA id; NCCL's numaid -1 (devices whose NUMA node the kernel does not know) reads back
// as the whole 56-bit local id.
std::string numaText(const Node& cpu) {
  int64_t local = topo::localIdOf(cpu.id);
  return local == topo::kLocalIdMask ? "-1 (unknown)" : std::to_string(local);
}

// NCCL gives a NIC outside the PCI tree (a virtual interface under its CPU) bus id 0 and a
// link to its CPU as fast as a node's link to itself; a device at 0000:00:00.0 has a PCI speed.
bool onPci(const Node& nic) {
  if (topo::localIdOf(nic.id) != 0) return true;
  return std::none_of(nic.links.begin(), nic.links.end(),
                      [](const Link& l) { return l.rem.type == NodeType::kCpu && l.bw == topo::kLocBw; });
}

struct NodeStyle {
  const char* shape;
  const char* fill;
};

NodeStyle nodeStyle(NodeType t) {
  switch (t) {
    case NodeType::kGpu: return {"box", "#dff0d0"};
    case NodeType::kCpu: return {"box", "#d6e2f5"};
    case NodeType::kNvs: return {"hexagon", "#b9dc8f"};
    case NodeType::kNic: return {"box", "#fbe3d3"};
    case NodeType::kNet: return {"ellipse", "#f6c7a6"};
    default: return {"box", "#eeeeee"};
  }
}

// A link between two nodes, in both directions when both exist (the usual case).
struct Edge {
  NodeRef a, b;
  LinkType type = LinkType::kLoc;
  float bwAb = 0, bwBa = 0;
  bool tree = false;  // part of a CPU's PCI tree: it ranks the layout; other links do not
};

// Which CPU's box each node goes into, and the links of the PCI trees: a breadth-first walk
// from every CPU along PCI and NET links, in CPU order (NCCL's order).
struct Grouping {
  std::vector<int> owner;                   // flat index -> CPU index, -1 outside every CPU
  std::set<std::pair<int, int>> treeLinks;  // (flat from, flat to)
};

Grouping groupByCpu(const System& s, const FlatIndex& flat) {
  Grouping g;
  g.owner.assign(static_cast<size_t>(flat.size()), -1);
  for (int c = 0; c < s.count(NodeType::kCpu); ++c) {
    NodeRef cpu{NodeType::kCpu, c};
    g.owner[static_cast<size_t>(flat(cpu))] = c;
    std::deque<NodeRef> todo{cpu};
    while (!todo.empty()) {
      NodeRef at = todo.front();
      todo.pop_front();
      for (const Link& l : s.node(at).links) {
        if (l.type != LinkType::kPci && l.type != LinkType::kNet) continue;
        if (l.rem.type == NodeType::kCpu || g.owner[static_cast<size_t>(flat(l.rem))] != -1) continue;
        g.owner[static_cast<size_t>(flat(l.rem))] = c;
        g.treeLinks.insert({flat(at), flat(l.rem)});
        todo.push_back(l.rem);
      }
    }
  }
  return g;
}

std::vector<Edge> collectEdges(const System& s, const FlatIndex& flat, const Grouping& g) {
  std::vector<Edge> edges;
  std::map<std::tuple<int, int, int>, size_t> byKey;
  for (NodeType t : topo::kAllNodeTypes) {
    for (int i = 0; i < s.count(t); ++i) {
      NodeRef from{t, i};
      for (const Link& l : s.node(from).links) {
        if (l.rem == from) continue;  // NCCL's link of a node to itself
        int fa = flat(from), fb = flat(l.rem);
        auto key = std::make_tuple(std::min(fa, fb), std::max(fa, fb), topo::val(l.type));
        auto [it, added] = byKey.emplace(key, edges.size());
        if (added) {
          Edge e{from, l.rem, l.type, 0, 0, false};
          // Tree links (drawn from the CPU outwards) and links to an NVSwitch (which then
          // sits beyond its GPUs) rank the layout.
          bool down = g.treeLinks.count({fa, fb}) != 0 || l.rem.type == NodeType::kNvs;
          bool up = g.treeLinks.count({fb, fa}) != 0 || t == NodeType::kNvs;
          e.tree = down || up;
          if (up) std::swap(e.a, e.b);
          (e.a == from ? e.bwAb : e.bwBa) = l.bw;
          edges.push_back(e);
        } else {
          Edge& e = edges[it->second];
          (e.a == from ? e.bwAb : e.bwBa) = l.bw;
        }
      }
    }
  }
  return edges;
}

std::string bwText(float bw) { return strprintf("%.1f", static_cast<double>(bw)); }

// Links outside the PCI trees do not rank the layout. The inter-CPU link keeps its CPUs on
// one level (minlen 0) rather than being ignored: dot routes ignored links between boxes badly.
// The CPUs stand in one column, and a link between two that are not neighbours there went
// straight through the CPUs between them, as if it joined those: inter-CPU links leave and
// enter on the west side and arc in the margin.
const char* rankAttr(const Edge& e) {
  if (e.tree) return "";
  if (e.a.type == NodeType::kCpu && e.b.type == NodeType::kCpu) return " minlen=0 tailport=w headport=w";
  // GPU-to-GPU NVLinks (DGX-1's mesh) join GPUs of one level: arcs beside the column stay apart.
  if (e.a.type == NodeType::kGpu && e.b.type == NodeType::kGpu) return " constraint=false tailport=e headport=e";
  return " constraint=false";
}

std::string edgeLine(const System& s, const Edge& e) {
  std::string_view type = topo::linkTypeName(e.type);
  LinkStyle st = linkStyle(type);
  std::string label = std::string(type) + " " + bwText(e.bwAb);
  if (e.bwBa != 0 && e.bwBa != e.bwAb) label += " / " + bwText(e.bwBa);
  float bw = std::max(e.bwAb, e.bwBa);
  double pen = std::min(5.0, 1.0 + std::log2(1.0 + static_cast<double>(bw) / 12.0));
  return strprintf("  %s -- %s [label=%s color=\"%s\" fontcolor=\"%s\" style=%s penwidth=%.1f%s];\n",
                   dotQuote(topo::nodeName(s.node(e.a))).c_str(), dotQuote(topo::nodeName(s.node(e.b))).c_str(),
                   dotQuote(label).c_str(), st.color, st.color, st.style, pen, rankAttr(e));
}

std::string nodeLine(const Node& n, const std::map<int, std::string>& netNames, const char* indent) {
  NodeStyle st = nodeStyle(n.type);
  return strprintf("%s%s [shape=%s fillcolor=\"%s\" label=%s];\n", indent, dotQuote(topo::nodeName(n)).c_str(), st.shape,
                   st.fill, dotQuote(nodeLabel(n, netNames)).c_str());
}

// The caption: title, what the system holds, and the link colours in use.
std::string caption(const System& s, const std::vector<Edge>& edges, const std::string& title) {
  std::string counts;
  auto add = [&counts](int n, const char* what) {
    if (n == 0) return;
    if (!counts.empty()) counts += " · ";
    counts += strprintf("%d %s", n, what);
  };
  add(s.count(NodeType::kGpu), "GPU");
  add(s.count(NodeType::kCpu), "CPU");
  add(s.count(NodeType::kPci), "PCI switch");
  add(s.count(NodeType::kNvs), "NVSwitch");
  add(s.count(NodeType::kNic), "NIC");
  add(s.count(NodeType::kNet), "NET");
  if (s.hostHashes().size() > 1) add(static_cast<int>(s.hostHashes().size()), "hosts");
  std::string legend;
  std::set<int> seen;
  for (const Edge& e : edges) {
    if (!seen.insert(topo::val(e.type)).second) continue;
    std::string_view type = topo::linkTypeName(e.type);
    legend += strprintf(" <FONT COLOR=\"%s\">%s %s</FONT>", linkStyle(type).color,
                        std::string_view(linkStyle(type).style) == "solid" ? "━━" : "┅┅", std::string(type).c_str());
  }
  return "<<B>" + htmlEscape(title) + "</B><BR ALIGN=\"LEFT\"/>" + htmlEscape(counts) +
         "<BR ALIGN=\"LEFT\"/>links:" + legend + " (GB/s as NCCL counts them)<BR ALIGN=\"LEFT\"/>>";
}

}  // namespace

std::string busIdText(int64_t localId) {
  auto id = static_cast<unsigned long>(localId);
  return strprintf("%04lx:%02lx:%02lx.%01lx", id >> 20, (id & 0xff000) >> 12, (id & 0xff0) >> 4, id & 0xf);
}

std::string nodeLabel(const Node& n, const std::map<int, std::string>& netNames) {
  int64_t local = topo::localIdOf(n.id);
  std::string host = hostPrefix(n);
  switch (n.type) {
    case NodeType::kGpu: {
      std::string head = host + strprintf("GPU %d", n.gpu.dev);
      std::string rank = n.gpu.rank >= 0 ? strprintf("rank %d", n.gpu.rank) : "no rank";
      return head + "\n" + rank + strprintf(" · sm%d", n.gpu.cudaCompCap) + "\n" + busIdText(local);
    }
    case NodeType::kCpu:
      return host + "CPU · NUMA " + numaText(n) + (cpuText(n.cpu).empty() ? "" : "\n" + cpuText(n.cpu));
    case NodeType::kPci: return host + "PCI\n" + busIdText(local);
    case NodeType::kNvs: return host + "NVSwitch";
    case NodeType::kNic: return host + "NIC\n" + (onPci(n) ? busIdText(local) : "not on PCI");
    case NodeType::kNet: {
      auto it = netNames.find(n.net.dev);
      std::string name = it != netNames.end() && topo::systemIdOf(n.id) == 0 ? " " + it->second : "";
      double gbs = static_cast<double>(n.net.bw);
      return host + strprintf("NET %d%s\n%.1f GB/s (%.0f Gb/s)", n.net.dev, name.c_str(), gbs, gbs * 8) +
             (n.net.port >= 0 ? strprintf(" · port %d", n.net.port) : "");
    }
  }
  return topo::nodeName(n);
}

std::map<int, std::string> netNamesOf(const topo::TopoXml& xml) {
  std::map<int, std::string> names;
  if (xml.root() == nullptr) return names;
  std::vector<topo::XmlNode*> nets;
  topo::findAll(*xml.root(), "net", nets);
  for (const topo::XmlNode* net : nets) {
    if (!net->has("dev") || !net->has("name")) continue;
    names.emplace(std::atoi(net->get("dev").c_str()), net->get("name"));
  }
  return names;
}

std::string systemDot(const System& s, const TopoPictureOptions& o) {
  FlatIndex flat(s);
  Grouping g = groupByCpu(s, flat);
  std::vector<Edge> edges = collectEdges(s, flat, g);
  std::string out = "graph topology {\n";
  // Left to right: a PCI tree is far wider than deep (a p5.48xlarge has 40 leaves under 8
  // switches), so its levels go across and its leaves down, to be read by scrolling down.
  out += "  graph [fontname=\"Helvetica\" fontsize=12 labelloc=t labeljust=l newrank=true rankdir=LR nodesep=0.25 ranksep=0.6];\n";
  out += "  graph [label=" + caption(s, edges, o.title) + "];\n";
  out += "  node [fontname=\"Helvetica\" fontsize=10 style=\"rounded,filled\" color=\"#555555\"];\n";
  out += "  edge [fontname=\"Helvetica\" fontsize=9];\n";
  size_t hosts = std::max<size_t>(1, s.hostHashes().size());
  for (size_t h = 0; h < hosts; ++h) {
    bool hostBox = hosts > 1;
    if (hostBox) {
      out += strprintf("  subgraph cluster_host_%zu {\n    label=%s; style=\"rounded\"; color=\"#333333\";\n", h,
                       dotQuote(strprintf("host %zu (hash %lx)", h, static_cast<unsigned long>(s.hostHashes()[h]))).c_str());
    }
    auto onHost = [h](const Node& n) { return static_cast<size_t>(topo::systemIdOf(n.id)) == h; };
    for (int c = 0; c < s.count(NodeType::kCpu); ++c) {
      const Node& cpu = s.node(NodeType::kCpu, c);
      if (!onHost(cpu)) continue;
      out += strprintf("  subgraph cluster_cpu_%d {\n    label=%s; style=\"rounded,filled\"; fillcolor=\"#f5f7fb\"; color=\"#8899aa\";\n",
                       c, dotQuote(strprintf("NUMA %s", numaText(cpu).c_str())).c_str());
      for (NodeType t : topo::kAllNodeTypes)
        for (int i = 0; i < s.count(t); ++i)
          if (g.owner[static_cast<size_t>(flat({t, i}))] == c) out += nodeLine(s.node(t, i), o.netNames, "    ");
      out += "  }\n";
    }
    for (NodeType t : topo::kAllNodeTypes)
      for (int i = 0; i < s.count(t); ++i)
        if (g.owner[static_cast<size_t>(flat({t, i}))] == -1 && onHost(s.node(t, i)))
          out += nodeLine(s.node(t, i), o.netNames, "  ");
    if (hostBox) out += "  }\n";
  }
  for (const Edge& e : edges) out += edgeLine(s, e);
  out += "}\n";
  return out;
}

}  // namespace weft::tool
