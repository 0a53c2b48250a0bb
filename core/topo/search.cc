#include "core/topo/search.h"

#include <algorithm>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/topo/paths.h"
#include "core/topo/search_engine.h"

namespace weft::topo {
namespace {

// Step budgets: counts of recursion steps, not time, so that results never depend on timing.
constexpr int64_t kGlobalBudget = 1ll << 19;
constexpr int kBudget = 1 << 14;
constexpr int kBudgetTree = 1 << 14;
constexpr int kBudgetSameChannels = 1 << 8;
constexpr int kMaxNvlsArity = 32;
constexpr int kMaxDirectArity = 7;

// GB/s per channel, tried from the top; chosen by the smallest compute capability and by
// whether the graph leaves the node.
constexpr float kSpeedIntra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
constexpr float kSpeedInter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                 7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr float kSm90SpeedIntra[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr float kSm90SpeedInter[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                     15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr float kSm100SpeedIntra[] = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr float kSm100SpeedInter[] = {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                      17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

struct SpeedArray {
  const float* v;
  int n;
};

template <size_t N>
SpeedArray arr(const float (&a)[N]) {
  return {a, static_cast<int>(N)};
}

SpeedArray speedsFor(int ccMin, bool inter) {
  if (!inter) return ccMin >= 100 ? arr(kSm100SpeedIntra) : ccMin >= 90 ? arr(kSm90SpeedIntra) : arr(kSpeedIntra);
  return ccMin >= 100 ? arr(kSm100SpeedInter) : ccMin >= 90 ? arr(kSm90SpeedInter) : arr(kSpeedInter);
}

void dupChannels(Graph& g, int ccMin) {
  if (g.nChannels == 0 || g.pattern == Pattern::kNvls) return;
  if (g.bwIntra < 25.0f) return;
  if (ccMin > 80 && g.bwIntra < 50.0f && g.nChannels > 4) return;
  int dup = std::min(g.nChannels * 2, g.maxChannels);
  for (int c = g.nChannels; c < dup; ++c) {
    for (int s = 0; s < g.ngpus; ++s) g.rank(c, s) = g.rank(c - g.nChannels, s);
    g.inter[static_cast<size_t>(2 * c)] = g.inter[static_cast<size_t>(2 * (c - g.nChannels))];
    g.inter[static_cast<size_t>(2 * c + 1)] = g.inter[static_cast<size_t>(2 * (c - g.nChannels) + 1)];
  }
  int factor = (dup + g.nChannels - 1) / g.nChannels;
  g.bwIntra /= static_cast<float>(factor);
  g.bwInter /= static_cast<float>(factor);
  g.nChannels = dup;
}

// The search loop of ncclTopoCompute, written as explicit steps: search, then relax one
// constraint (pass 1) or raise the speed (pass 2), until nothing is left to try.
class Compute {
 public:
  Compute(System& s, const Params& p, Graph& g, std::vector<SearchStep>* trace, std::vector<std::string>* lines)
      : sys_(s), params_(p), graph_(g), trace_(trace), lines_(lines), engine_(s, p, g) {}

  Status start(const SearchOptions& options);

 private:
  void run();
  enum class After { kSearchAgain, kDone };

  void setBounds();
  int search(const char* what);
  After relax(int time);
  bool raise(int time);
  void startPass2();
  void fallback();
  std::string verdict_;
  const char* step_ = "start";
  void note(const std::string& line) {
    WEFT_INFO(log::kGraph, "%s", line.c_str());
    if (lines_ != nullptr) lines_->push_back(line);
  }

  System& sys_;
  const Params& params_;
  Graph& graph_;
  std::vector<SearchStep>* trace_;
  std::vector<std::string>* lines_;
  detail::SearchEngine engine_;
  Graph tmp_;
  int ngpus_ = 0;
  int crossNic_ = 0;
  int minTypeIntra_ = 0, maxTypeIntra_ = 0, minTypeInter_ = 0, maxTypeInter_ = 0;
  int trySameChannels_ = 1;
  bool amd_ = false;
  int ccMin_ = 0;
  SpeedArray speeds_{nullptr, 0};
  int speedIndex_ = 0;
  float maxBw_ = 0;
  int64_t globalBudget_ = kGlobalBudget;
};

int Compute::search(const char* what) {
  int time = tmp_.sameChannels ? kBudgetSameChannels : tmp_.pattern == Pattern::kTree ? kBudgetTree : kBudget;
  int budget = time;
  tmp_.nChannels = 0;
  globalBudget_ -= time;
  engine_.searchRec(tmp_, &time);
  if (trace_ != nullptr) {
    trace_->push_back(SearchStep{graph_.id, what, tmp_.bwIntra, tmp_.bwInter, tmp_.typeIntra, tmp_.typeInter, tmp_.crossNic,
                                 tmp_.sameChannels, static_cast<int>(tmp_.pattern), budget, time, graph_.nChannels,
                                 graph_.bwIntra, graph_.bwInter});
  }
  return time;
}

// Pass 1, after a search that did not reach the best possible graph: relax one constraint.
Compute::After Compute::relax(int time) {
  Graph& t = tmp_;
  if (t.sameChannels == 1 && !(amd_ && t.typeIntra == val(PathType::kSys))) {
    t.sameChannels = 0;  // different channels (not through AMD CPUs)
    step_ = "diff channels";
    return After::kSearchAgain;
  }
  t.sameChannels = trySameChannels_;
  if (time != -1) globalBudget_ += time;
  else globalBudget_ = kGlobalBudget;
  if (globalBudget_ < 0 && graph_.nChannels) {
    verdict_ = "the global step budget (2^19) ran out";
    return After::kDone;
  }

  if (ccMin_ >= 90 && t.pattern == Pattern::kBalancedTree) {
    t.pattern = Pattern::kTree;  // a simpler tree
    step_ = "simpler tree";
    return After::kSearchAgain;
  }
  t.pattern = graph_.pattern;

  int maxIntra = sys_.inter ? t.typeInter : maxTypeIntra_;
  if (t.typeIntra < maxIntra && (graph_.nChannels == 0 || t.typeIntra < graph_.typeIntra)) {
    t.typeIntra += 1;
    step_ = "typeIntra+1";
    if (t.typeIntra < val(PathType::kDis)) return After::kSearchAgain;
  }
  t.typeIntra = minTypeIntra_;

  if (sys_.inter && t.typeInter < maxTypeInter_ &&
      (graph_.nChannels == 0 || t.typeInter < graph_.typeInter || t.typeInter < val(PathType::kPxn))) {
    t.typeInter += 1;
    step_ = "typeInter+1";
    if (t.typeInter < val(PathType::kDis)) return After::kSearchAgain;
  }
  t.typeInter = minTypeInter_;

  if (crossNic_ == 2 && t.crossNic == 0 &&
      (graph_.pattern == Pattern::kRing || graph_.pattern == Pattern::kBalancedTree)) {
    t.crossNic = 2;  // alternate NICs between channels
    step_ = "cross NIC";
    return After::kSearchAgain;
  }
  t.crossNic = crossNic_ == 1 ? 1 : 0;

  if (speedIndex_ < speeds_.n - 1 &&
      (graph_.nChannels == 0 || speeds_.v[speedIndex_ + 1] / graph_.bwInter > .49)) {
    t.bwInter = t.bwIntra = speeds_.v[++speedIndex_];  // slower channels
    step_ = "lower speed";
    return After::kSearchAgain;
  }
  speedIndex_ = 0;
  while (speeds_.v[speedIndex_] > maxBw_ && speedIndex_ < speeds_.n - 1) speedIndex_++;
  t.bwIntra = t.bwInter = speeds_.v[speedIndex_];
  verdict_ = "every relaxation (channels, tree, path types, cross-NIC, speeds) was tried";
  return After::kDone;
}

// Pass 1 found a graph: duplicate its channels when fast enough, then try faster speeds.
void Compute::startPass2() {
  dupChannels(graph_, ccMin_);
  tmp_ = graph_;
  speedIndex_ = 0;
  while (speeds_.v[speedIndex_] > graph_.bwInter && speedIndex_ < speeds_.n - 1) speedIndex_++;
  tmp_.bwIntra = tmp_.bwInter = speeds_.v[speedIndex_];
  tmp_.minChannels = graph_.nChannels;
}

// Pass 2: raise the speed (both for rings; the NVLS inter speed; the tree intra speed).
bool Compute::raise(int time) {
  Graph& t = tmp_;
  if (time != 0 && speedIndex_ > 0) {
    if (graph_.pattern == Pattern::kRing) {
      t.bwIntra = t.bwInter = speeds_.v[--speedIndex_];
      return true;
    }
    if (graph_.pattern == Pattern::kNvls && t.bwInter == graph_.bwInter && t.bwInter < t.bwIntra * 2) {
      t.minChannels = t.maxChannels = graph_.nChannels;
      t.bwInter = speeds_.v[--speedIndex_];
      return true;
    }
    if (t.bwIntra == graph_.bwIntra && t.bwIntra < t.bwInter * 2) {
      t.bwIntra = speeds_.v[--speedIndex_];
      return true;
    }
  }
  tmp_ = graph_;
  return false;
}

void Compute::setBounds() {
  ngpus_ = sys_.count(NodeType::kGpu);
  Pattern p = graph_.pattern;
  bool crossNicPattern = p == Pattern::kRing || p == Pattern::kBalancedTree || p == Pattern::kSplitTree;
  crossNic_ = sys_.count(NodeType::kNet) > 1 && crossNicPattern ? params_.crossNic : 0;
  graph_.crossNic = crossNic_ == 1 ? 1 : 0;
  graph_.bwIntra = graph_.bwInter = 0;
  graph_.latencyInter = 0;
  minTypeIntra_ = val(PathType::kLoc), minTypeInter_ = val(PathType::kPix);
  maxTypeIntra_ = val(PathType::kSys), maxTypeInter_ = val(PathType::kSys);
  if (ngpus_ > 1) {
    minTypeIntra_ = gpuMinPath(sys_, NodeType::kGpu);
    maxTypeIntra_ = gpuMaxPath(sys_, NodeType::kGpu);
  }
  if (sys_.inter) {
    minTypeInter_ = gpuMinPath(sys_, NodeType::kNet);
    maxTypeInter_ = gpuMaxPath(sys_, NodeType::kNet);
    maxTypeIntra_ = maxTypeInter_;
  }
  graph_.typeIntra = minTypeIntra_;
  graph_.typeInter = minTypeInter_;
  graph_.nChannels = 0;
  trySameChannels_ = p == Pattern::kNvls ? 0 : 1;
  graph_.sameChannels = trySameChannels_;
  const CpuInfo& cpu = sys_.node(NodeType::kCpu, 0).cpu;
  amd_ = cpu.arch == kCpuArchX86 && cpu.vendor == kCpuVendorAmd;
  ccMin_ = minCompCap(sys_);
}

Status Compute::start(const SearchOptions& options) {
  setBounds();
  if (options.graphFile != nullptr) {
    WEFT_INFO(log::kEnv, "NCCL_GRAPH_FILE set by environment to %s", options.graphFile->source().c_str());
    WEFT_ASSIGN_OR_RETURN(int loaded, graphFromXml(*options.graphFile, sys_, params_.crossNic, graph_));
    note(strprintf("Search %d : %d channels loaded from XML graph", graph_.id, loaded));
    if (graph_.nChannels > 0) return Status::ok();
  }
  Graph& g = graph_;
  if (g.pattern == Pattern::kNvls && (sys_.count(NodeType::kNvs) == 0 || ccMin_ < 90)) return Status::ok();
  // NVLS and CollNet direct have at most one head per GPU.
  if (g.pattern == Pattern::kNvls) g.maxChannels = std::min(kMaxNvlsArity, ngpus_);
  if (g.pattern == Pattern::kCollnetDirect) g.maxChannels = std::min(kMaxDirectArity + 1, ngpus_);
  if (ngpus_ == 1 && g.pattern != Pattern::kRing) g.pattern = Pattern::kTree;
  // Intra-node NVLS pulls evenly from all GPUs.
  if (!sys_.inter && g.pattern == Pattern::kNvls) g.minChannels = g.maxChannels;
  // Two NVLink islands joined by a slower link: trees work better but need two channels, and
  // rings must have as many channels as trees.
  if (g.pattern == Pattern::kRing && splitNvLink(sys_) && g.maxChannels >= 2 && g.minChannels == 1) g.minChannels = 2;

  tmp_ = g;
  speeds_ = speedsFor(ccMin_, sys_.inter);
  maxBw_ = sys_.maxBw;
  float totalBw = sys_.totalBw;
  if (ngpus_ > 1 && g.pattern != Pattern::kRing) totalBw = static_cast<float>(totalBw * (ngpus_ * 1.0 / (ngpus_ - 1)));
  while ((speeds_.v[speedIndex_] > maxBw_ || speeds_.v[speedIndex_] * static_cast<float>(g.minChannels) > totalBw) &&
         speedIndex_ < speeds_.n - 1)
    speedIndex_++;
  tmp_.bwIntra = tmp_.bwInter = speeds_.v[speedIndex_];
  run();
  if (g.nChannels == 0 && !g.collNet && g.pattern != Pattern::kNvls) fallback();
  return Status::ok();
}

void Compute::run() {
  int pass = 1;
  int time = search("start");
  while (true) {
    bool done = time == -1 || static_cast<float>(graph_.nChannels) * graph_.bwInter >= sys_.totalBw;
    if (pass == 1 && time == -1) verdict_ = "the channel limit was reached";
    else if (pass == 1 && done) verdict_ = "the channels carry the GPUs' total bandwidth";
    if (!done && pass == 1) {
      if (relax(time) == After::kSearchAgain) {
        time = search(step_);
        continue;
      }
    }
    if (pass == 1) {
      time = -1;
      startPass2();
      pass = 2;
    }
    if (raise(time)) {
      time = search("raise speed");
      continue;
    }
    break;
  }
  if (trace_ != nullptr) {
    SearchStep r;
    r.graphId = graph_.id;
    r.what = "result: pass 1 stopped because " + verdict_ + "; pass 2 kept the fastest speed that still found it";
    r.pattern = static_cast<int>(graph_.pattern);
    r.nChannels = graph_.nChannels;
    r.bestBwIntra = graph_.bwIntra;
    r.bestBwInter = graph_.bwInter;
    r.typeIntra = graph_.typeIntra;
    r.typeInter = graph_.typeInter;
    r.crossNic = graph_.crossNic;
    r.sameChannels = graph_.sameChannels;
    trace_->push_back(r);
  }
}

void Compute::fallback() {
  note(strprintf("Could not find a path for pattern %d, falling back to simple order", static_cast<int>(graph_.pattern)));
  for (int i = 0; i < ngpus_; ++i) graph_.rank(0, i) = sys_.node(NodeType::kGpu, i).gpu.rank;
  graph_.inter[0] = graph_.inter[1] = 0;
  graph_.bwIntra = graph_.bwInter = 0.1f;
  graph_.typeIntra = graph_.typeInter = val(PathType::kSys);
  graph_.nChannels = 1;
}

}  // namespace

void searchInit(System& s) {
  s.maxBw = 0;
  s.totalBw = 0;
  if (!s.inter && s.count(NodeType::kGpu) == 1) {
    s.maxBw = s.totalBw = kLocBw;
    return;
  }
  NodeType target = s.inter ? NodeType::kNet : NodeType::kGpu;
  for (const Node& gpu : s.nodes(NodeType::kGpu)) {
    for (const Path& p : gpu.paths[idx(target)])
      if (p.count() != 0) s.maxBw = std::max(s.maxBw, p.bw);
    float nvl = 0, pci = 0;
    for (const Link& l : gpu.links) {
      if (l.type == LinkType::kNvl) nvl += l.bw;
      if (l.type == LinkType::kPci) pci = l.bw;
    }
    s.totalBw = std::max(s.totalBw, std::max(pci, nvl));
  }
}

Status computeGraph(System& s, const Params& params, Graph& graph, const SearchOptions& options) {
  if (s.count(NodeType::kGpu) == 0) return invalidArgument("search: the system has no GPU");
  if (s.count(NodeType::kCpu) == 0) return invalidArgument("search: the system has no CPU");
  graph.resize(s.count(NodeType::kGpu));
  Compute c(s, params, graph, options.trace, options.lines);
  return c.start(options);
}

}  // namespace weft::topo
