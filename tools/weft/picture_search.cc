#include "tools/weft/picture_search.h"

#include <algorithm>
#include <set>

#include "core/base/strings.h"
#include "core/topo/paths.h"
#include "tools/weft/picture_dot.h"

namespace weft::tool {
namespace {

using topo::NodeType;

const char* patternName(topo::Pattern p) {
  switch (p) {
    case topo::Pattern::kBalancedTree: return "balanced tree";
    case topo::Pattern::kSplitTree: return "split tree";
    case topo::Pattern::kTree: return "tree";
    case topo::Pattern::kRing: return "ring";
    case topo::Pattern::kNvls: return "NVLS";
    case topo::Pattern::kCollnetDirect: return "CollNet direct";
  }
  return "?";
}

std::string typeText(int t) { return std::string(topo::pathTypeName(static_cast<topo::PathType>(t))); }

// How links between nodes place the nodes. kStacked: the link does not rank the layout, so the
// nodes are drawn one below the other (a ring through 8 nodes of 8 GPUs in one row would be 70
// boxes wide); kLevels: it does, so a tree's levels go left to right.
enum class Across { kStacked, kLevels };

// One panel: a graph of one channel, its nodes boxed by node, edges collected before writing
// so that network ports are declared inside the node they belong to.
class Panel {
 public:
  Panel(const SearchPicture& p, int index) : p_(p), index_(index), g_(p.node->gpusPerNode), nets_(static_cast<size_t>(p.nodes)) {}

  int nodeOf(int rank) const { return rank / g_; }
  // Connect's nodes: the topology's nodes, or single GPUs when they cannot talk without the
  // network (NCCL_P2P_DISABLE and NCCL_SHM_DISABLE), whose ports node 0's graphs do not give.
  bool sameDomain(int a, int b) const { return p_.conn->rankToNode[static_cast<size_t>(a)] == p_.conn->rankToNode[static_cast<size_t>(b)]; }
  bool portsKnown() const { return p_.conn->nNodes == p_.nodes; }

  // An arrow between two ranks on one node, labelled with the path type between their GPUs.
  void gpuEdge(int from, int to) {
    const topo::System& s = p_.node->system;
    int a = s.gpuIndexOfRank(from % g_), b = s.gpuIndexOfRank(to % g_);
    std::string type = a < 0 || b < 0 ? "?" : typeText(topo::val(s.node(NodeType::kGpu, a).pathTo(NodeType::kGpu, b).type));
    edge(gpuId(from), gpuId(to), type, "");
  }

  // rank -> its node's port `net` (leaving), or the port -> rank (entering).
  void netEdge(int rank, int64_t net, bool leaving) {
    int node = nodeOf(rank);
    nets_[static_cast<size_t>(node)].insert(net);
    std::string type = gpuNetType(rank % g_, net);
    if (leaving) edge(gpuId(rank), netId(node, net), type, "");
    else edge(netId(node, net), gpuId(rank), type, "");
  }

  // Between the ports of two nodes, over the network.
  void wireEdge(int fromNode, int64_t fromNet, int toNode, int64_t toNet, Across across) {
    nets_[static_cast<size_t>(fromNode)].insert(fromNet);
    nets_[static_cast<size_t>(toNode)].insert(toNet);
    edge(netId(fromNode, fromNet), netId(toNode, toNet), "NET", across == Across::kStacked ? " penwidth=2 constraint=false" : " penwidth=2");
  }

  // Two ranks of different nodes whose ports are unknown: straight across, over the network.
  void directNetEdge(int from, int to, Across across) {
    edge(gpuId(from), gpuId(to), "NET", across == Across::kStacked ? " constraint=false" : "");
  }

  std::string write(const std::string& caption) const {
    std::string out = strprintf("  subgraph cluster_p%d {\n    label=%s; style=\"rounded\"; color=\"#333333\"; margin=12;\n",
                                index_, caption.c_str());
    for (int n = 0; n < p_.nodes; ++n) {
      out += strprintf("    subgraph cluster_p%d_n%d {\n      label=%s; style=\"rounded,filled\"; fillcolor=\"#f5f7fb\"; color=\"#8899aa\";\n",
                       index_, n, dotQuote(strprintf("node %d", n)).c_str());
      for (int r = n * g_; r < (n + 1) * g_; ++r) {
        int gpu = p_.node->system.gpuIndexOfRank(r % g_);
        std::string label = strprintf("rank %d", r);
        if (gpu >= 0) label += strprintf("\nGPU %d", p_.node->system.node(NodeType::kGpu, gpu).gpu.dev);
        out += strprintf("      %s [label=%s];\n", gpuId(r).c_str(), dotQuote(label).c_str());
      }
      for (int64_t net : nets_[static_cast<size_t>(n)]) {
        int dev = static_cast<int>(topo::localIdOf(net));
        auto it = p_.netNames.find(dev);
        std::string label = strprintf("NET %d", dev) + (it != p_.netNames.end() ? "\n" + it->second : "");
        out += strprintf("      %s [shape=ellipse fillcolor=\"#f6c7a6\" label=%s];\n", netId(n, net).c_str(), dotQuote(label).c_str());
      }
      out += "    }\n";
    }
    out += "  }\n" + edges_;
    return out;
  }

 private:
  std::string gpuId(int rank) const { return strprintf("p%d_r%d", index_, rank); }
  std::string netId(int node, int64_t net) const {
    return strprintf("p%d_n%d_net%ld", index_, node, static_cast<long>(topo::localIdOf(net)));
  }
  std::string gpuNetType(int localRank, int64_t net) const {
    const topo::System& s = p_.node->system;
    int gpu = s.gpuIndexOfRank(localRank), n = s.find(NodeType::kNet, net);
    if (gpu < 0 || n < 0) return "?";
    const topo::Node& g = s.node(NodeType::kGpu, gpu);
    if (g.paths[topo::idx(NodeType::kNet)].size() <= static_cast<size_t>(n)) return "?";
    return typeText(topo::val(g.pathTo(NodeType::kNet, n).type));
  }
  // Once per pair: a node's port carries the links to all its child nodes.
  void edge(const std::string& from, const std::string& to, const std::string& type, const char* extra) {
    if (!drawn_.insert({from, to}).second) return;
    LinkStyle st = linkStyle(type);
    edges_ += strprintf("  %s -> %s [label=%s color=\"%s\" fontcolor=\"%s\" style=%s%s];\n", from.c_str(), to.c_str(),
                        dotQuote(type).c_str(), st.color, st.color, st.style, extra);
  }

  const SearchPicture& p_;
  int index_;
  int g_;
  std::vector<std::set<int64_t>> nets_;  // ports drawn, per node
  std::string edges_;
  std::set<std::pair<std::string, std::string>> drawn_;
};

// Whether graph channel k orders its GPUs as `run` (local ranks) begins.
bool ordersAs(const topo::Graph& graph, int k, const std::vector<int>& run) {
  bool same = k >= 0 && k < graph.nChannels && static_cast<int>(run.size()) <= graph.ngpus;
  for (size_t j = 0; same && j < run.size(); ++j) same = graph.rank(k, static_cast<int>(j)) == run[j];
  return same;
}

// The graph channel that gave communicator channel `c` its GPU order `run`: NCCL connects
// channel c from graph channel c (modulo the connected channels); another graph channel with the
// same order only when that one does not have it. Several graph channels often order the GPUs
// alike and differ in their NICs (OCI's BM.GPU4.8: channels 0 and 1 through NET 0 and NET 1).
int graphChannelOf(const topo::Graph& graph, int c, const connect::Connection& conn, const std::vector<int>& run) {
  if (ordersAs(graph, conn.ringIndex(c), run)) return conn.ringIndex(c);
  for (int k = 0; k < graph.nChannels; ++k)
    if (ordersAs(graph, k, run)) return k;
  return -1;
}

// The ring of channel `c`: each node's run of GPUs in ring order, leaving through the port of the
// graph channel that orders them so, entering the next node through that node's port.
void drawRing(const SearchPicture& p, int c, Panel& panel) {
  const connect::Connection& conn = *p.conn;
  std::vector<int> ring = connect::ringFrom(conn, c, 0);
  int n = static_cast<int>(ring.size());
  int g = p.node->gpusPerNode;
  auto at = [&](int i) { return ring[static_cast<size_t>(((i % n) + n) % n)]; };
  // Ports of each node's run: entering, leaving (-1 when no graph channel orders the run so).
  std::vector<std::pair<int64_t, int64_t>> ports(static_cast<size_t>(p.nodes), {-1, -1});
  for (int i = 0; i < n && panel.portsKnown(); ++i) {
    if (panel.nodeOf(at(i)) == panel.nodeOf(at(i - 1))) continue;  // not where the ring enters a node
    std::vector<int> run;
    for (int j = i; j < i + n && panel.nodeOf(at(j)) == panel.nodeOf(at(i)); ++j) run.push_back(at(j) % g);
    int k = graphChannelOf(p.node->graphs.ring, c, conn, run);
    if (k >= 0) ports[static_cast<size_t>(panel.nodeOf(at(i)))] = {p.node->graphs.ring.inter[static_cast<size_t>(2 * k)],
                                                                    p.node->graphs.ring.inter[static_cast<size_t>(2 * k + 1)]};
  }
  for (int i = 0; i < n; ++i) {
    int from = at(i), to = at(i + 1), a = panel.nodeOf(from), b = panel.nodeOf(to);
    if (panel.sameDomain(from, to)) {
      panel.gpuEdge(from, to);
      continue;
    }
    int64_t out = ports[static_cast<size_t>(a)].second, in = ports[static_cast<size_t>(b)].first;
    if (out < 0 || in < 0) {
      panel.directNetEdge(from, to, Across::kStacked);
      continue;
    }
    panel.netEdge(from, out, true);
    panel.wireEdge(a, out, b, in, Across::kStacked);
    panel.netEdge(to, in, false);
  }
}

// The tree of channel `c`: arrows from each parent to its children; across nodes, through the
// port of the graph channel that starts at the node's top rank.
void drawTree(const SearchPicture& p, int c, Panel& panel) {
  const connect::Connection& conn = *p.conn;
  int stored = conn.source[static_cast<size_t>(c)];
  auto up = [&](int r) { return conn.treeUpOf(stored, r); };
  int g = p.node->gpusPerNode;
  std::vector<int64_t> port(static_cast<size_t>(p.nodes), -1);
  for (int r = 0; r < conn.nRanks && panel.portsKnown(); ++r) {
    if (up(r) >= 0 && panel.nodeOf(up(r)) == panel.nodeOf(r)) continue;  // not a node's top rank
    int k = graphChannelOf(p.node->graphs.tree, c, conn, {r % g});
    if (k >= 0) port[static_cast<size_t>(panel.nodeOf(r))] = p.node->graphs.tree.inter[static_cast<size_t>(2 * k)];
  }
  for (int r = 0; r < conn.nRanks; ++r) {
    int parent = up(r);
    if (parent < 0) continue;
    int a = panel.nodeOf(parent), b = panel.nodeOf(r);
    if (panel.sameDomain(parent, r)) {
      panel.gpuEdge(parent, r);
    } else if (port[static_cast<size_t>(a)] < 0 || port[static_cast<size_t>(b)] < 0) {
      panel.directNetEdge(parent, r, Across::kLevels);
    } else {
      panel.netEdge(parent, port[static_cast<size_t>(a)], true);
      panel.wireEdge(a, port[static_cast<size_t>(a)], b, port[static_cast<size_t>(b)], Across::kLevels);
      panel.netEdge(r, port[static_cast<size_t>(b)], false);
    }
  }
}

std::string panelCaption(int c, const char* what, const topo::Graph& graph, const std::string& extra) {
  return "<<B>" + htmlEscape(strprintf("channel %d · %s", c, what)) + "</B>" + htmlEscape(extra) + "<BR ALIGN=\"LEFT\"/>" +
         htmlEscape(strprintf("bw %.1f/%.1f GB/s · %s/%s · %s", static_cast<double>(graph.bwIntra),
                              static_cast<double>(graph.bwInter), typeText(graph.typeIntra).c_str(),
                              typeText(graph.typeInter).c_str(), patternName(graph.pattern))) +
         "<BR ALIGN=\"LEFT\"/>>";
}

std::string legend() {
  std::string out;
  for (const char* t : {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET"})
    out += strprintf(" <FONT COLOR=\"%s\">%s</FONT>", linkStyle(t).color, t);
  return out;
}

}  // namespace

Result<std::vector<int>> parseChannelList(const std::string& text, int nChannels) {
  std::vector<int> out;
  if (text.empty() || text == "all") {
    for (int c = 0; c < nChannels; ++c) out.push_back(c);
    return out;
  }
  for (std::string_view item : split(text, ',')) {
    item = trim(item);
    size_t dash = item.find('-');
    auto lo = parseInt(item.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : parseInt(item.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo)
      return invalidUsage("channel list '" + text + "': expected numbers and ranges like 0,2-3");
    if (*hi >= nChannels) return invalidUsage(strprintf("channel %ld: the communicator has channels 0..%d", static_cast<long>(*hi), nChannels - 1));
    for (int64_t c = *lo; c <= *hi; ++c) out.push_back(static_cast<int>(c));
  }
  return out;
}

Result<std::string> searchDot(const SearchPicture& p) {
  if (p.nodes > kPictureMaxNodes)
    return invalidUsage(strprintf("--picture draws at most %d nodes (asked for %d)", kPictureMaxNodes, p.nodes));
  const connect::Connection& conn = *p.conn;
  std::string out = "digraph channels {\n";
  out += "  graph [fontname=\"Helvetica\" fontsize=12 rankdir=LR labelloc=t labeljust=l nodesep=0.2 ranksep=0.35];\n";
  out += "  graph [label=<<B>" + htmlEscape(p.title) + "</B><BR ALIGN=\"LEFT\"/>" +
         htmlEscape(strprintf("%d node%s × %d GPUs · %d channels · %d distinct rings", p.nodes,
                              p.nodes == 1 ? "" : "s", p.node->gpusPerNode, conn.nChannels, conn.baseChannels)) +
         "<BR ALIGN=\"LEFT\"/>arrows: ring order, tree parent to child; path types:" + legend() + "<BR ALIGN=\"LEFT\"/>>];\n";
  out += "  node [fontname=\"Helvetica\" fontsize=10 shape=box style=\"rounded,filled\" fillcolor=\"#dff0d0\" color=\"#555555\"];\n";
  out += "  edge [fontname=\"Helvetica\" fontsize=9 arrowsize=0.7];\n";
  std::vector<std::string> panels;
  for (int c : p.channels) {
    if (p.rings) {
      Panel panel(p, static_cast<int>(panels.size()));
      drawRing(p, c, panel);
      std::string extra = conn.ringIndex(c) != c ? strprintf(" (repeats ring %d)", conn.ringIndex(c)) : "";
      panels.push_back(panel.write(panelCaption(c, "ring", p.node->graphs.ring, extra)));
    }
    if (p.trees) {
      Panel panel(p, static_cast<int>(panels.size()));
      drawTree(p, c, panel);
      int stored = conn.source[static_cast<size_t>(c)];
      std::string extra = strprintf(" (tree %d of ring %d)", stored / std::max(1, conn.baseChannels), conn.ringIndex(c));
      panels.push_back(panel.write(panelCaption(c, "tree", p.node->graphs.tree, extra)));
    }
  }
  // dot stacks unconnected panels of a left-to-right graph bottom up: the last one written is
  // drawn on top, so the first channel is written last.
  for (auto it = panels.rbegin(); it != panels.rend(); ++it) out += *it;
  out += "}\n";
  return out;
}

}  // namespace weft::tool
