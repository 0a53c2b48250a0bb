#include "tools/weft/search_json.h"

#include <string>

#include "core/topo/system_print.h"

namespace weft::tool {
namespace {

std::string typeName(int t) { return std::string(topo::pathTypeName(static_cast<topo::PathType>(t))); }

std::string netName(int64_t id) {
  return "NET/" + std::to_string(topo::systemIdOf(id)) + "-" +
         [&] {
           char buf[32];
           std::snprintf(buf, sizeof(buf), "%lx", static_cast<unsigned long>(topo::localIdOf(id)));
           return std::string(buf);
         }();
}

const char* graphName(int id) {
  switch (id) {
    case topo::kGraphRing: return "ring";
    case topo::kGraphTree: return "tree";
    case topo::kGraphCollnetChain: return "collnetChain";
    case topo::kGraphNvls: return "nvls";
    case topo::kGraphCollnetDirect: return "collnetDirect";
  }
  return "?";
}

void writeGraph(JsonWriter& w, const topo::System& s, const topo::Graph& g) {
  w.beginObject();
  w.field("id", g.id).field("name", graphName(g.id)).field("pattern", static_cast<int>(g.pattern));
  w.field("crossNic", g.crossNic).field("nChannels", g.nChannels);
  w.field("bwIntra", static_cast<double>(g.bwIntra)).field("bwInter", static_cast<double>(g.bwInter));
  w.field("latencyInter", static_cast<double>(g.latencyInter));
  w.field("typeIntra", typeName(g.typeIntra)).field("typeInter", typeName(g.typeInter));
  w.field("sameChannels", g.sameChannels);
  w.key("channels").beginArray();
  for (int c = 0; c < g.nChannels; ++c) {
    w.beginObject();
    if (s.inter) w.field("netIn", netName(g.inter[static_cast<size_t>(2 * c)]));
    w.key("ranks").beginArray();
    for (int i = 0; i < g.ngpus; ++i) {
      w.value(g.rank(c, i));
      if (g.id == topo::kGraphNvls) break;
    }
    w.endArray();
    if (s.inter) w.field("netOut", netName(g.inter[static_cast<size_t>(2 * c + 1)]));
    w.endObject();
  }
  w.endArray();
  w.endObject();
}

void writeSystem(JsonWriter& w, const topo::System& s) {
  w.key("system").beginArray();
  for (topo::NodeType t : topo::kAllNodeTypes) {
    for (const topo::Node& n : s.nodes(t)) {
      w.beginObject();
      w.field("node", topo::nodeName(n));
      if (t == topo::NodeType::kGpu) w.field("rank", n.gpu.rank).field("dev", n.gpu.dev).field("sm", n.gpu.cudaCompCap);
      if (t == topo::NodeType::kNet) w.field("dev", n.net.dev).field("bw", static_cast<double>(n.net.bw)).field("port", n.net.port);
      w.key("links").beginArray();
      for (const topo::Link& l : n.links) {
        w.beginObject();
        w.field("type", std::string(topo::linkTypeName(l.type)));
        w.field("bw", static_cast<double>(l.bw));
        w.field("to", topo::nodeName(s.node(l.rem)));
        w.endObject();
      }
      w.endArray();
      w.endObject();
    }
  }
  w.endArray();
}

void writePaths(JsonWriter& w, const topo::System& s) {
  w.key("paths").beginArray();
  for (topo::NodeType t : {topo::NodeType::kGpu, topo::NodeType::kNet}) {
    for (const topo::Node& n : s.nodes(t)) {
      for (topo::NodeType pt : topo::kAllNodeTypes) {
        const auto& paths = n.paths[topo::idx(pt)];
        for (size_t i = 0; i < paths.size(); ++i) {
          w.beginObject();
          w.field("from", topo::nodeName(n)).field("to", topo::nodeName(s.node(pt, static_cast<int>(i))));
          w.field("hops", paths[i].count()).field("bw", static_cast<double>(paths[i].bw));
          w.field("type", std::string(topo::pathTypeName(paths[i].type)));
          w.endObject();
        }
      }
    }
  }
  w.endArray();
}

}  // namespace

void writeNodeJson(JsonWriter& w, const topo::SimulatedNode& node, bool withSystem) {
  const topo::System& s = node.system;
  w.beginObject();
  w.field("index", node.index).field("firstRank", node.firstRank).field("gpus", s.count(topo::NodeType::kGpu));
  w.field("maxBw", static_cast<double>(s.maxBw)).field("totalBw", static_cast<double>(s.totalBw));
  w.field("inter", s.inter);
  if (withSystem) {
    writeSystem(w, s);
    writePaths(w, s);
  }
  w.key("graphs").beginArray();
  for (const topo::Graph* g : node.graphs.dumpOrder())
    if (g->nChannels > 0) writeGraph(w, s, *g);
  w.endArray();
  w.endObject();
}

void writeTraceJson(JsonWriter& w, const std::vector<topo::SearchStep>& trace) {
  w.beginArray();
  for (const topo::SearchStep& t : trace) {
    w.beginObject();
    w.field("step", t.what).field("pattern", t.pattern);
    w.field("bwIntra", static_cast<double>(t.bwIntra)).field("bwInter", static_cast<double>(t.bwInter));
    w.field("typeIntra", typeName(t.typeIntra)).field("typeInter", typeName(t.typeInter));
    w.field("crossNic", t.crossNic).field("sameChannels", t.sameChannels);
    w.field("budget", t.budget).field("left", t.left);
    w.field("bestChannels", t.nChannels).field("bestBwIntra", static_cast<double>(t.bestBwIntra));
    w.field("bestBwInter", static_cast<double>(t.bestBwInter));
    w.endObject();
  }
  w.endArray();
}

namespace {

void writeCollectiveBound(JsonWriter& w, const topo::CollectiveBound& b, const topo::RingFigure& rings) {
  w.beginObject();
  w.field("busBw", static_cast<double>(b.busBw));
  w.field("ratio", b.busBw > 0 ? static_cast<double>(rings.busBw / b.busBw) : 0.0);
  w.field("partsPerNode", b.partsPerNode).field("gpusPerPart", b.gpusPerPart);
  w.key("into").beginObject();
  for (const topo::CutShare& s : b.into) w.field(s.type, static_cast<double>(s.bw));
  w.endObject();
  w.field("limit", b.limit);
  w.endObject();
}

}  // namespace

void writeBoundJson(JsonWriter& w, const topo::MachineBound& bound, const topo::RingFigure& rings) {
  w.beginObject();
  w.field("ranks", bound.ranks);
  if (bound.defined) {
    w.key("rings").beginObject();
    w.field("channels", rings.channels).field("channelBw", static_cast<double>(rings.channelBw));
    w.field("busBw", static_cast<double>(rings.busBw)).endObject();
    w.key("allreduce");
    writeCollectiveBound(w, bound.allreduce, rings);
    w.key("allgather");
    writeCollectiveBound(w, bound.allgather, rings);
  }
  w.endObject();
}

}  // namespace weft::tool
