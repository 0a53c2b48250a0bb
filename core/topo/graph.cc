#include "core/topo/graph.h"

#include <cstdlib>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/topo/system_print.h"
#include "core/topo/xml_attr.h"

namespace weft::topo {
namespace {

std::string idName(const char* type, int64_t id) {
  return strprintf(" %s/%lx-%lx", type, static_cast<unsigned long>(systemIdOf(id)), static_cast<unsigned long>(localIdOf(id)));
}

// Link-type names of graph files. C2C has no name there: NCCL cannot export such a graph.
constexpr const char* kGraphTypeNames[] = {"LOC", "NVL", "NVB", nullptr, "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"};

Result<std::string> graphTypeName(int type) {
  if (type < 0 || type > 9 || kGraphTypeNames[type] == nullptr)
    return invalidArgument(strprintf("path type %d has no name in graph files", type));
  return std::string(kGraphTypeNames[type]);
}

int graphTypeValue(std::string_view name) {
  // NCCL's dictionary lookup: prefix match, unknown names fall back to LOC.
  for (int t = 0; t <= 9; ++t)
    if (kGraphTypeNames[t] != nullptr && startsWith(name, kGraphTypeNames[t])) return t;
  WEFT_INFO(log::kGraph, "KV Convert to int : could not find value of '%.*s' in dictionary, falling back to %d",
            static_cast<int>(name.size()), name.data(), 0);
  return 0;
}

// <gpu dev=…> in graph files: host index in the top byte, NVML index below.
int64_t gpuDevId(const Node& gpu) { return makeId(systemIdOf(gpu.id), gpu.gpu.dev); }

std::string longAttr(int64_t v) {
  // "%#lx": 0 is written "0", everything else with 0x.
  return v == 0 ? std::string("0") : strprintf("0x%lx", static_cast<unsigned long>(v));
}

std::string floatAttr(float v) { return strprintf("%g", static_cast<double>(v)); }

Status addChannel(const System& system, const Graph& graph, int c, XmlNode& xgraph) {
  XmlNode& ch = xgraph.addChild("channel");
  if (system.inter) ch.addChild("net").set("dev", longAttr(graph.inter[static_cast<size_t>(2 * c)]));
  for (int g = 0; g < graph.ngpus; ++g) {
    int idx = system.gpuIndexOfRank(graph.rank(c, g));
    if (idx < 0) return internalError(strprintf("graph export: rank %d is not a GPU of this system", graph.rank(c, g)));
    ch.addChild("gpu").set("dev", longAttr(gpuDevId(system.node(NodeType::kGpu, idx))));
    if (graph.id == kGraphNvls) break;  // NVLS channels name their head GPU only
  }
  if (system.inter) ch.addChild("net").set("dev", longAttr(graph.inter[static_cast<size_t>(2 * c + 1)]));
  return Status::ok();
}

}  // namespace

std::vector<std::string> graphLines(const System& system, const Graph& graph) {
  std::vector<std::string> out;
  out.push_back(strprintf("Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d",
                          static_cast<int>(graph.pattern), graph.crossNic, graph.nChannels,
                          static_cast<double>(graph.bwIntra), static_cast<double>(graph.bwInter),
                          std::string(pathTypeName(static_cast<PathType>(graph.typeIntra))).c_str(),
                          std::string(pathTypeName(static_cast<PathType>(graph.typeInter))).c_str(), graph.sameChannels));
  for (int c = 0; c < graph.nChannels; ++c) {
    std::string line = strprintf("%2d :", c);
    if (system.inter) line += idName("NET", graph.inter[static_cast<size_t>(2 * c)]);
    for (int i = 0; i < graph.ngpus; ++i) {
      int g = system.gpuIndexOfRank(graph.rank(c, i));
      if (g >= 0) line += idName("GPU", system.node(NodeType::kGpu, g).id);
      if (graph.id == kGraphNvls) break;
    }
    if (system.inter) line += idName("NET", graph.inter[static_cast<size_t>(2 * c + 1)]);
    out.push_back(std::move(line));
  }
  return out;
}

Result<TopoXml> graphsToXml(const System& system, const std::vector<const Graph*>& graphs) {
  TopoXml xml = TopoXml::withRoot("graphs");
  for (const Graph* g : graphs) {
    XmlNode& x = xml.root()->addChild("graph");
    x.set("id", std::to_string(g->id));
    x.set("pattern", std::to_string(static_cast<int>(g->pattern)));
    x.set("crossnic", std::to_string(g->crossNic));
    x.set("nchannels", std::to_string(g->nChannels));
    x.set("speedintra", floatAttr(g->bwIntra));
    x.set("speedinter", floatAttr(g->bwInter));
    x.set("latencyinter", floatAttr(g->latencyInter));
    WEFT_ASSIGN_OR_RETURN(std::string intra, graphTypeName(g->typeIntra));
    WEFT_ASSIGN_OR_RETURN(std::string inter, graphTypeName(g->typeInter));
    x.set("typeintra", intra);
    x.set("typeinter", inter);
    x.set("samechannels", std::to_string(g->sameChannels));
    for (int c = 0; c < g->nChannels; ++c) WEFT_TRY(addChannel(system, *g, c, x));
  }
  return xml;
}

namespace {

Status readChannel(const TopoXml& doc, const XmlNode& xch, int c, const System& system, Graph& graph) {
  XmlAttrs attrs(doc);
  int n = 0, g = 0;
  for (const auto& sub : xch.children()) {
    WEFT_ASSIGN_OR_RETURN(std::string text, attrs.string(*sub, "dev"));
    int64_t dev = static_cast<int64_t>(std::strtoull(text.c_str(), nullptr, 16));
    if (sub->name() == "net") {
      if (n >= 2) return invalidArgument(doc.where(*sub) + "a channel has at most two <net> elements");
      graph.inter[static_cast<size_t>(2 * c + n++)] = dev;
    } else if (sub->name() == "gpu") {
      int rank = -1;
      for (const Node& gpu : system.nodes(NodeType::kGpu))
        if (gpuDevId(gpu) == dev) rank = gpu.gpu.rank;
      if (rank == -1) return invalidArgument(doc.where(*sub) + "GPU dev " + text + " is not a GPU of this system");
      if (g >= graph.ngpus) return invalidArgument(doc.where(*sub) + "more GPUs in a channel than the system has");
      graph.rank(c, g++) = rank;
    }
  }
  return Status::ok();
}

}  // namespace

Result<int> graphFromXml(const TopoXml& xml, const System& system, int crossNicSetting, Graph& graph) {
  WEFT_TRY(xml.expectRoot("graphs"));
  XmlAttrs attrs(xml);
  int loaded = 0;
  for (const auto& xg : xml.root()->children()) {
    if (xg->name() != "graph") continue;
    WEFT_ASSIGN_OR_RETURN(int64_t id, attrs.integer(*xg, "id"));
    if (id != graph.id) continue;
    WEFT_ASSIGN_OR_RETURN(int64_t crossNic, attrs.integer(*xg, "crossnic"));
    if (crossNicSetting == 0 && crossNic == 1) continue;
    graph.crossNic = static_cast<int>(crossNic);
    WEFT_ASSIGN_OR_RETURN(int64_t pattern, attrs.integer(*xg, "pattern"));
    if (pattern < 1 || pattern > 6) return invalidArgument(xml.where(*xg) + "pattern must be 1-6");
    graph.pattern = static_cast<Pattern>(pattern);
    WEFT_ASSIGN_OR_RETURN(int64_t nChannels, attrs.integer(*xg, "nchannels"));
    WEFT_ASSIGN_OR_RETURN(double bwIntra, attrs.realOr(*xg, "speedintra", 0));
    WEFT_ASSIGN_OR_RETURN(double bwInter, attrs.realOr(*xg, "speedinter", 0));
    if (!xg->has("latencyinter")) WEFT_INFO(log::kGraph, "latencyinter not found in graph, using 0.0");
    WEFT_ASSIGN_OR_RETURN(double latency, attrs.realOr(*xg, "latencyinter", 0));
    graph.nChannels = static_cast<int>(nChannels);
    graph.bwIntra = static_cast<float>(bwIntra);
    graph.bwInter = static_cast<float>(bwInter);
    graph.latencyInter = static_cast<float>(latency);
    graph.typeIntra = graphTypeValue(xg->get("typeintra"));
    graph.typeInter = graphTypeValue(xg->get("typeinter"));
    WEFT_ASSIGN_OR_RETURN(int64_t same, attrs.integer(*xg, "samechannels"));
    graph.sameChannels = static_cast<int>(same);
    int c = 0;
    for (const auto& xch : xg->children()) {
      if (c >= kMaxChannels) return invalidArgument(xml.where(*xch) + "more than 64 channels");
      WEFT_TRY(readChannel(xml, *xch, c++, system, graph));
    }
    loaded = c;
  }
  return loaded;
}

}  // namespace weft::topo
