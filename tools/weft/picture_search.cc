#include "tools/weft/picture_search.h"

#include <algorithm>
#include <array>
#include <map>
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

// Geometry, in points. Positions come from the structure (a node's GPUs in channel order, two
// rows that turn back, network ports in a column on the node's left, nodes one below the other,
// panels one below the other) and Graphviz only draws them (layout=nop2): dot's own layout of
// 64 panels of clusters took minutes or lost edges. Straight arrows join neighbours; a wire
// between nodes that are not neighbours runs in a lane left of the nodes.
constexpr double kPitch = 100;        // GPU centres along a row
constexpr double kRowPitch = 70;      // between rows of a node
constexpr double kGpuHalfW = 36, kGpuHalfH = 18;
constexpr double kPortHalfW = 36;
constexpr double kPortX = 56;         // port column, from the node box's left edge
constexpr double kFirstGpuWithPorts = 176;
constexpr double kFirstGpu = 16 + kGpuHalfW;
constexpr double kNodeTop = 28;       // room for "node k" above the first row
constexpr double kNodeBottom = 16;
constexpr double kNodeGap = 24;
constexpr double kLane = 16;
constexpr double kPanelCaption = 46;  // the panel's two caption lines
constexpr double kPanelGap = 30;

// Rows of a node of `gpus` GPUs: two (or an even number of) rows that turn back, so that a
// ring's last GPU of the node sits under its first, next to the ports.
int rowsFor(int gpus) { return gpus <= 1 ? 1 : 2 * ((gpus + 15) / 16); }

struct Point {
  double x = 0, y = 0;
};

enum class EdgeKind { kGpu, kPort, kWire, kDirect };

struct Edge {
  std::string from, to;
  std::string type;
  EdgeKind kind = EdgeKind::kGpu;
  int fromNode = 0, toNode = 0;
  int fromRank = -1, toRank = -1;  // GPU ends
  int64_t fromNet = -1, toNet = -1;  // port ends
};

// One panel: a graph of one channel, its nodes boxed by node, every position computed here.
class Panel {
 public:
  Panel(const SearchPicture& p, int index)
      : p_(p), index_(index), g_(p.node->gpusPerNode), nets_(static_cast<size_t>(p.nodes)), order_(static_cast<size_t>(p.nodes)) {}

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
    add({gpuId(from), gpuId(to), type, EdgeKind::kGpu, nodeOf(from), nodeOf(to), from, to});
  }

  // rank -> its node's port `net` (leaving), or the port -> rank (entering).
  void netEdge(int rank, int64_t net, bool leaving) {
    int node = nodeOf(rank);
    nets_[static_cast<size_t>(node)].insert(net);
    std::string type = gpuNetType(rank % g_, net);
    if (leaving) add({gpuId(rank), netId(node, net), type, EdgeKind::kPort, node, node, rank, -1, -1, net});
    else add({netId(node, net), gpuId(rank), type, EdgeKind::kPort, node, node, -1, rank, net, -1});
  }

  // Between the ports of two nodes, over the network.
  void wireEdge(int fromNode, int64_t fromNet, int toNode, int64_t toNet) {
    nets_[static_cast<size_t>(fromNode)].insert(fromNet);
    nets_[static_cast<size_t>(toNode)].insert(toNet);
    add({netId(fromNode, fromNet), netId(toNode, toNet), "NET", EdgeKind::kWire, fromNode, toNode, -1, -1, fromNet, toNet});
  }

  // Two ranks of different nodes whose ports are unknown: straight across, over the network.
  void directNetEdge(int from, int to) {
    add({gpuId(from), gpuId(to), "NET", EdgeKind::kDirect, nodeOf(from), nodeOf(to), from, to});
  }

  // The order in which node `node`'s GPUs are laid out: the channel's order through them.
  void setOrder(int node, std::vector<int> ranks) { order_[static_cast<size_t>(node)] = std::move(ranks); }

  // DOT text of the panel, its top at `top`; `height` receives how tall it is. `flip` turns
  // the top-down coordinates into Graphviz's (y upwards).
  std::string write(const std::string& caption, double top, double flipY, double& height) {
    place(top);
    height = bottom_ - top;
    std::string out = strprintf("  subgraph cluster_p%d {\n    graph [label=%s style=\"rounded\" color=\"#333333\" bb=\"%s\"];\n",
                                index_, caption.c_str(), bbText(0, top, width_, bottom_, flipY).c_str());
    for (int n = 0; n < p_.nodes; ++n) out += writeNode(n, flipY);
    out += "  }\n";
    for (const Edge& e : edges_) out += writeEdge(e, flipY);
    return out;
  }

  double width() const { return width_; }

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
  void add(Edge e) {
    if (drawn_.insert({e.from, e.to}).second) edges_.push_back(std::move(e));
  }

  static std::string bbText(double x0, double y0, double x1, double y1, double flipY) {
    return strprintf("%.1f,%.1f,%.1f,%.1f", x0, flipY - y1, x1, flipY - y0);
  }
  static std::string posText(Point p, double flipY) { return strprintf("%.1f,%.1f", p.x, flipY - p.y); }

  // Positions of every GPU and port, the node boxes, lanes for wires between distant nodes.
  void place(double top) {
    at_.clear();
    lane_.clear();
    boxes_.clear();
    int rows = rowsFor(g_);
    int perRow = (g_ + rows - 1) / rows;
    bool ports = std::any_of(nets_.begin(), nets_.end(), [](const std::set<int64_t>& s) { return !s.empty(); });
    int lanes = 0;
    for (const Edge& e : edges_)
      if (routed(e)) lane_[&e - edges_.data()] = lanes++;
    nodeLeft_ = 16 + (lanes > 0 ? lanes * kLane + 16 : 0);
    double firstGpu = nodeLeft_ + (ports ? kFirstGpuWithPorts : kFirstGpu);
    double nodeRight = firstGpu + (perRow - 1) * kPitch + kGpuHalfW + 16;
    width_ = nodeRight + 16;
    double nodeHeight = kNodeTop + (rows - 1) * kRowPitch + 2 * kGpuHalfH + kNodeBottom;
    double y = top + kPanelCaption;
    for (int n = 0; n < p_.nodes; ++n) {
      double firstRow = y + kNodeTop + kGpuHalfH;
      std::vector<int> ranks = layoutOrder(n);
      for (size_t i = 0; i < ranks.size(); ++i) {
        int row = static_cast<int>(i) / perRow, col = static_cast<int>(i) % perRow;
        if (row % 2 == 1) col = perRow - 1 - col;
        at_[gpuId(ranks[i])] = {firstGpu + col * kPitch, firstRow + row * kRowPitch};
      }
      double bottom = y + nodeHeight;
      bottom = std::max(bottom, placePorts(n, nodeLeft_ + kPortX, firstRow, firstRow + (rows - 1) * kRowPitch) + kGpuHalfH + kNodeBottom);
      boxes_.push_back({nodeLeft_, y, nodeRight, bottom});
      y = bottom + kNodeGap;
    }
    bottom_ = y - kNodeGap + 14;
  }

  // The node's GPUs in the channel's order, then any the channel does not name.
  std::vector<int> layoutOrder(int n) const {
    std::vector<int> ranks = order_[static_cast<size_t>(n)];
    for (int r = n * g_; r < (n + 1) * g_; ++r)
      if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) ranks.push_back(r);
    return ranks;
  }

  // A port the channel enters by goes level with the first row, one it leaves by level with the
  // last row (under the first GPU, where the rows turn back), one it does both by between them.
  // Returns the lowest port's centre.
  double placePorts(int n, double x, double firstRow, double lastRow) {
    double lowest = firstRow;
    std::map<double, int> taken;
    for (int64_t net : nets_[static_cast<size_t>(n)]) {
      std::string id = netId(n, net);
      bool in = false, out = false;
      for (const Edge& e : edges_) {
        if (e.kind != EdgeKind::kPort) continue;
        in = in || e.from == id;
        out = out || e.to == id;
      }
      double y = in && !out ? firstRow : out && !in ? lastRow : (firstRow + lastRow) / 2 + (firstRow == lastRow ? 40 : 0);
      y += 44 * taken[y]++;
      at_[id] = {x, y};
      lowest = std::max(lowest, y);
    }
    return lowest;
  }

  // Wires between nodes that are not next to each other in the column go round, in a lane.
  bool routed(const Edge& e) const { return e.kind == EdgeKind::kWire && e.toNode != e.fromNode + 1; }

  std::string writeNode(int n, double flipY) const {
    const auto& box = boxes_[static_cast<size_t>(n)];
    std::string out = strprintf("    subgraph cluster_p%d_n%d {\n      graph [label=%s style=\"rounded,filled\" fillcolor=\"#f5f7fb\" "
                                "color=\"#8899aa\" bb=\"%s\"];\n",
                                index_, n, dotQuote(strprintf("node %d", n)).c_str(),
                                bbText(box[0], box[1], box[2], box[3], flipY).c_str());
    for (int r = n * g_; r < (n + 1) * g_; ++r) {
      int gpu = p_.node->system.gpuIndexOfRank(r % g_);
      std::string label = strprintf("rank %d", r);
      if (gpu >= 0) label += strprintf("\nGPU %d", p_.node->system.node(NodeType::kGpu, gpu).gpu.dev);
      out += strprintf("      %s [label=%s pos=\"%s\"];\n", gpuId(r).c_str(), dotQuote(label).c_str(),
                       posText(at_.at(gpuId(r)), flipY).c_str());
    }
    for (int64_t net : nets_[static_cast<size_t>(n)]) {
      int dev = static_cast<int>(topo::localIdOf(net));
      auto it = p_.netNames.find(dev);
      std::string label = strprintf("NET %d", dev) + (it != p_.netNames.end() ? "\n" + it->second : "");
      out += strprintf("      %s [shape=ellipse fillcolor=\"#f6c7a6\" label=%s pos=\"%s\"];\n", netId(n, net).c_str(),
                       dotQuote(label).c_str(), posText(at_.at(netId(n, net)), flipY).c_str());
    }
    return out + "    }\n";
  }

  // Compass points keep arrows on the boxes' sides: along a row from side to side, down the
  // turn on the right, back up on the left, so that two GPUs joined both ways show two arrows;
  // into a GPU from its port on the left, out of it to the port from its left side, or from
  // below when the port is lower (a tree's port, which the same GPU also enters by).
  std::string ends(const Edge& e) const {
    if (e.kind == EdgeKind::kWire) return " tailport=w headport=w";
    Point a = at_.at(e.from), b = at_.at(e.to);
    if (e.kind == EdgeKind::kPort && e.fromNet >= 0) return " tailport=e headport=w";
    if (e.kind == EdgeKind::kPort) return a.y < b.y ? " tailport=s headport=e" : " tailport=w headport=e";
    if (a.y == b.y) return a.x < b.x ? " tailport=e headport=w" : " tailport=w headport=e";
    if (a.x == b.x) return a.y < b.y ? " tailport=e headport=e" : " tailport=w headport=w";
    return "";
  }

  // A wire in its lane: left from the port, along the lane, right into the other port, as a
  // B-spline whose control points lie on the segments (Graphviz draws it as given).
  std::string lanePath(const Edge& e, double flipY) const {
    double x = 16 + kLane / 2 + lane_.at(&e - edges_.data()) * kLane;
    Point a = at_.at(e.from), b = at_.at(e.to);
    Point start{a.x - kPortHalfW, a.y}, end{b.x - kPortHalfW, b.y}, last{end.x - 10, end.y};
    std::vector<Point> corners{start, {x, a.y}, {x, b.y}, last};
    std::string pos = "e," + posText(end, flipY) + " " + posText(start, flipY);
    for (size_t i = 1; i < corners.size(); ++i) {
      Point p = corners[i - 1], q = corners[i];
      for (double t : {1.0 / 3, 2.0 / 3}) pos += " " + posText({p.x + (q.x - p.x) * t, p.y + (q.y - p.y) * t}, flipY);
      pos += " " + posText(q, flipY);
    }
    return strprintf(" pos=\"%s\" lp=\"%s\"", pos.c_str(), posText({x + 12, (a.y + b.y) / 2}, flipY).c_str());
  }

  std::string writeEdge(const Edge& e, double flipY) const {
    LinkStyle st = linkStyle(e.type);
    std::string extra = e.kind == EdgeKind::kWire ? " penwidth=2" : "";
    if (routed(e)) extra += lanePath(e, flipY);
    else extra += ends(e);
    return strprintf("  %s -> %s [label=%s color=\"%s\" fontcolor=\"%s\" style=%s%s];\n", e.from.c_str(), e.to.c_str(),
                     dotQuote(e.type).c_str(), st.color, st.color, st.style, extra.c_str());
  }

  const SearchPicture& p_;
  int index_;
  int g_;
  std::vector<std::set<int64_t>> nets_;  // ports drawn, per node
  std::vector<std::vector<int>> order_;  // per node: GPUs in the channel's order
  std::vector<Edge> edges_;
  std::set<std::pair<std::string, std::string>> drawn_;
  std::map<std::string, Point> at_;
  std::map<std::ptrdiff_t, int> lane_;
  std::vector<std::array<double, 4>> boxes_;  // per node: left, top, right, bottom
  double nodeLeft_ = 0, width_ = 0, bottom_ = 0;
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
  int start = 0;  // where the ring enters a node, if it ever leaves one
  for (int i = 0; i < n; ++i) {
    if (panel.nodeOf(at(i)) == panel.nodeOf(at(i - 1))) continue;  // not where the ring enters a node
    if (start == 0) start = i;
    if (!panel.portsKnown()) continue;
    std::vector<int> run;
    for (int j = i; j < i + n && panel.nodeOf(at(j)) == panel.nodeOf(at(i)); ++j) run.push_back(at(j) % g);
    int k = graphChannelOf(p.node->graphs.ring, c, conn, run);
    if (k >= 0) ports[static_cast<size_t>(panel.nodeOf(at(i)))] = {p.node->graphs.ring.inter[static_cast<size_t>(2 * k)],
                                                                    p.node->graphs.ring.inter[static_cast<size_t>(2 * k + 1)]};
  }
  std::vector<std::vector<int>> order(static_cast<size_t>(p.nodes));
  for (int i = start; i < start + n; ++i) order[static_cast<size_t>(panel.nodeOf(at(i)))].push_back(at(i));
  for (int k = 0; k < p.nodes; ++k) panel.setOrder(k, std::move(order[static_cast<size_t>(k)]));
  for (int i = 0; i < n; ++i) {
    int from = at(i), to = at(i + 1), a = panel.nodeOf(from), b = panel.nodeOf(to);
    if (panel.sameDomain(from, to)) {
      panel.gpuEdge(from, to);
      continue;
    }
    int64_t out = ports[static_cast<size_t>(a)].second, in = ports[static_cast<size_t>(b)].first;
    if (out < 0 || in < 0) {
      panel.directNetEdge(from, to);
      continue;
    }
    panel.netEdge(from, out, true);
    panel.wireEdge(a, out, b, in);
    panel.netEdge(to, in, false);
  }
}

// Each node's GPUs from the top of its part of the tree down its chain, then the rest.
void treeOrder(const SearchPicture& p, int stored, Panel& panel) {
  const connect::Connection& conn = *p.conn;
  int g = p.node->gpusPerNode;
  for (int k = 0; k < p.nodes; ++k) {
    std::map<int, int> child;
    int topRank = -1;
    for (int r = k * g; r < (k + 1) * g && r < conn.nRanks; ++r) {
      int up = conn.treeUpOf(stored, r);
      if (up >= 0 && panel.nodeOf(up) == k) child.emplace(up, r);
      else if (topRank < 0) topRank = r;
    }
    std::vector<int> order;
    for (int r = topRank; r >= 0 && order.size() < static_cast<size_t>(g);) {
      order.push_back(r);
      auto it = child.find(r);
      r = it == child.end() ? -1 : it->second;
    }
    panel.setOrder(k, std::move(order));
  }
}

// The tree of channel `c`: arrows from each parent to its children; across nodes, through the
// port of the graph channel that starts at the node's top rank.
void drawTree(const SearchPicture& p, int c, Panel& panel) {
  const connect::Connection& conn = *p.conn;
  int stored = conn.source[static_cast<size_t>(c)];
  auto up = [&](int r) { return conn.treeUpOf(stored, r); };
  int g = p.node->gpusPerNode;
  treeOrder(p, stored, panel);
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
      panel.directNetEdge(parent, r);
    } else {
      panel.netEdge(parent, port[static_cast<size_t>(a)], true);
      panel.wireEdge(a, port[static_cast<size_t>(a)], b, port[static_cast<size_t>(b)]);
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

// One panel per (channel, graph), in the order they are drawn from the top.
struct PanelSpec {
  int channel = 0;
  bool ring = true;
};

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
  std::vector<PanelSpec> specs;
  for (int c : p.channels) {
    if (p.rings) specs.push_back({c, true});
    if (p.trees) specs.push_back({c, false});
  }
  // Panels are laid out first (their heights), then written with y flipped for Graphviz.
  std::vector<Panel> panels;
  panels.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    panels.emplace_back(p, static_cast<int>(i));
    if (specs[i].ring) drawRing(p, specs[i].channel, panels.back());
    else drawTree(p, specs[i].channel, panels.back());
  }
  std::string body;
  double top = 0, width = 0;
  // A first pass measures the total height, which the flip needs.
  for (int pass = 0; pass < 2; ++pass) {
    double flipY = top;
    top = 0;
    body.clear();
    for (size_t i = 0; i < panels.size(); ++i) {
      const PanelSpec& s = specs[i];
      std::string caption;
      if (s.ring) {
        std::string extra = conn.ringIndex(s.channel) != s.channel ? strprintf(" (repeats ring %d)", conn.ringIndex(s.channel)) : "";
        caption = panelCaption(s.channel, "ring", p.node->graphs.ring, extra);
      } else {
        int stored = conn.source[static_cast<size_t>(s.channel)];
        std::string extra = strprintf(" (tree %d of ring %d)", stored / std::max(1, conn.baseChannels), conn.ringIndex(s.channel));
        caption = panelCaption(s.channel, "tree", p.node->graphs.tree, extra);
      }
      double height = 0;
      body += panels[i].write(caption, top, flipY, height);
      top += height + kPanelGap;
      width = std::max(width, panels[i].width());
    }
    top = std::max(top - kPanelGap, 1.0);
  }
  std::string out = "digraph channels {\n";
  out += strprintf("  graph [layout=nop2 bb=\"0,0,%.1f,%.1f\" fontname=\"Helvetica\" fontsize=12 labelloc=t labeljust=l];\n",
                   width, top);
  out += "  graph [label=<<B>" + htmlEscape(p.title) + "</B><BR ALIGN=\"LEFT\"/>" +
         htmlEscape(strprintf("%d node%s × %d GPUs · %d channels · %d distinct rings", p.nodes,
                              p.nodes == 1 ? "" : "s", p.node->gpusPerNode, conn.nChannels, conn.baseChannels)) +
         "<BR ALIGN=\"LEFT\"/>arrows: ring order, tree parent to child; path types:" + legend() + "<BR ALIGN=\"LEFT\"/>>];\n";
  out += "  node [fontname=\"Helvetica\" fontsize=10 shape=box style=\"rounded,filled\" fillcolor=\"#dff0d0\" "
         "color=\"#555555\" width=1 height=0.5];\n";
  out += "  edge [fontname=\"Helvetica\" fontsize=9 arrowsize=0.7];\n";
  out += body;
  out += "}\n";
  return out;
}

}  // namespace weft::tool
