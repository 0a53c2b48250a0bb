#include "core/topo/bound.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

#include "core/base/strings.h"

namespace weft::topo {
namespace {

// One node's graph as numbered vertices and directed links.
struct Arc {
  int from = 0, to = 0;
  float bw = 0;
  LinkType type = LinkType::kLoc;
};

struct Flat {
  std::vector<Arc> arcs;
  std::vector<bool> terminal;  // a GPU with a rank
  std::vector<float> port;     // a network port's speed (NET vertices), else 0
  int vertices = 0;
  int terminals = 0;
  float ports = 0;             // all ports of one node
};

// On one node the network is left out, as NCCL leaves it out (it trims a single node's NICs):
// data looped through a NIC and back is not counted.
bool networkDevice(NodeType t) { return t == NodeType::kNic || t == NodeType::kNet; }

Flat flatten(const System& s, int nodes) {
  Flat f;
  std::array<int, kNodeTypeCount> offset{};
  for (NodeType t : kAllNodeTypes) {
    offset[static_cast<size_t>(idx(t))] = f.vertices;
    f.vertices += s.count(t);
  }
  f.terminal.assign(static_cast<size_t>(f.vertices), false);
  f.port.assign(static_cast<size_t>(f.vertices), 0.0f);
  auto flat = [&](NodeRef r) { return offset[static_cast<size_t>(idx(r.type))] + r.index; };
  for (NodeType t : kAllNodeTypes) {
    for (int i = 0; i < s.count(t); ++i) {
      const Node& n = s.node(t, i);
      int v = flat({t, i});
      if (t == NodeType::kGpu && n.gpu.rank >= 0) {
        f.terminal[static_cast<size_t>(v)] = true;
        ++f.terminals;
      }
      if (nodes == 1 && networkDevice(t)) continue;
      if (t == NodeType::kNet) {
        f.port[static_cast<size_t>(v)] = n.net.bw;
        f.ports += n.net.bw;
      }
      for (const Link& l : n.links)
        if (!(l.rem == NodeRef{t, i}) && !(nodes == 1 && networkDevice(l.rem.type))) f.arcs.push_back({v, flat(l.rem), l.bw, l.type});
    }
  }
  return f;
}

// A partition: each vertex's part, or -1 for one that only forwards. Parts are numbered in the
// order of their first vertex, so that equal partitions compare equal.
using Partition = std::vector<int>;

int canonicalize(Partition& p) {
  std::map<int, int> renumber;
  for (int& x : p) {
    if (x < 0) continue;
    auto [it, added] = renumber.emplace(x, static_cast<int>(renumber.size()));
    x = it->second;
  }
  return static_cast<int>(renumber.size());
}

// What enters each part: links from outside it, and the network through its ports (at most
// what the ports elsewhere, on every node, can send).
struct PartCut {
  int gpus = 0;
  float total = 0;
  std::map<std::string, float> into;
};

std::vector<PartCut> cutsOf(const Flat& f, const Partition& p, int parts, int nodes) {
  std::vector<PartCut> cuts(static_cast<size_t>(parts));
  std::vector<float> ports(static_cast<size_t>(parts), 0.0f);
  for (int v = 0; v < f.vertices; ++v) {
    int part = p[static_cast<size_t>(v)];
    if (part < 0) continue;
    if (f.terminal[static_cast<size_t>(v)]) ++cuts[static_cast<size_t>(part)].gpus;
    ports[static_cast<size_t>(part)] += f.port[static_cast<size_t>(v)];
  }
  for (const Arc& a : f.arcs) {
    int to = p[static_cast<size_t>(a.to)];
    if (to < 0 || p[static_cast<size_t>(a.from)] == to) continue;
    cuts[static_cast<size_t>(to)].into[std::string(linkTypeName(a.type))] += a.bw;
  }
  for (size_t k = 0; k < cuts.size(); ++k) {
    float network = std::min(ports[k], static_cast<float>(nodes) * f.ports - ports[k]);
    if (network > 0) cuts[k].into["network"] += network;
    for (const auto& [type, bw] : cuts[k].into) cuts[k].total += bw;
  }
  return cuts;
}

// How a candidate splits a node, for naming the cut that binds.
enum class Split { kGpusAlone, kGroups, kNodeWhole };

struct Candidate {
  Partition parts;
  Split split;
  float level = 0;  // kGroups: the slowest link kept inside a group
};

// The parts of one node: GPUs alone; the node whole; the groups still joined when the links
// slower than a bandwidth are cut, for every bandwidth of the graph (each distinct partition
// once, named by the first way it was found).
std::vector<Candidate> candidates(const Flat& f) {
  std::vector<Candidate> out;
  Partition alone(static_cast<size_t>(f.vertices), -1);
  for (int v = 0, k = 0; v < f.vertices; ++v)
    if (f.terminal[static_cast<size_t>(v)]) alone[static_cast<size_t>(v)] = k++;
  out.push_back({alone, Split::kGpusAlone});
  out.push_back({Partition(static_cast<size_t>(f.vertices), 0), Split::kNodeWhole});
  std::vector<float> levels;
  for (const Arc& a : f.arcs) levels.push_back(a.bw);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  for (float level : levels) {
    std::vector<int> root(static_cast<size_t>(f.vertices));
    std::iota(root.begin(), root.end(), 0);
    auto find = [&](int v) {
      while (root[static_cast<size_t>(v)] != v) v = root[static_cast<size_t>(v)] = root[static_cast<size_t>(root[static_cast<size_t>(v)])];
      return v;
    };
    for (const Arc& a : f.arcs)
      if (a.bw >= level) root[static_cast<size_t>(find(a.from))] = find(a.to);
    std::vector<bool> hasGpu(static_cast<size_t>(f.vertices), false);
    for (int v = 0; v < f.vertices; ++v)
      if (f.terminal[static_cast<size_t>(v)]) hasGpu[static_cast<size_t>(find(v))] = true;
    Partition p(static_cast<size_t>(f.vertices), -1);
    for (int v = 0; v < f.vertices; ++v)
      if (hasGpu[static_cast<size_t>(find(v))]) p[static_cast<size_t>(v)] = find(v);
    out.push_back({std::move(p), Split::kGroups, level});
  }
  std::vector<Candidate> distinct;
  for (Candidate& c : out) {
    canonicalize(c.parts);
    if (std::none_of(distinct.begin(), distinct.end(), [&](const Candidate& d) { return d.parts == c.parts; }))
      distinct.push_back(std::move(c));
  }
  return distinct;
}

std::string shareText(const std::vector<CutShare>& into) {
  std::string out;
  for (const CutShare& s : into) out += (out.empty() ? "" : " + ") + strprintf("%s %.1f", s.type.c_str(), static_cast<double>(s.bw));
  return (out.empty() ? "nothing" : out) + " GB/s";
}

std::string partName(const Candidate& c, int partsPerNode, int nodes) {
  if (c.split == Split::kGpusAlone) return "each GPU";
  if (c.split == Split::kNodeWhole) return "each node";
  std::string joined = strprintf("links of %.1f GB/s or more join", static_cast<double>(c.level));
  if (partsPerNode == 1) return "the part of each node that " + joined + " to its GPUs";
  return strprintf("each of the %d groups of GPUs%s that ", partsPerNode, nodes > 1 ? " of a node" : "") + joined;
}

// The bound of one collective from one partition: the summed cut, or the tightest part alone.
struct Evaluated {
  float busBw = 0;
  size_t part = 0;  // the part to describe: the one that binds, or the least fed
};

Evaluated evaluate(const std::vector<PartCut>& cuts, int nodes, int terminals, bool allreduce) {
  double n = static_cast<double>(nodes) * terminals;
  double m = static_cast<double>(nodes) * static_cast<double>(cuts.size());
  double sum = 0;
  for (const PartCut& c : cuts) sum += static_cast<double>(nodes) * c.total;
  double best = (n - 1) / n * sum / (m - 1);
  size_t leastFed = 0, binding = cuts.size();
  for (size_t k = 0; k < cuts.size(); ++k) {
    double cap = cuts[k].total;
    double alone = allreduce ? 2 * (n - 1) / n * cap : (n - 1) * cap / (n - cuts[k].gpus);
    if (cap < cuts[leastFed].total) leastFed = k;
    if (alone < best) {
      best = alone;
      binding = k;
    }
  }
  return Evaluated{static_cast<float>(best), binding < cuts.size() ? binding : leastFed};
}

CollectiveBound describe(const std::vector<PartCut>& cuts, const Evaluated& e, const Candidate& c, int nodes) {
  CollectiveBound b;
  b.busBw = e.busBw;
  b.partsPerNode = static_cast<int>(cuts.size());
  const PartCut& part = cuts[e.part];
  b.gpusPerPart = part.gpus;
  for (const auto& [type, bw] : part.into) b.into.push_back({type, bw});
  std::stable_sort(b.into.begin(), b.into.end(), [](const CutShare& x, const CutShare& y) { return x.bw > y.bw; });
  bool uniform = std::all_of(cuts.begin(), cuts.end(), [&](const PartCut& k) { return k.total == part.total && k.gpus == part.gpus; });
  std::string who = partName(c, b.partsPerNode, nodes);
  if (!uniform && c.split == Split::kGpusAlone) who = "the least fed GPU";
  else if (!uniform)
    who = strprintf("the group of %d GPU%s, one of %d%s", part.gpus, part.gpus == 1 ? "" : "s", b.partsPerNode,
                    nodes > 1 ? " per node" : "");
  b.limit = "the links into " + who + " (" + shareText(b.into) + ")";
  return b;
}

}  // namespace

MachineBound machineBound(const System& node, int nodes) {
  MachineBound out;
  Flat f = flatten(node, nodes);
  out.nodes = nodes;
  out.ranks = nodes * f.terminals;
  if (out.ranks < 2) return out;
  out.defined = true;
  out.allreduce.busBw = out.allgather.busBw = -1;
  for (Candidate& c : candidates(f)) {
    int parts = 1 + *std::max_element(c.parts.begin(), c.parts.end());
    if (static_cast<int64_t>(parts) * nodes < 2) continue;
    std::vector<PartCut> cuts = cutsOf(f, c.parts, parts, nodes);
    for (bool allreduce : {true, false}) {
      CollectiveBound& best = allreduce ? out.allreduce : out.allgather;
      Evaluated e = evaluate(cuts, nodes, f.terminals, allreduce);
      if (best.busBw < 0 || e.busBw < best.busBw) best = describe(cuts, e, c, nodes);
    }
  }
  return out;
}

RingFigure ringFigure(const Graph& ring, int nodes) {
  RingFigure f;
  f.channels = ring.nChannels;
  f.channelBw = nodes > 1 ? std::min(ring.bwIntra, ring.bwInter) : ring.bwIntra;
  f.busBw = static_cast<float>(f.channels) * f.channelBw;
  return f;
}

std::string boundLine(const RingFigure& figure, const CollectiveBound& bound) {
  std::string rings = strprintf("rings %d x %.1f GB/s = %.1f GB/s", figure.channels, static_cast<double>(figure.channelBw),
                                static_cast<double>(figure.busBw));
  if (bound.busBw <= 0) return rings + "; no schedule can do better than 0 GB/s: " + bound.limit + " carry nothing";
  return rings + strprintf(" of a %.1f GB/s bound (%.0f%%): limited by ", static_cast<double>(bound.busBw),
                           100.0 * static_cast<double>(figure.busBw / bound.busBw)) +
         bound.limit;
}

}  // namespace weft::topo
