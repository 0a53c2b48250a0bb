#include "core/topo/search_engine.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <span>

#include "core/topo/paths.h"

namespace weft::topo::detail {
namespace {

constexpr int kPciOrderBudget = 1 << 10;  // the PCI-order reference try: not counted, kept short

// roundf (half away from zero) without the libm call, exact: floats of magnitude 2^23 or more
// are integers, and below 2^31 truncation to int and x - trunc(x) are exact.
inline float roundHalfAway(float x) {
  if (!(std::fabs(x) < 2147483648.0f)) return x;
  float t = static_cast<float>(static_cast<int32_t>(x));
  float frac = x - t;
  return t + static_cast<float>((frac >= 0.5f) - (frac <= -0.5f));
}

// Floating-point subtraction rounded to 1e-3, so that reserving and releasing bandwidth
// returns links to their exact starting values (NCCL's SUB_ROUND).
inline float subRound(float a, float b) { return roundHalfAway((a - b) * 1000) / 1000; }

bool isTree(Pattern p) { return p == Pattern::kBalancedTree || p == Pattern::kTree || p == Pattern::kSplitTree; }

struct GpuScore {
  int g;
  int startIndex;  // least important
  int intraNhops;
  int intraBw;
  int interNhops;
  int interBw;  // most important (then NCCL's interPciBw, which orderByPci sorts by)
};

// NCCL's order of next GPUs (cmpScore) but for the PCI bandwidth, the one key that changes
// during a search: SearchEngine::orderByPci puts it in second place.
bool scoreBefore(const GpuScore& a, const GpuScore& b) {
  if (a.interBw != b.interBw) return a.interBw > b.interBw;
  if (a.interNhops != b.interNhops) return a.interNhops < b.interNhops;
  if (a.intraBw != b.intraBw) return a.intraBw > b.intraBw;
  if (a.intraNhops != b.intraNhops) return a.intraNhops < b.intraNhops;
  return a.startIndex < b.startIndex;
}

}  // namespace

SearchEngine::SearchEngine(System& system, const Params& params, Graph& best)
    : sys_(system), params_(params), best_(best), ngpus_(system.count(NodeType::kGpu)) {
  buildPathTables();
  used_.assign(static_cast<size_t>(ngpus_), 0);
  useMasks_ = ngpus_ <= 64 && !params_.searchFloatReference;
  hasNvs_ = sys_.count(NodeType::kNvs) != 0;
  for (const Node& gpu : sys_.nodes(NodeType::kGpu)) ranks_.push_back(gpu.gpu.rank);
  // Each GPU's PCI link to its switch, both directions (NCCL's gpuPciBw reads their bandwidth
  // as it is at that moment of the search). -1: no PCI link.
  for (int g = 0; g < ngpus_; ++g) {
    std::array<int32_t, 2> pair{-1, -1};
    const Node& gpu = sys_.node(NodeType::kGpu, g);
    for (const Link& up : gpu.links) {
      if (up.type != LinkType::kPci) continue;
      for (const Link& down : sys_.node(up.rem).links) {
        if (!(down.rem == NodeRef{NodeType::kGpu, g})) continue;
        pair = {linkIndex(&up), linkIndex(&down)};
        break;
      }
      break;
    }
    gpuPciLinks_.push_back(pair);
  }
  const auto& netNodes = sys_.nodes(NodeType::kNet);
  nets_ = static_cast<int>(netNodes.size());
  netAt_.assign(static_cast<size_t>(kMaxChannels * 2), -1);
  for (int n = 0; n < nets_; ++n) {
    const Node& net = netNodes[static_cast<size_t>(n)];
    // What netIndex(id) gave: the first NET with the id.
    int first = 0;
    while (netNodes[static_cast<size_t>(first)].id != net.id) ++first;
    // NET indices sharing a physical port (same ASIC and port): they share its bandwidth.
    samePortStart_.push_back(static_cast<int>(samePortList_.size()));
    for (int b = 0; b < nets_; ++b) {
      const Node& other = netNodes[static_cast<size_t>(b)];
      if (other.net.asic == net.net.asic && other.net.port == net.net.port) samePortList_.push_back(b);
    }
    const bool alone = static_cast<int>(samePortList_.size()) - samePortStart_.back() == 1;
    PathType t = PathType::kDis;  // stays DIS when no GPU is reachable at all
    netLocalGpus_.push_back(localNodes(sys_, NodeType::kNet, n, NodeType::kGpu, &t));
    netFacts_.push_back(NetFacts{net.id, net.net.asic, net.net.port, net.net.latency, first, net.net.localGpu,
                                 net.net.collSupport != 0, t == PathType::kDis, alone});
  }
  samePortStart_.push_back(static_cast<int>(samePortList_.size()));
  sortedCache_.resize(static_cast<size_t>(ngpus_ * (nets_ + 1)));
  chanPci_.assign(static_cast<size_t>((kMaxChannels + 1) * ngpus_), 0);
  selectNetsCache_.resize(static_cast<size_t>(kPathTypes * (ngpus_ + 1)));
  sameRailCache_.resize(static_cast<size_t>(kPathTypes * ngpus_ * nets_));
}

int32_t SearchEngine::linkIndex(const Link* l) const {
  auto it = std::find(links_.begin(), links_.end(), l);
  return it != links_.end() ? static_cast<int32_t>(it - links_.begin()) : -1;
}

void SearchEngine::putNet(Graph& graph, int slot, int n) {
  const NetFacts& f = netFacts_[static_cast<size_t>(n)];
  graph.inter[static_cast<size_t>(slot)] = f.id;
  netAt_[static_cast<size_t>(slot)] = f.firstIndex;
}

void SearchEngine::buildPathTables() {
  // Number every link, node by node, so that the search can keep their bandwidths in a flat
  // array: a link's index is its node's first index plus its position among the node's links.
  std::array<std::vector<int32_t>, kNodeTypeCount> first;
  for (NodeType t : kAllNodeTypes) {
    for (Node& n : sys_.nodes(t)) {
      first[idx(t)].push_back(static_cast<int32_t>(links_.size()));
      for (Link& l : n.links) links_.push_back(&l);
    }
  }
  // The index of `l`, a link of `owner` (found among all links if it is not; -1 if none).
  auto indexOf = [&](NodeRef owner, const Link* l) -> int32_t {
    if (l == nullptr) return -1;
    const std::vector<Link>& own = sys_.node(owner).links;
    if (!own.empty() && l >= own.data() && l < own.data() + own.size())
      return first[idx(owner.type)][static_cast<size_t>(owner.index)] + static_cast<int32_t>(l - own.data());
    auto it = std::find(links_.begin(), links_.end(), l);  // not expected: links are built that way
    return it != links_.end() ? static_cast<int32_t>(it - links_.begin()) : -1;
  };
  for (NodeType t : kAllNodeTypes)
    for (const Node& n : sys_.nodes(t))
      for (const Link& l : n.links) revIndex_.push_back(indexOf(l.rem, l.rev));

  const NodeType kinds[] = {NodeType::kGpu, NodeType::kNet, NodeType::kNvs};
  // Every path's hops go to one pool, sized first so that the pointers into it stay valid.
  size_t pool = 0;
  for (NodeType t1 : kinds)
    for (NodeType t2 : kinds)
      for (const Node& n : sys_.nodes(t1))
        for (const Path& p : n.paths[idx(t2)]) pool += 2 * p.hops.size();
  hopPool_.clear();
  hopPool_.reserve(pool);
  for (NodeType t1 : kinds) {
    for (NodeType t2 : kinds) {
      Table& table = tables_[idx(t1)][idx(t2)];
      table.stride = sys_.count(t2);
      table.paths.assign(static_cast<size_t>(sys_.count(t1) * sys_.count(t2)), FastPath{});
      bool intra = (t1 == NodeType::kGpu || t1 == NodeType::kNvs) && (t2 == NodeType::kGpu || t2 == NodeType::kNvs);
      for (int i1 = 0; i1 < sys_.count(t1); ++i1) {
        const auto& paths = sys_.node(t1, i1).paths[idx(t2)];
        for (int i2 = 0; i2 < sys_.count(t2); ++i2) {
          FastPath& f = table.paths[static_cast<size_t>(i1 * table.stride + i2)];
          f.intra = intra;
          f.fromGpu = t1 == NodeType::kGpu;
          const auto& revPaths = sys_.node(t2, i2).paths[idx(t1)];
          if (paths.empty() || revPaths.empty()) continue;  // never computed: unusable, as DIS
          const Path& p = paths[static_cast<size_t>(i2)];
          f.count = p.count();
          f.type = val(p.type);
          f.revType = val(revPaths[static_cast<size_t>(i1)].type);
          // GPU P2P through an Intel CPU root complex turns into 64-byte TLPs: more PCI bandwidth.
          f.pciOverhead = p.type == PathType::kPhb && f.fromGpu && p.viaIntelCpu;
          f.plain = true;
          // Hop by hop from the path's start: each hop is a link of the node the one before reached.
          const size_t hops = hopPool_.size();
          NodeRef at{t1, i1};
          for (const Link* l : p.hops) {
            int32_t i = indexOf(at, l);
            if (i < 0) break;  // not a link of this system: the path stays unusable, as DIS
            hopPool_.push_back(i);
            if (l->revCost == RevCost::kPowerNvlink || (l->revCost == RevCost::kPreAmpereGpu && !f.fromGpu))
              f.plain = false;
            at = l->rem;
          }
          if (hopPool_.size() - hops != p.hops.size()) {
            hopPool_.resize(hops);
            f = FastPath{};
            f.intra = intra;
            f.fromGpu = t1 == NodeType::kGpu;
            continue;
          }
          f.hops = hopPool_.data() + hops;
          if (f.pciOverhead) {
            f.coded = hopPool_.data() + hopPool_.size();
            for (int s = 0; s < f.count; ++s) {
              const Link* l = p.hops[static_cast<size_t>(s)];
              hopPool_.push_back(f.hops[s] * 2 + (l->type == LinkType::kPci ? 1 : 0));
            }
          }
          // The integer code checks each link as it writes it and gives back what it wrote on a
          // failure: only right when no link appears twice (paths never repeat one, but the
          // float code covers it if they do).
          for (int a = 0; a < f.count && f.plain; ++a)
            for (int b = a + 1; b < f.count; ++b)
              if (f.hops[a] == f.hops[b]) f.plain = false;
        }
      }
    }
  }
}

// Why integer arithmetic equals NCCL's SUB_ROUND(a, b) = roundf((a - b) * 1000) / 1000 when
// a = fl(ka/1000), b = fl(kb/1000), |ka|, |kb|, |ka - kb| < kMilliLimit = 4,000,000 (the
// integer code uses no result outside that range: it hands such a step to the float code).
// a and b are below 4000.001 < 2^12, so each is within 2^-13 of ka/1000 and kb/1000; the exact
// a - b is within 4000 + 2^-12 < 2^12 of zero and rounds by at most 2^-13; the product is below
// 4.1e6 < 2^22 and rounds by at most 2^-3. The computed (a - b) * 1000 is therefore within
// 1000 * 3 * 2^-13 + 2^-3 < 0.492 of the integer ka - kb, roundf returns ka - kb, and the
// division returns fl((ka - kb)/1000) (ka - kb is exact as a float, being below 2^24).
// Comparisons agree too: fl(k/1000) is strictly increasing in k there (each value is within
// 2^-13 of k/1000, and consecutive ones are 1e-3 apart). Links of NVLink machines up to about
// 4 TB/s per GPU stay in this range. Past 4,096 GB/s the float spacing doubles and the bound
// passes 1/2: SUB_ROUND does drift there (tests/unit/topo_search_bw_test.cc finds it on about 6%
// of the updates it tries), so a larger value (a CPU-attached NIC's 5,000 GB/s link, 5,052.6
// GB/s NVSwitch links in one corpus file) is a wide link: wideStep computes each update in
// NCCL's floats and keeps it in integers only where both directions come out exact.
int32_t SearchEngine::exactMilli(float bw) {
  if (!(std::fabs(bw) < static_cast<float>(kMilliLimit) / 1000.0f)) return kSlow;
  float k = roundHalfAway(bw * 1000);
  if (!(std::fabs(k) < static_cast<float>(kMilliLimit))) return kSlow;
  if (k / 1000.0f != bw) return kSlow;
  return static_cast<int32_t>(k);
}

// A wide value: fl(k/1000) with 0 <= k < kWideLimit (bw * 1000 may miss k by one there: such
// a value is kept as a float, which is only slower).
int32_t SearchEngine::linkMilli(float bw) {
  const int32_t small = exactMilli(bw);
  if (small != kSlow) return small;
  if (!(bw >= 0 && bw < static_cast<float>(kWideLimit) / 1000.0f)) return kSlow;
  const float k = roundHalfAway(bw * 1000);
  if (!(k < static_cast<float>(kWideLimit)) || k / 1000.0f != bw) return kSlow;
  return kWide + static_cast<int32_t>(k);
}

float SearchEngine::subRoundBw(float a, float b) { return subRound(a, b); }

// NCCL's SUB_ROUND on a wide link holding fl(k/1000), with cost fl(c/1000): setLinkBw's
// arithmetic, kept when the result r is again a wide value.
bool SearchEngine::wideDrift(int32_t& m, int32_t c) {
  const float r = roundHalfAway((milliToBw(m - kWide) - milliToBw(c)) * 1000);
  if (!(r >= 0 && r < static_cast<float>(kWideLimit))) return false;
  m = kWide + static_cast<int32_t>(r);
  return true;
}

// NCCL's SUB_ROUND on wide link m with cost c, then the SUB_ROUND of the give-back (cost -c:
// milliToBw(-c) is -milliToBw(c) exactly). The result is kept in the wide form when it gives
// k - c and the give-back returns k: integer arithmetic then undoes it as NCCL's does.
int32_t SearchEngine::wideUpdate(int32_t m, int32_t c) {
  int32_t taken = m;
  if (!wideDrift(taken, c)) return kSlow;
  int32_t back = taken;
  if (taken != m - c || !wideDrift(back, -c) || back != m) return -taken;
  return taken;
}

// The check a < b is k < c: both are in the range where fl(./1000) is strictly increasing.
SearchEngine::Exact SearchEngine::wideStep(int32_t& m, int32_t c) {
  if (m - kWide < c) return kShort;
  const int32_t u = wideUpdate(m, c);
  if (u < 0) return kFloat;
  m = u;
  return kDone;
}

// Link i = SUB_ROUND(a, b), a its value; kept small, wide (a wide link stays wide while the
// value allows it) or float.
WEFT_SEARCH_INLINE inline void SearchEngine::setLinkBw(int i, float a, float b) {
  float k = roundHalfAway((a - b) * 1000);
  LinkBw& l = bw_[static_cast<size_t>(i)];
  const bool wasSmall = isSmall(l.milli);
  if (std::fabs(k) < static_cast<float>(kMilliLimit) && l.milli < kWide) {
    l.milli = static_cast<int32_t>(k);
  } else if (k >= 0 && k < static_cast<float>(kWideLimit)) {
    l.milli = kWide + static_cast<int32_t>(k);
  } else {
    l.milli = kSlow;
    l.slowBw = k / 1000;
  }
  const bool small = isSmall(l.milli);
  if (small != wasSmall) slowLinks_ += small ? -1 : 1, ++slowChanges_;
}

void SearchEngine::loadLinkBw() {
  netBw_.clear();
  for (const Node& n : sys_.nodes(NodeType::kNet)) netBw_.push_back(n.net.bw);
  // A link still holding what the engine last loaded or stored keeps its form; others are
  // converted.
  const bool known = bw_.size() == links_.size();
  bw_.resize(links_.size());
  linkValue_.resize(links_.size());
  floatMemo_.resize(2 * links_.size());
  bool converted = !known;
  for (size_t i = 0; i < links_.size(); ++i) {
    const float v = links_[i]->bw;
    if (known && v == linkValue_[i]) continue;
    bw_[i].milli = linkMilli(v);
    bw_[i].slowBw = v;
    linkValue_[i] = v;
    converted = true;
  }
  if (converted) {
    slowLinks_ = static_cast<int>(
        std::count_if(bw_.begin(), bw_.end(), [](const LinkBw& l) { return !isSmall(l.milli); }));
    ++slowChanges_;
  }
  floatOpsAtLoad_ = floatOps_;
  if (slowChanges_ != slowMarkedAt_) markSlowPaths();
}

void SearchEngine::markExactSteps(StepTable& t) {
  t.allExact = true;
  for (size_t at = 0; at < t.mode.size() && t.allExact; ++at)
    if (t.mode[at] != kNoStep && !exactPath(t.paths[at])) t.allExact = false;
}

void SearchEngine::markSlowPaths() {
  slowMarkedAt_ = slowChanges_;
  if (slowLinks_ == 0 && !slowMarked_) return;  // nothing float, nothing marked
  slowMarked_ = false;
  for (auto& row : tables_) {
    for (Table& table : row) {
      for (FastPath& p : table.paths) {
        p.slow = false;
        for (int s = 0; s < p.count && slowLinks_ != 0; ++s)
          if (!isSmall(bw_[static_cast<size_t>(p.hops[s])].milli)) p.slow = true;
        slowMarked_ |= p.slow;
      }
    }
  }
}

void SearchEngine::storeLinkBw() {
  auto& nets = sys_.nodes(NodeType::kNet);
  for (size_t n = 0; n < nets.size(); ++n) nets[n].net.bw = netBw_[n];
  // With no float update in the search, every reservation was integer and has been given back:
  // each link holds what was loaded, and the System has it already.
  if (floatOps_ == floatOpsAtLoad_) return;
  for (size_t i = 0; i < links_.size(); ++i) {
    const float v = linkBw(static_cast<int>(i));
    links_[i]->bw = v;
    linkValue_[i] = v;
  }
}

// NCCL's followPath on the float values: reserves `bw` on the first `maxSteps` links of
// `path`; returns how many it could reserve.
int SearchEngine::followLinks(const FastPath& path, int maxSteps, float bw) {
  ++floatOps_;  // (see floatOps_: mixedLinks counts itself)
  const float pciBw = path.pciOverhead ? bw * 6 / 5 : bw;
  if (path.plain) {
    // Nothing in reverse (see buildPathTables); the PCI links are known from path.coded.
    for (int step = 0; step < maxSteps; ++step) {
      const int h = path.hops[step];
      const float fwBw = path.pciOverhead && (path.coded[step] & 1) ? pciBw : bw;
      const float cur = linkBw(h);
      if (cur < fwBw) return step;
      setLinkBw(h, cur, fwBw);
    }
    return maxSteps;
  }
  for (int step = 0; step < maxSteps; ++step) {
    const int h = path.hops[step];
    const Link* link = links_[static_cast<size_t>(h)];
    const float fwBw = link->type == LinkType::kPci ? pciBw : bw;
    // Traffic into a pre-Ampere GPU also costs 1/8 of it the other way; a POWER CPU NVLink the full amount.
    float revBw = 0;
    if (link->revCost == RevCost::kPreAmpereGpu && !path.fromGpu) revBw = fwBw / 8;
    if (link->revCost == RevCost::kPowerNvlink) revBw = fwBw;
    const int rev = revBw != 0 ? revIndex_[static_cast<size_t>(h)] : -1;
    const float cur = linkBw(h);
    if (cur < fwBw || (rev >= 0 && linkBw(rev) < revBw)) return step;
    setLinkBw(h, cur, fwBw);
    if (rev >= 0) setLinkBw(rev, linkBw(rev), revBw);
  }
  return maxSteps;
}

// The common case in integers: a plain path, links and bandwidth all exact. cost[0] is the
// cost of a link, cost[1] that of a PCI link when the path has pciOverhead (kPciCosts: the
// links come from path.coded). m - cost in [0, kMilliLimit) says both that the link has the
// bandwidth and that the result stays exact; computed in unsigned arithmetic so kSlow (the
// smallest int) wraps far out of range. Links are written as they are checked; when one lacks
// the bandwidth, the ones before get it back (integer arithmetic: exact, as NCCL's reserve and
// release of exact links; wideStep updates a wide link only where that holds too). Returns
// kDone (reserved), kShort (a link lacks the bandwidth: nothing changed) or kFloat (a float
// link, a wide one wideStep leaves, or a result out of the exact range: the float code
// decides from there, link `done`, the links before it holding their integer updates, which
// are what NCCL's walk would have written).
template <bool kPciCosts>
WEFT_SEARCH_INLINE inline SearchEngine::Exact SearchEngine::reserveExact(const FastPath& path,
                                                                                     const int32_t* cost, int& done) {
  const int32_t* hops = kPciCosts ? path.coded : path.hops;
  const int n = path.count;
  LinkBw* state = bw_.data();
  auto link = [&](int s) -> int32_t& { return state[kPciCosts ? hops[s] >> 1 : hops[s]].milli; };
  auto costOf = [&](int s) { return kPciCosts ? cost[hops[s] & 1] : cost[0]; };
  int s = 0;
  for (; s < n; ++s) {
    int32_t& m = link(s);
    const int32_t next = static_cast<int32_t>(static_cast<uint32_t>(m) - static_cast<uint32_t>(costOf(s)));
    if (static_cast<uint32_t>(next) >= static_cast<uint32_t>(kMilliLimit)) break;
    m = next;
  }
  if (s == n) return kDone;
  const int32_t m = link(s);
  if (m != kSlow && m < costOf(s)) {
    for (int u = 0; u < s; ++u) link(u) += costOf(u);
    path.hint = s;
    return kShort;
  }
  done = s;
  return kFloat;
}

// reserveExact from link s, a wide one, on (links before s hold their integer updates):
// wideStepMemo updates the wide links, in integers where NCCL's arithmetic allows and as
// NCCL's drifting result where it stays wide. Called by followMixed, out of the inlined walk,
// which wide links are too rare to slow down. kDrift: a link lacks the bandwidth after a
// drifting update (links before `done` hold their updates; the caller gives them back in
// NCCL's arithmetic).
template <bool kPciCosts>
SearchEngine::Exact SearchEngine::reserveWide(const FastPath& path, const int32_t* cost, int s, int& done) {
  const int32_t* hops = kPciCosts ? path.coded : path.hops;
  const int n = path.count;
  LinkBw* state = bw_.data();
  auto index = [&](int u) { return kPciCosts ? hops[u] >> 1 : hops[u]; };
  auto costOf = [&](int u) { return kPciCosts ? cost[hops[u] & 1] : cost[0]; };
  bool drifted = false;
  for (; s < n; ++s) {
    int32_t& m = state[index(s)].milli;
    const int32_t next = static_cast<int32_t>(static_cast<uint32_t>(m) - static_cast<uint32_t>(costOf(s)));
    if (static_cast<uint32_t>(next) < static_cast<uint32_t>(kMilliLimit)) {
      m = next;
      continue;
    }
    const Exact e = m >= kWide ? wideStepMemo<true>(m, costOf(s)) : m != kSlow && m < costOf(s) ? kShort : kFloat;
    if (e == kDone) continue;
    if (e == kDrift) {
      if (!drifted) ++floatOps_;  // (as the float code counts an update it makes)
      drifted = true;
      continue;
    }
    done = s;
    if (e == kShort) {
      if (drifted) return kDrift;
      for (int u = 0; u < s; ++u) state[index(u)].milli += costOf(u);
      path.hint = s;
      return kShort;
    }
    return kFloat;
  }
  return kDone;
}

// Reserves (bw > 0) or releases (bw < 0) bw on every link of the path, as NCCL would; on a
// shortfall nothing changes and the result is false. kb and kbPci are the exact forms of bw
// and of its PCI cost (kSlow when there are none).
WEFT_SEARCH_INLINE inline bool SearchEngine::followExact(const FastPath& path, float bw, int32_t kb,
                                                                      int32_t kbPci) {
  if (!path.plain || params_.searchFloatReference) kb = kSlow;
  if (!path.pciOverhead) kbPci = kb;
  const int32_t cost[2] = {kb, kbPci};
  int done = 0;
  if (kb != kSlow && kbPci != kSlow) {
    Exact e = path.pciOverhead ? reserveExact<true>(path, cost, done) : reserveExact<false>(path, cost, done);
    if (e != kFloat) return e == kDone;
  }
  if (kb == kSlow) return followFloat(path, bw);  // (also every path that is not plain)
  const int32_t negCost[2] = {-kb, kbPci == kSlow ? kSlow : -kbPci};
  return followMixed(path, bw, cost, negCost, done);
}

// NCCL's followPath on the float values of the links: all or nothing.
bool SearchEngine::followFloat(const FastPath& path, float bw) {
  int steps = followLinks(path, path.count, bw);
  if (steps < path.count) {
    followLinks(path, steps, -bw);
    return false;
  }
  return true;
}

// followFloat on a plain path when some of its links hold floats (or an exact result would
// leave the exact range): link by link as NCCL goes, an exact link with an exact cost is
// updated in integers (the value NCCL's float arithmetic gives, see exactMilli), any other in
// float (a wide link through wideStep where it can). cost and negCost: the exact forms of bw
// and of its PCI cost, and of their negations (kSlow where there is none). The first `from`
// links already hold their update (made in integers by reserveExact, as this walk would have
// made it).
bool SearchEngine::followMixed(const FastPath& path, float bw, const int32_t* cost, const int32_t* negCost,
                               int from) {
  // Stopped at a wide link with exact costs: the integer walk goes on through wideStep.
  if (from < path.count && bw_[static_cast<size_t>(path.hops[from])].milli >= kWide && cost[0] != kSlow &&
      (cost[1] != kSlow || !path.pciOverhead)) {
    const Exact e =
        path.pciOverhead ? reserveWide<true>(path, cost, from, from) : reserveWide<false>(path, cost, from, from);
    if (e == kDrift) {
      mixedLinks(path, 0, from, -bw, negCost);
      return false;
    }
    if (e != kFloat) return e == kDone;
  }
  const int steps = mixedLinks(path, from, path.count, bw, cost);
  if (steps == path.count) return true;
  mixedLinks(path, 0, steps, -bw, negCost);
  return false;
}

// followLinks on a plain path, as followMixed does it, from link `from` on: how many of the
// first maxSteps links hold the reservation when it stops.
int SearchEngine::mixedLinks(const FastPath& path, int from, int maxSteps, float bw, const int32_t* cost) {
  const float pciBw = path.pciOverhead ? bw * 6 / 5 : bw;
  LinkBw* state = bw_.data();
  bool floatOp = false;
  int s = from;
  for (; s < maxSteps; ++s) {
    const int h = path.hops[s];
    const bool pci = path.pciOverhead && (path.coded[s] & 1);
    LinkBw& l = state[h];
    const int32_t c = cost[pci ? 1 : 0];
    if (l.milli >= kWide && c != kSlow) {
      const Exact e = wideStepMemo<true>(l.milli, c);
      if (e == kShort) break;
      if (e == kDone) continue;
      if (e == kDrift) {
        floatOp = true;
        continue;
      }
    } else if (l.milli != kSlow && c != kSlow) {
      if (l.milli < c) break;
      const int32_t next = l.milli - c;  // both under kMilliLimit in magnitude: no overflow
      if (next > -kMilliLimit && next < kMilliLimit) {
        l.milli = next;
        continue;
      }
    }
    const float fw = pci ? pciBw : bw;
    const float cur = linkBw(h);
    if (cur < fw) break;
    setLinkBw(h, cur, fw);
    floatOp = true;
  }
  if (floatOp) ++floatOps_;  // (integer updates are given back exactly: they need no count)
  return s;
}

// ncclTopoFollowPath: with mult > 0, reserves the graph's bandwidth along the path from
// (t1,i1) to (t2,i2) if its type and bandwidth allow; with mult < 0, releases it.
WEFT_SEARCH_INLINE inline bool SearchEngine::followPath(Graph& graph, NodeType t1, int i1, NodeType t2, int i2, float mult) {
  const FastPath& path = fastPath(t1, i1, t2, i2);
  if (path.type >= val(PathType::kDis)) return false;
  const int type = path.intra ? graph.typeIntra : graph.typeInter;
  if (mult == 1) {
    if (path.type > type) return false;
    if (isTree(graph.pattern) && path.revType > type) return false;
  }
  const float base = path.intra ? graph.bwIntra : graph.bwInter;
  const float bw = base * mult;
  // The integer forms of bw and of its PCI cost bw*6/5: from the per-speed cache when mult is
  // +-1 (IEEE negation is exact, so -bw and (-bw)*6/5 are the negated values), else computed.
  int32_t kb, kbPci;
  if (mult == 1 || mult == -1) {
    BwMilli& c = bwMilli_[path.intra ? 1 : 0];
    if (!(c.base == base)) {
      c.base = base;
      c.k = exactMilli(base);
      c.kPci = exactMilli(base * 6 / 5);
    }
    const bool neg = mult == -1;
    kb = c.k == kSlow ? kSlow : neg ? -c.k : c.k;
    kbPci = c.kPci == kSlow ? kSlow : neg ? -c.kPci : c.kPci;
  } else {
    kb = exactMilli(bw);
    kbPci = exactMilli(bw * 6 / 5);
  }
  if (!followExact(path, bw, kb, kbPci)) return false;
  // int += float, as NCCL's nHops arithmetic (fractional multipliers truncate).
  if (mult == 1 || mult == -1) graph.nHops += static_cast<int>(mult) * path.count;
  else graph.nHops = static_cast<int>(static_cast<float>(graph.nHops) + mult * static_cast<float>(path.count));
  return true;
}

// A channel's first GPU when nothing leads to it (one node: no NIC).
WEFT_SEARCH_INLINE inline void SearchEngine::tryFirstGpu(Graph& graph, const Walk& w, int g) {
  toggleUsed(graph.nChannels, g);
  recGpu(graph, g, 0, w);
  toggleUsed(graph.nChannels, g);
}

bool SearchEngine::prepareSteps(StepTable& t, NodeType from, NodeType to, float bw, int type, bool tree) {
  // The relaxation loop comes back to the same speeds and types again and again: tables are
  // kept by what they depend on.
  auto built = [&](const StepTable& c) {
    return c.from == from && c.to == to && c.keyBw == bw && c.keyType == type && c.keyTree == tree;
  };
  if (built(t)) return false;
  for (const StepTable& c : stepCache_) {
    if (built(c)) {
      t = c;
      return true;
    }
  }
  buildSteps(t, from, to, bw, type, tree);
  if (stepCache_.size() < kStepCacheSize) stepCache_.push_back(t);
  return true;
}

void SearchEngine::buildSteps(StepTable& t, NodeType from, NodeType to, float bw, int type, bool tree) {
  t.from = from;
  t.to = to;
  t.keyBw = bw, t.keyType = type, t.keyTree = tree;
  t.stride = sys_.count(to);
  t.paths = tables_[idx(from)][idx(to)].paths.data();
  const int32_t kb = exactMilli(bw), kbPci = exactMilli(bw * 6 / 5);
  t.bw = bw;
  t.reserve[0] = kb, t.reserve[1] = kbPci;
  t.release[0] = kb == kSlow ? kSlow : -kb, t.release[1] = kbPci == kSlow ? kSlow : -kbPci;
  t.mode.assign(static_cast<size_t>(sys_.count(from) * t.stride), kNoStep);
  for (int i1 = 0; i1 < sys_.count(from); ++i1) {
    for (int i2 = 0; i2 < t.stride; ++i2) {
      const FastPath& p = fastPath(from, i1, to, i2);
      StepMode mode = kGeneral;
      if (p.type >= val(PathType::kDis) || p.type > type || (tree && p.revType > type)) mode = kNoStep;
      else if (params_.searchFloatReference) mode = kGeneral;
      else if (p.plain && kb != kSlow && !p.pciOverhead) mode = kUniform;
      else if (p.plain && kb != kSlow && kbPci != kSlow) mode = kPci;
      t.mode[static_cast<size_t>(i1 * t.stride + i2)] = mode;
    }
  }
  // The link all allowed steps from i1 start with, when there is one (a GPU's step to itself is
  // never tried).
  t.firstHop.assign(static_cast<size_t>(sys_.count(from)), -1);
  for (int i1 = 0; i1 < sys_.count(from) && kb > 0 && !params_.searchFloatReference; ++i1) {
    int first = -1;
    for (int i2 = 0; i2 < t.stride && first != -2; ++i2) {
      if ((from == to && i1 == i2) || t.mode[static_cast<size_t>(i1 * t.stride + i2)] == kNoStep) continue;
      const FastPath& p = t.paths[i1 * t.stride + i2];
      if (p.count == 0) first = -2;
      else if (first == -1) first = p.hops[0];
      else if (first != p.hops[0]) first = -2;
    }
    t.firstHop[static_cast<size_t>(i1)] = first < 0 ? -1 : first;
  }
  t.entries.clear();
  t.entriesKnown = kb > 0 && !params_.searchFloatReference;
  for (int i2 = 0; i2 < t.stride && t.entriesKnown; ++i2) {
    int last = -1;  // no allowed step into i2 yet
    int32_t cost = 0;
    for (int i1 = 0; i1 < sys_.count(from) && t.entriesKnown; ++i1) {
      const StepMode mode = static_cast<StepMode>(t.mode[static_cast<size_t>(i1 * t.stride + i2)]);
      if ((from == to && i1 == i2) || mode == kNoStep) continue;
      const FastPath& p = t.paths[i1 * t.stride + i2];
      if (mode == kGeneral || p.count == 0) {
        t.entriesKnown = false;
        break;
      }
      const int hop = p.hops[p.count - 1];
      const int32_t c = mode == kPci ? t.reserve[p.coded[p.count - 1] & 1] : t.reserve[0];
      if (last == -1) last = hop, cost = c;
      else if (last != hop || cost != c) t.entriesKnown = false;
    }
    if (last >= 0) t.entries.push_back(StepTable::Entry{last, cost});
  }
  if (!t.entriesKnown) t.entries.clear();
}

// True when no step of table t can succeed: every to-index is entered through one exact link
// (or never), and that link lacks the bandwidth. Only decisive when the paths of all of them are
// exact (no float link: then a step that fails leaves every link as it found it).
bool SearchEngine::allEntriesShort(const StepTable& t) const {
  if (!t.entriesKnown || (slowLinks_ != 0 && !(t.allExact && slowChanges_ == slowMarkedAt_))) return false;
  const LinkBw* state = bw_.data();
  for (const StepTable::Entry& e : t.entries)
    if (state[e.hop].milli >= e.cost) return false;
  return true;
}

// Link s of path p (mode kUniform or kPci of table t) lacks the bandwidth of a step. Only
// decisive when no link of p is a float one (exactPath).
WEFT_SEARCH_INLINE inline bool SearchEngine::hopShort(const StepTable& t, const FastPath& p, StepMode mode,
                                                                  int s) const {
  const int32_t cost = mode == kPci ? t.reserve[p.coded[s] & 1] : t.reserve[0];
  return bw_[static_cast<size_t>(p.hops[s])].milli < cost;
}

// True when every step from i1 must fail: the link they all start with is exact and lacks the
// bandwidth, so NCCL would fail each on that link before changing anything.
WEFT_SEARCH_INLINE inline bool SearchEngine::allShort(const StepTable& t, int i1) const {
  const int first = t.firstHop[static_cast<size_t>(i1)];
  if (first < 0) return false;
  const int32_t m = bw_[static_cast<size_t>(first)].milli;
  return m != kSlow && m < t.reserve[0];
}

void SearchEngine::prepareSearch(const Graph& graph) {
  // Searches in a row often differ only in what the tables do not depend on (sameChannels,
  // crossNic): nothing to redo then.
  const PreparedFor key{graph.bwIntra, graph.bwInter, graph.typeIntra, graph.typeInter, graph.pattern};
  if (preparedFor_ == key) return;
  preparedFor_ = key;
  const bool tree = isTree(graph.pattern);
  // A new gpuGpu_ table: the next-GPU candidates are filtered again.
  if (prepareSteps(gpuGpu_, NodeType::kGpu, NodeType::kGpu, graph.bwIntra, graph.typeIntra, tree) && ++stepStamp_ == 0)
    ++stepStamp_;  // 0: never filtered
  if (sys_.inter) {
    // selectNets for every GPU (and -1) at this typeInter, as the hot steps ask for it.
    selNets_.clear();
    for (int g = -1; g < ngpus_; ++g) selNets_.push_back(&selectNets(graph.typeInter, g));
    const int netCount = static_cast<int>(selNets_[0]->size());
    for (int c = 0; c <= kMaxChannels; ++c)
      netStart_[static_cast<size_t>(c)] = static_cast<uint8_t>(netCount > 0 ? c % netCount : 0);
    if (prepareSteps(netGpu_, NodeType::kNet, NodeType::kGpu, graph.bwInter, graph.typeInter, tree)) buildNetSteps();
    // Balanced trees put half of the NIC bandwidth on each of their first two GPUs.
    float back = graph.pattern == Pattern::kBalancedTree ? graph.bwInter / 2 : graph.bwInter;
    prepareSteps(gpuNet_, NodeType::kGpu, NodeType::kNet, back, graph.typeInter, tree);
  }
  if (!hasNvs_) return;
  // nextGpuStep with an NVSwitch: the neighbours, each moved to the front in turn, so the last
  // one tried first; the ones without a path (or the GPU itself) never qualify.
  nvsPeers_.assign(static_cast<size_t>(ngpus_), {});
  for (int g = 0; g < ngpus_; ++g) {
    int prevGpu = (g - 1 + ngpus_) % ngpus_;
    int nextGpu = (g + 1) % ngpus_;
    int first[2] = {nextGpu, -1};
    if (graph.pattern == Pattern::kRing) first[1] = prevGpu;
    else if (graph.pattern == Pattern::kSplitTree || graph.pattern == Pattern::kBalancedTree) first[0] = prevGpu, first[1] = nextGpu;
    if (first[1] == first[0]) first[1] = -1;
    int k = 0;
    for (int f = 1; f >= 0; --f) {
      int c = first[f];
      if (c < 0 || c == g) continue;
      const FastPath& p = fastPath(NodeType::kGpu, g, NodeType::kGpu, c);
      if (p.count == 0) continue;
      NvsPeer& peer = nvsPeers_[static_cast<size_t>(g)][static_cast<size_t>(k++)];
      peer.c = c;
      if (gpuGpu_.mode[static_cast<size_t>(g * gpuGpu_.stride + c)] == kUniform && p.count == 2)
        peer.hops[0] = p.hops[0], peer.hops[1] = p.hops[1];
    }
  }
}

void SearchEngine::buildNetSteps() {
  netSteps_.assign(static_cast<size_t>(nets_), {});
  for (int n = 0; n < nets_; ++n) {
    const NetFacts& f = netFacts_[static_cast<size_t>(n)];
    if (f.noGpu) continue;
    for (int g : netLocalGpus_[static_cast<size_t>(n)]) {
      const size_t at = static_cast<size_t>(n * netGpu_.stride + g);
      const StepMode mode = static_cast<StepMode>(netGpu_.mode[at]);
      if (g == f.localGpu || mode == kNoStep) continue;
      const FastPath& p = netGpu_.paths[at];
      netSteps_[static_cast<size_t>(n)].push_back(NetStep{g, mode, (mode == kUniform || mode == kPci) && p.count > 0, &p});
    }
  }
}

// followPath(graph, t.from, i1, t.to, i2, 1) for a pair of mode `mode` (not kNoStep).
WEFT_SEARCH_INLINE inline bool SearchEngine::reserveStep(Graph& graph, const StepTable& t, int i1, int i2,
                                                                     const FastPath& p, StepMode mode, bool hinted) {
  // Where this path fell short last time is the likeliest place again. With every link exact,
  // a link short anywhere fails the step with nothing changed, whatever NCCL checks first.
  if (hinted && mode != kGeneral && p.count > 0 && exactPath(p) && hopShort(t, p, mode, p.hint)) return false;
  Exact e = kFloat;
  int done = 0;
  if (mode == kUniform) e = reserveExact<false>(p, t.reserve, done);
  else if (mode == kPci) e = reserveExact<true>(p, t.reserve, done);
  else return followPath(graph, t.from, i1, t.to, i2, 1);
  // A float link (or a result out of the exact range): what followPath would do from here.
  if (e == kFloat && followMixed(p, t.bw, t.reserve, t.release, done)) e = kDone;
  if (e != kDone) return false;
  graph.nHops += p.count;
  return true;
}

// Giving back cost on every link of a path (cost[0] on a link, cost[1] on a PCI link when the
// path has pciOverhead; both negative): the same checks as reserveExact, all of them made while
// writing, as they nearly always pass; when one does not, the writes are undone (integer
// arithmetic, exact) and reserveExact decides.
template <bool kPciCosts>
WEFT_SEARCH_INLINE inline SearchEngine::Exact SearchEngine::releaseExact(const FastPath& path,
                                                                                     const int32_t* cost, int& done) {
  // With float links about, a path often has one: stop at the first, as reserve* do.
  if (slowLinks_ != 0) return reserveExact<kPciCosts>(path, cost, done);
  const int32_t* hops = kPciCosts ? path.coded : path.hops;
  const int n = path.count;
  LinkBw* state = bw_.data();
  uint32_t bad = 0;
  for (int s = 0; s < n; ++s) {
    const int32_t k = kPciCosts ? cost[hops[s] & 1] : cost[0];
    int32_t& m = state[kPciCosts ? hops[s] >> 1 : hops[s]].milli;
    m -= k;
    bad |= static_cast<uint32_t>(static_cast<uint32_t>(m) >= static_cast<uint32_t>(kMilliLimit));
  }
  if (bad == 0) return kDone;
  for (int s = 0; s < n; ++s) state[kPciCosts ? hops[s] >> 1 : hops[s]].milli += kPciCosts ? cost[hops[s] & 1] : cost[0];
  return reserveExact<kPciCosts>(path, cost, done);
}

// followPath(graph, t.from, i1, t.to, i2, -1) after reserveStep succeeded; floatOps: floatOps_
// before that reservation.
WEFT_SEARCH_INLINE inline void SearchEngine::releaseStep(Graph& graph, const StepTable& t, int i1, int i2,
                                                                     const FastPath& p, StepMode mode,
                                                                     uint64_t floatOps) {
  if (mode != kGeneral && floatOps == floatOps_) {
    // Only integer updates since the reservation (it included), each given back in turn: the
    // links hold what the reservation left, so adding its cost back restores the exact values
    // it found, all in range; the checks of releaseExact cannot fail.
    LinkBw* state = bw_.data();
    if (mode == kUniform) {
      const int32_t k = t.reserve[0];
      for (int s = 0; s < p.count; ++s) state[p.hops[s]].milli += k;
    } else {
      for (int s = 0; s < p.count; ++s) state[p.coded[s] >> 1].milli += t.reserve[p.coded[s] & 1];
    }
    graph.nHops -= p.count;
    return;
  }
  Exact e = kFloat;
  int done = 0;
  if (mode == kUniform) e = releaseExact<false>(p, t.release, done);
  else if (mode == kPci) e = releaseExact<true>(p, t.release, done);
  else {
    followPath(graph, t.from, i1, t.to, i2, -1);
    return;
  }
  if (e == kFloat && followMixed(p, -t.bw, t.release, t.reserve, done)) e = kDone;
  if (e == kDone) graph.nHops -= p.count;
}

WEFT_SEARCH_INLINE inline void SearchEngine::tryGpuFrom(Graph& graph, const StepTable& t, int i1, int c,
                                                                    int step, const Walk& w, bool hinted) {
  const size_t at = static_cast<size_t>(i1 * t.stride + c);
  const StepMode mode = static_cast<StepMode>(t.mode[at]);
  if (mode != kNoStep) tryGpuStep(graph, t, i1, c, mode, t.paths[at], step, w, hinted);
}

WEFT_SEARCH_INLINE inline void SearchEngine::tryGpuStep(Graph& graph, const StepTable& t, int i1, int c,
                                                                    StepMode mode, const FastPath& p, int step,
                                                                    const Walk& w, bool hinted) {
  const uint64_t floatOps = floatOps_;
  if (!reserveStep(graph, t, i1, c, p, mode, hinted)) return;
  toggleUsed(graph.nChannels, c);
  recGpu(graph, c, step, w);
  toggleUsed(graph.nChannels, c);
  releaseStep(graph, t, i1, c, p, mode, floatOps);
}

int SearchEngine::replayGpu(const Graph& graph, int step) const {
  if (graph.nChannels == 0) return -1;
  return sys_.gpuIndexOfRank(graph.rank(graph.nChannels - 1, step + 1));
}

bool SearchEngine::better(const Graph& graph, const Graph& ref) const {
  if (graph.nChannels < graph.minChannels) return false;
  if (graph.pattern == Pattern::kNvls) {
    // More NVLS heads are better, up to one per GPU.
    bool copy = graph.nChannels > ref.nChannels && graph.nChannels <= ngpus_;
    if (static_cast<float>(graph.nChannels) * graph.bwInter > static_cast<float>(ref.nChannels) * ref.bwInter) copy = true;
    return copy;
  }
  float mine = static_cast<float>(graph.nChannels) * graph.bwIntra;
  float theirs = static_cast<float>(ref.nChannels) * ref.bwIntra;
  if (mine > theirs) return true;
  if (mine < theirs) return false;
  return graph.pattern == ref.pattern && graph.crossNic == ref.crossNic && graph.nHops < ref.nHops;
}

void SearchEngine::channelDone(Graph& graph, int* time) {
  graph.nChannels++;
  if (better(graph, best_)) {
    best_ = graph;
    if (graph.nChannels == graph.maxChannels) *time = -1;
  }
  if (graph.nChannels < graph.maxChannels) {
    // The next channel at once when no NIC can start it (what recNet would find; see there).
    if (sys_.inter && graph.pattern != Pattern::kNvls && graph.pattern != Pattern::kCollnetDirect &&
        allEntriesShort(netGpu_))
      recNetClosed(graph, static_cast<int>(graph.bwInter));
    else
      searchRec(graph, time);
  }
  graph.nChannels--;
}

void SearchEngine::recGpu(Graph& graph, int g, int step, const Walk& w) {
  if (*w.time <= 0) return;
  (*w.time)--;
  if (step == ngpus_) {
    channelDone(graph, w.time);
    return;
  }
  graph.rank(graph.nChannels, step) = ranks_[static_cast<size_t>(g)];
  if (step == w.backToNet) {
    if (sys_.inter) backToNetStep(graph, g, step, w);
  } else if (graph.pattern == Pattern::kNvls) {
    tryNvls(graph, g, w.time);
  } else if (graph.pattern == Pattern::kCollnetDirect) {
    tryCollnetDirect(graph, g, w.time);
  } else if (step < ngpus_ - 1) {
    nextGpuStep(graph, g, step, w);
  } else if (step == w.backToFirstRank) {
    // Close the ring: back to the channel's first GPU.
    int p = sys_.gpuIndexOfRank(graph.rank(graph.nChannels, 0));
    if (p < 0) return;
    const StepMode mode = static_cast<StepMode>(gpuGpu_.mode[static_cast<size_t>(g * ngpus_ + p)]);
    const uint64_t floatOps = floatOps_;
    if (mode != kNoStep && reserveStep(graph, gpuGpu_, g, p, mode, false)) {
      recGpu(graph, p, step + 1, Walk{w.backToNet, -1, w.order, w.time});
      releaseStep(graph, gpuGpu_, g, p, mode, floatOps);
    }
  } else {
    recGpu(graph, g, ngpus_, Walk{-1, -1, w.order, w.time});
  }
}

void SearchEngine::backToNetStep(Graph& graph, int g, int step, const Walk& w) {
  int startNet = netAt_[static_cast<size_t>(graph.nChannels * 2)];
  if (startNet < 0) return;
  // Iterate only the NICs checkNet can accept, in the same order: a required NIC when the
  // pattern names one, else the start NIC's port without cross-NIC, else all of them.
  int required = -1;
  if (graph.pattern == Pattern::kTree) {
    required = startNet;
  } else if (graph.pattern == Pattern::kRing && graph.crossNic == 2 && (graph.nChannels & 1)) {
    required = netAt_[static_cast<size_t>((graph.nChannels - 1) * 2)];
    if (required < 0) required = -2;
  } else if (graph.pattern == Pattern::kBalancedTree && step != 0) {
    required = netAt_[static_cast<size_t>(graph.nChannels * 2 + 1)];
    if (required < 0) required = -2;
  }
  int one[1] = {required};
  std::span<const int> nets;
  if (required >= 0) {
    const std::vector<int>& sel = *selNets_[static_cast<size_t>(g + 1)];
    if (std::find(sel.begin(), sel.end(), required) != sel.end()) nets = std::span<const int>(one, 1);
  } else if (required == -1 && graph.crossNic == 0) {
    nets = sameRailNets(graph.typeInter, g, startNet);
  } else {
    nets = *selNets_[static_cast<size_t>(g + 1)];
  }
  if (required < -1) return;
  // (With a NIC, backToFirstRank is -1: nothing closes a ring but the NIC.)
  const bool closesRing = graph.pattern == Pattern::kRing && step == ngpus_ - 1 && w.backToFirstRank < 0;
  for (int n : nets) {
    if (!checkNet(graph, startNet, n, step)) continue;
    int nextBackToNet = -1;
    float saved = graph.bwInter;
    // Balanced tree: half of the NIC bandwidth on each of the first two GPUs.
    if (graph.pattern == Pattern::kBalancedTree) {
      if (step == 0) nextBackToNet = 1;
      graph.bwInter /= 2;
    }
    // (bwInter as followPath needs it, should a path need the float code.)
    const StepMode mode = static_cast<StepMode>(gpuNet_.mode[static_cast<size_t>(g * gpuNet_.stride + n)]);
    const uint64_t floatOps = floatOps_;
    bool ok = mode != kNoStep && reserveStep(graph, gpuNet_, g, n, mode, true);
    graph.bwInter = saved;
    if (!ok) continue;
    putNet(graph, graph.nChannels * 2 + 1, n);
    if (closesRing) {
      // recGpu(graph, g, step, -1, ...) on a ring's last GPU: a step that finds nothing left to
      // do, then the step that ends the channel; counted as NCCL counts them.
      if (*w.time > 0 && --*w.time > 0) {
        --*w.time;
        channelDone(graph, w.time);
      }
    } else {
      ++pciDirty_[static_cast<size_t>(graph.nChannels)];
      recGpu(graph, g, step, Walk{nextBackToNet, w.backToFirstRank, w.order, w.time});
      --pciDirty_[static_cast<size_t>(graph.nChannels)];
    }
    if (graph.pattern == Pattern::kBalancedTree) graph.bwInter /= 2;
    releaseStep(graph, gpuNet_, g, n, mode, floatOps);
    graph.bwInter = saved;
  }
}

// tryGpuFrom(graph, gpuGpu_, g, p.c, step, w) for an NVSwitch peer. When its two links are
// exact and both have the bandwidth (nearly always), the step is taken here: no table lookup,
// no loop. With a float link in the system, reserveNvsFloat takes it in float; anything else (a
// link short) goes to tryGpuFrom, which finds it as NCCL would, since nothing was changed yet.
WEFT_SEARCH_INLINE inline void SearchEngine::tryNvsPeer(Graph& graph, int g, const NvsPeer& p, int step,
                                                                    const Walk& w) {
  if (p.hops[0] < 0) {
    tryGpuFrom(graph, gpuGpu_, g, p.c, step, w);
    return;
  }
  int32_t& a = bw_[static_cast<size_t>(p.hops[0])].milli;
  int32_t& b = bw_[static_cast<size_t>(p.hops[1])].milli;
  const int32_t k = gpuGpu_.reserve[0];
  int32_t na = static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(k));
  int32_t nb = static_cast<int32_t>(static_cast<uint32_t>(b) - static_cast<uint32_t>(k));
  if ((static_cast<uint32_t>(na) | static_cast<uint32_t>(nb)) >= static_cast<uint32_t>(kMilliLimit) &&
      !(slowLinks_ != 0 && wideNvsStep(a, b, k, na, nb))) {
    // With a float link about, the step in float (see reserveNvsFloat); the recursion stays
    // here, so that a step costs the stack one frame, as the integer one does.
    const uint64_t floatOps = floatOps_;
    if (slowLinks_ == 0 || !reserveNvsFloat(graph, p)) {
      tryGpuFrom(graph, gpuGpu_, g, p.c, step, w);
      return;
    }
    toggleUsed(graph.nChannels, p.c);
    recGpu(graph, p.c, step, w);
    toggleUsed(graph.nChannels, p.c);
    releaseNvsFloat(graph, g, p, floatOps);
    return;
  }
  const uint64_t floatOps = floatOps_;
  a = na;
  b = nb;
  graph.nHops += 2;
  toggleUsed(graph.nChannels, p.c);
  recGpu(graph, p.c, step, w);
  toggleUsed(graph.nChannels, p.c);
  if (floatOps == floatOps_) {
    a += k;
    b += k;
    graph.nHops -= 2;
  } else {
    releaseStep(graph, gpuGpu_, g, p.c, kUniform, floatOps);
  }
}

// tryNvsPeer's step in integers when its links are small or wide ones that wideStep updates:
// na and nb get the links' new values (nothing is written: a link short, or an update wideStep
// leaves, falls to the float or general code with links as they were).
__attribute__((noinline)) bool SearchEngine::wideNvsStep(int32_t a, int32_t b, int32_t k, int32_t& na, int32_t& nb) {
  auto step = [&](int32_t v, int32_t& out) {
    const int32_t next = static_cast<int32_t>(static_cast<uint32_t>(v) - static_cast<uint32_t>(k));
    if (static_cast<uint32_t>(next) < static_cast<uint32_t>(kMilliLimit)) {
      out = next;
      return true;
    }
    if (v < kWide || wideStepMemo<false>(v, k) != kDone) return false;
    out = v;
    return true;
  };
  return step(a, na) && step(b, nb);
}

// tryNvsPeer's step when a link of it is a float one (or out of the exact range), in NCCL's
// float arithmetic. Its two links are distinct, so checking both before writing either is
// NCCL's check of one after the other. False (nothing written) when one lacks the bandwidth:
// the general code then takes the step as NCCL does, from links still as they were.
__attribute__((noinline)) bool SearchEngine::reserveNvsFloat(Graph& graph, const NvsPeer& p) {
  const int h0 = p.hops[0], h1 = p.hops[1];
  const float bw = gpuGpu_.bw;
  const float a = linkBw(h0), b = linkBw(h1);
  if (!(a >= bw && b >= bw)) return false;
  FloatMemo* memo = floatMemo_.data();  // (sized by loadLinkBw)
  ++floatOps_;
  subFloat(h0, a, bw, memo[2 * h0]);
  subFloat(h1, b, bw, memo[2 * h1]);
  graph.nHops += 2;
  return true;
}

// Gives back what reserveNvsFloat took, as NCCL does (floatOps: floatOps_ before it). A link
// that would go below -bw (no value does) leaves it to the general code, links as they were.
__attribute__((noinline)) void SearchEngine::releaseNvsFloat(Graph& graph, int g, const NvsPeer& p,
                                                             uint64_t floatOps) {
  const int h0 = p.hops[0], h1 = p.hops[1];
  const float bw = gpuGpu_.bw;
  const float ra = linkBw(h0), rb = linkBw(h1);
  if (!(ra >= -bw && rb >= -bw)) {
    releaseStep(graph, gpuGpu_, g, p.c, kUniform, floatOps);
    return;
  }
  FloatMemo* memo = floatMemo_.data();
  ++floatOps_;
  subFloat(h0, ra, -bw, memo[2 * h0 + 1]);
  subFloat(h1, rb, -bw, memo[2 * h1 + 1]);
  graph.nHops -= 2;
}

// setLinkBw(h, cur, cost) (cur: link h's value), from the memo when the link was and stays a
// float or wide one with these two values.
WEFT_SEARCH_INLINE inline void SearchEngine::subFloat(int h, float cur, float cost, FloatMemo& memo) {
  LinkBw& l = bw_[static_cast<size_t>(h)];
  const bool wasSmall = isSmall(l.milli);
  if (!wasSmall && memo.from == cur && memo.cost == cost) {
    l = memo.to;  // (not small either: slowLinks_ stays)
    return;
  }
  setLinkBw(h, cur, cost);
  if (!wasSmall && !isSmall(l.milli)) memo = FloatMemo{cur, cost, l};
}

// The next GPUs to try from g. The candidates are filtered on isUsed as they are tried: every
// try gives it back as it found it, so that equals filtering them all first, as NCCL does.
WEFT_SEARCH_INLINE inline void SearchEngine::nextGpuStep(Graph& graph, int g, int step, const Walk& w) {
  if (allShort(gpuGpu_, g)) return;
  if (w.order == kPciOrder) {
    tryGpuFrom(graph, gpuGpu_, g, step + 1, step + 1, w);
    return;
  }
  if (w.order == kReplay) {
    const int c = replayGpu(graph, step);
    if (c >= 0) tryGpuFrom(graph, gpuGpu_, g, c, step + 1, w);
    return;
  }
  if (hasNvs_) {
    // NVSwitches prefer a limited set of peers (see prepareSearch).
    for (const NvsPeer& p : nvsPeers_[static_cast<size_t>(g)])
      if (p.c >= 0 && !isUsed(graph.nChannels, p.c)) tryNvsPeer(graph, g, p, step + 1, w);
    return;
  }
  // ncclTopoSearchNextGpuSort: candidates by NIC bandwidth, PCI bandwidth, hops to the NIC, then
  // GPU bandwidth and hops, then distance in index order. Every key but the PCI bandwidth (what
  // is left on the GPU's PCI link now) depends only on paths, so each (GPU, NIC) order is sorted
  // once, and sorted again aside while the PCI bandwidths that decide it differ. Heading back
  // to the NIC (sortNet -1), the order is reversed when all usable candidates have the same GPU
  // bandwidth and hops.
  const int sortNet = w.backToNet == -1 ? 0 : w.backToNet == step + 1 ? 1 : -1;
  const int net = sortNet != 0 ? netAt_[static_cast<size_t>(graph.nChannels * 2)] : -1;
  const SortedSlot& slot = sortedCandidates(g, net);
  if (slot.ties) {
    // The PCI bandwidths of the GPUs not used yet are those of the channel's start (chanPci_)
    // unless a GPU -> NIC step is held; does order still hold for them?
    const size_t ch = static_cast<size_t>(graph.nChannels);
    if (pciDirty_[ch] != 0 || !chanPciTaken_[ch]) {
      nextGpuResorted(graph, g, step, w, slot, sortNet);
      return;
    }
    if (slot.epochOf[ch] != chanEpoch_[ch]) epochEntry(slot, ch);
    if (slot.holdsIn[ch] == 0) {
      nextGpuInEpochOrder(graph, g, step, w, slot, slot.entryIn[ch], sortNet);
      return;
    }
  }
  if (useMasks_) {
    const uint64_t open = ~chanMask_[static_cast<size_t>(graph.nChannels)];
    uint64_t todo = slot.fwdMask & open;
    if (todo == 0) return;
    // Reversed when every usable candidate is in the class of one of them.
    const uint64_t usable = slot.orderMask & open;
    const bool reverse = sortNet == -1 && (usable & ~slot.classMask[static_cast<size_t>(std::countr_zero(usable))]) == 0;
    uint64_t positions = 0;
    for (; todo != 0; todo &= todo - 1)
      positions |= 1ull << slot.fwdPos[static_cast<size_t>(std::countr_zero(todo))];
    while (positions != 0) {
      const int i = reverse ? 63 - std::countl_zero(positions) : std::countr_zero(positions);
      positions &= ~(1ull << i);
      const SortedSlot::Step& st = slot.fwdStep[static_cast<size_t>(i)];
      const int c = slot.fwd[static_cast<size_t>(i)];
      tryGpuStep(graph, gpuGpu_, g, c, st.mode, *st.path, step + 1, w, /*hinted=*/true);
    }
    return;
  }
  bool reverse = false;
  if (sortNet == -1 && slot.sameIntra) {
    reverse = true;  // then the usable ones have too
  } else if (sortNet == -1) {
    reverse = true;
    const Candidate* firstUsable = nullptr;
    for (const Candidate& c : slot.order) {
      if (isUsed(graph.nChannels, c.g)) continue;
      if (firstUsable == nullptr) {
        firstUsable = &c;
      } else if (c.intraBw != firstUsable->intraBw || c.intraNhops != firstUsable->intraNhops) {
        reverse = false;
        break;
      }
    }
  }
  for (int c : reverse ? slot.rev : slot.fwd)
    if (!isUsed(graph.nChannels, c))
      tryGpuFrom(graph, gpuGpu_, g, c, step + 1, w, /*hinted=*/true);
}

bool SearchEngine::sortedUnder(const SortedSlot& slot, const int* pci) const {
  const Candidate* prev = nullptr;
  for (const Candidate& c : slot.order) {
    if (!c.tie) continue;
    if (prev != nullptr && prev->interBw == c.interBw &&
        (pci[c.g] > pci[prev->g] || (pci[c.g] == pci[prev->g] && c.basePos < prev->basePos)))
      return false;
    prev = &c;
  }
  return true;
}

void SearchEngine::epochEntry(const SortedSlot& slot, size_t ch) {
  const uint32_t number = chanEpoch_[ch];
  slot.epochOf[ch] = number;
  if (number >= slot.entryOf.size()) slot.entryOf.resize(number + 1, -1);
  if (slot.entryOf[number] >= 0) {
    slot.entryIn[ch] = static_cast<uint32_t>(slot.entryOf[number]);
    slot.holdsIn[ch] = slot.holds[slot.entryIn[ch]];
    return;
  }
  const size_t entry = slot.holds.size();
  slot.entryOf[number] = static_cast<int32_t>(entry);
  slot.entryIn[ch] = static_cast<uint32_t>(entry);
  const int* pci = chanPci_.data() + ch * static_cast<size_t>(ngpus_);
  const bool holds = sortedUnder(slot, pci);
  slot.holds.push_back(holds ? 1 : 0);
  slot.holdsIn[ch] = holds ? 1 : 0;
  const size_t n = slot.base.size();
  slot.epochFwd.resize((entry + 1) * n, -1);
  slot.epochStep.resize((entry + 1) * n, SortedSlot::Step{kNoStep, nullptr});
  slot.epochCount.push_back(0);
  if (useMasks_) {
    slot.epochMask.push_back(0);
    slot.epochPos.resize((entry + 1) * static_cast<size_t>(ngpus_), 0);
  }
  if (holds) return;
  std::vector<Candidate>& tmp = epochScratch_;
  tmp.clear();
  appendByPci(slot, pci, -1, tmp);
  const size_t first = entry * n;
  const int g = slot.gpu;
  uint16_t count = 0;
  for (const Candidate& c : tmp) {
    const size_t at = static_cast<size_t>(g * gpuGpu_.stride + c.g);
    const StepMode mode = static_cast<StepMode>(gpuGpu_.mode[at]);
    if (mode == kNoStep) continue;
    slot.epochFwd[first + count] = c.g;
    slot.epochStep[first + count] = SortedSlot::Step{mode, &gpuGpu_.paths[at]};
    ++count;
  }
  slot.epochCount[entry] = count;
  if (useMasks_) {
    uint64_t mask = 0;
    uint8_t* pos = slot.epochPos.data() + entry * static_cast<size_t>(ngpus_);
    for (uint16_t i = 0; i < count; ++i) {
      const int c = slot.epochFwd[first + i];
      mask |= 1ull << c;
      pos[c] = static_cast<uint8_t>(i);
    }
    slot.epochMask[entry] = mask;
  }
}

void SearchEngine::nextGpuInEpochOrder(Graph& graph, int g, int step, const Walk& w, const SortedSlot& slot,
                                       size_t entry, int sortNet) {
  const size_t ch = static_cast<size_t>(graph.nChannels);
  const size_t first = entry * slot.base.size();
  const int n = slot.epochCount[entry];
  // Heading back to the NIC, reversed when the unused candidates all have the same GPU
  // bandwidth and hops (cmpIntraScores; the allowed ones then too).
  bool reverse = sortNet == -1;
  if (useMasks_) {
    // The positions of the GPUs the channel has not used, walked in order or reversed.
    const uint64_t open = ~chanMask_[ch];
    uint64_t todo = slot.epochMask[entry] & open;
    if (todo == 0) return;
    const uint64_t usable = slot.orderMask & open;
    reverse = reverse && (usable & ~slot.classMask[static_cast<size_t>(std::countr_zero(usable))]) == 0;
    const uint8_t* pos = slot.epochPos.data() + entry * static_cast<size_t>(ngpus_);
    uint64_t positions = 0;
    for (; todo != 0; todo &= todo - 1) positions |= 1ull << pos[std::countr_zero(todo)];
    while (positions != 0) {
      const int i = reverse ? 63 - std::countl_zero(positions) : std::countr_zero(positions);
      positions &= ~(1ull << i);
      const size_t at = first + static_cast<size_t>(i);
      const SortedSlot::Step& st = slot.epochStep[at];
      tryGpuStep(graph, gpuGpu_, g, slot.epochFwd[at], st.mode, *st.path, step + 1, w, /*hinted=*/true);
    }
    return;
  }
  if (reverse) {
    const Candidate* firstUnused = nullptr;
    for (const Candidate& c : slot.base) {
      if (isUsed(graph.nChannels, c.g)) continue;
      if (firstUnused == nullptr) firstUnused = &c;
      else if (c.intraBw != firstUnused->intraBw || c.intraNhops != firstUnused->intraNhops) reverse = false;
    }
  }
  for (int k = 0; k < n; ++k) {
    const size_t i = first + static_cast<size_t>(reverse ? n - 1 - k : k);
    const int c = slot.epochFwd[i];
    if (isUsed(graph.nChannels, c)) continue;
    const SortedSlot::Step& st = slot.epochStep[i];
    tryGpuStep(graph, gpuGpu_, g, c, st.mode, *st.path, step + 1, w, /*hinted=*/true);
  }
}

size_t SearchEngine::appendByPci(const SortedSlot& slot, const int* pci, int channel,
                                 std::vector<Candidate>& out) const {
  const size_t first = out.size();
  for (const Candidate& c : slot.base) {
    if (channel >= 0 && isUsed(channel, c.g)) continue;
    out.push_back(c);
    out.back().pciBw = pci != nullptr ? pci[c.g] : gpuPciBw(c.g);
  }
  orderByPci(out.data() + first, out.size() - first);
  return out.size() - first;
}

void SearchEngine::nextGpuResorted(Graph& graph, int g, int step, const Walk& w, const SortedSlot& slot, int sortNet) {
  // NCCL sorts the candidates the channel has not used, by the PCI bandwidths as they are now.
  const size_t base = resorted_.size();
  const size_t n = appendByPci(slot, nullptr, graph.nChannels, resorted_);
  // Heading back to the NIC, reversed when they all have the same GPU bandwidth and hops
  // (cmpIntraScores).
  bool reverse = sortNet == -1;
  for (size_t i = 1; reverse && i < n; ++i) {
    const Candidate& c = resorted_[base + i];
    reverse = c.intraBw == resorted_[base].intraBw && c.intraNhops == resorted_[base].intraNhops;
  }
  for (size_t k = 0; k < n; ++k) {
    // By index: the recursion below can grow resorted_.
    const int c = resorted_[base + (reverse ? n - 1 - k : k)].g;
    tryGpuFrom(graph, gpuGpu_, g, c, step + 1, w, /*hinted=*/true);
  }
  resorted_.resize(base);
}

WEFT_SEARCH_INLINE inline const SearchEngine::SortedSlot& SearchEngine::sortedCandidates(int g, int net) {
  SortedSlot& slot = sortedCache_[static_cast<size_t>(g * (nets_ + 1) + (net + 1))];
  if (slot.stamp != stepStamp_) [[unlikely]] {
    if (!slot.ready) sortCandidates(slot, g, net);
    filterCandidates(slot, g);
  }
  return slot;
}

void SearchEngine::filterCandidates(SortedSlot& slot, int g) {
  slot.fwd.clear();
  for (const Candidate& c : slot.order)
    if (gpuGpu_.mode[static_cast<size_t>(g * gpuGpu_.stride + c.g)] != kNoStep) slot.fwd.push_back(c.g);
  if (!useMasks_) {
    slot.rev.assign(slot.fwd.rbegin(), slot.fwd.rend());
  } else {
    slot.fwdMask = 0;
    slot.fwdPos.assign(static_cast<size_t>(ngpus_), 0);
    slot.fwdStep.clear();
    for (size_t i = 0; i < slot.fwd.size(); ++i) {
      const int c = slot.fwd[i];
      slot.fwdMask |= 1ull << c;
      slot.fwdPos[static_cast<size_t>(c)] = static_cast<uint8_t>(i);
      const size_t at = static_cast<size_t>(g * gpuGpu_.stride + c);
      slot.fwdStep.push_back({static_cast<StepMode>(gpuGpu_.mode[at]), &gpuGpu_.paths[at]});
    }
  }
  // The orders made per set of PCI bandwidths hold steps of the old table.
  std::fill(slot.epochOf.begin(), slot.epochOf.end(), 0);
  slot.entryOf.clear();
  slot.holds.clear();
  slot.epochFwd.clear();
  slot.epochStep.clear();
  slot.epochCount.clear();
  slot.epochMask.clear();
  slot.epochPos.clear();
  slot.stamp = stepStamp_;
}

void SearchEngine::orderByPci(Candidate* c, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    const Candidate x = c[i];
    size_t j = i;
    for (; j > 0 && c[j - 1].interBw == x.interBw && c[j - 1].pciBw < x.pciBw; --j) c[j] = c[j - 1];
    c[j] = x;
  }
}

void SearchEngine::sortCandidates(SortedSlot& slot, int g, int net) {
  const auto& paths = sys_.node(NodeType::kGpu, g).paths[idx(NodeType::kGpu)];
  const std::vector<Path>* netPaths = net >= 0 ? &sys_.node(NodeType::kNet, net).paths[idx(NodeType::kGpu)] : nullptr;
  std::vector<GpuScore> scores;
  for (int i = 1; i < ngpus_; ++i) {
    int c = (g + i) % ngpus_;
    const Path& p = paths[static_cast<size_t>(c)];
    if (p.count() == 0) continue;
    GpuScore sc{c, i, p.count(), static_cast<int>(p.bw), 0, 0};
    if (netPaths != nullptr) {
      const Path& np = (*netPaths)[static_cast<size_t>(c)];
      sc.interNhops = np.count();
      sc.interBw = static_cast<int>(np.bw);
    }
    scores.push_back(sc);
  }
  std::sort(scores.begin(), scores.end(), scoreBefore);
  for (const GpuScore& sc : scores)
    slot.base.push_back(Candidate{sc.g, sc.intraBw, sc.intraNhops, sc.interBw, static_cast<int>(slot.base.size()), false, 0});
  // Without a NIC every PCI score is 0: the base order is the order.
  for (Candidate& a : slot.base) {
    for (const Candidate& b : slot.base) a.tie |= netPaths != nullptr && b.g != a.g && b.interBw == a.interBw;
    slot.ties |= a.tie;
    tiesSeen_ |= a.tie;
    a.pciBw = netPaths != nullptr ? gpuPciBw(a.g) : 0;
  }
  slot.order = slot.base;
  orderByPci(slot.order.data(), slot.order.size());
  slot.gpu = g;
  if (slot.ties) {
    slot.epochOf.assign(kMaxChannels + 1, 0);
    slot.entryIn.assign(kMaxChannels + 1, 0);
    slot.holdsIn.assign(kMaxChannels + 1, 0);
  }
  for (const Candidate& c : slot.order) {
    const Candidate& first = slot.order.front();
    if (c.intraBw != first.intraBw || c.intraNhops != first.intraNhops) slot.sameIntra = false;
  }
  if (useMasks_) {
    slot.classMask.assign(static_cast<size_t>(ngpus_), 0);
    for (const Candidate& a : slot.order) {
      slot.orderMask |= 1ull << a.g;
      for (const Candidate& b : slot.order)
        if (a.intraBw == b.intraBw && a.intraNhops == b.intraNhops) slot.classMask[static_cast<size_t>(a.g)] |= 1ull << b.g;
    }
  }
  slot.ready = true;
}

WEFT_SEARCH_INLINE inline const std::vector<int>& SearchEngine::sameRailNets(int typeInter, int g,
                                                                                       int startNet) {
  typeInter = std::clamp(typeInter, 0, kPathTypes - 1);
  NetList& slot =
      sameRailCache_[static_cast<size_t>((typeInter * ngpus_ + g) * nets_ + startNet)];
  if (slot.filled) return slot.nets;
  fillSameRailNets(slot, typeInter, g, startNet);
  return slot.nets;
}

void SearchEngine::fillSameRailNets(NetList& slot, int typeInter, int g, int startNet) {
  std::vector<int> out;
  const NetFacts& start = netFacts_[static_cast<size_t>(startNet)];
  for (int n : selectNets(typeInter, g)) {
    const NetFacts& k = netFacts_[static_cast<size_t>(n)];
    if (k.asic == start.asic && k.port == start.port) out.push_back(n);
  }
  slot.nets = std::move(out);
  slot.filled = true;
}

void SearchEngine::tryNvls(Graph& graph, int g, int* time) {
  // Enough bandwidth NVS -> every GPU (twice for the head), then every GPU -> NVS.
  int d0 = 0;
  bool ok = true;
  do {
    ok = followPath(graph, NodeType::kNvs, 0, NodeType::kGpu, d0, d0 == g ? 2 : 1);
    d0++;
  } while (ok && d0 < ngpus_);
  if (!ok) {
    d0--;
  } else {
    int d1 = 0;
    do {
      ok = followPath(graph, NodeType::kGpu, d1, NodeType::kNvs, 0, d1 == g ? 2 : 1);
      d1++;
    } while (ok && d1 < ngpus_);
    if (!ok) d1--;
    else recGpu(graph, -1, ngpus_, Walk{-1, -1, kFree, time});
    while (d1) {
      d1--;
      followPath(graph, NodeType::kGpu, d1, NodeType::kNvs, 0, d1 == g ? -2 : -1);
    }
  }
  while (d0) {
    d0--;
    followPath(graph, NodeType::kNvs, 0, NodeType::kGpu, d0, d0 == g ? -2 : -1);
  }
}

void SearchEngine::tryCollnetDirect(Graph& graph, int g, int* time) {
  int fwd = 0, bwd = 0;
  float mul = 1.0f / static_cast<float>(ngpus_ - 1);
  bool ok = true;
  do {
    ok = followPath(graph, NodeType::kGpu, g, NodeType::kGpu, fwd, mul);
  } while (ok && ++fwd < ngpus_);
  if (ok) {
    do {
      ok = followPath(graph, NodeType::kGpu, bwd, NodeType::kGpu, g, mul);
    } while (ok && ++bwd < ngpus_);
    if (ok) {
      // The head is set; the other ranks follow in index order.
      int step = 1;
      for (int i = 0; i < ngpus_; ++i)
        if (i != g) graph.rank(graph.nChannels, step++) = sys_.node(NodeType::kGpu, i).gpu.rank;
      recGpu(graph, -1, ngpus_, Walk{-1, -1, kFree, time});
    }
    while (bwd) {
      bwd--;
      followPath(graph, NodeType::kGpu, bwd, NodeType::kGpu, g, -mul);
    }
  }
  while (fwd) {
    fwd--;
    followPath(graph, NodeType::kGpu, g, NodeType::kGpu, fwd, -mul);
  }
}

WEFT_SEARCH_INLINE inline bool SearchEngine::checkNet(const Graph& graph, int startNet, int n,
                                                                  int step) const {
  const NetFacts& net = netFacts_[static_cast<size_t>(n)];
  const NetFacts& start = netFacts_[static_cast<size_t>(startNet)];
  if (graph.pattern == Pattern::kTree && net.id != start.id) return false;  // trees are symmetric
  if (graph.pattern == Pattern::kRing && graph.crossNic == 2) {
    // Alternating rings: odd channels end on the NIC the previous channel started from.
    if ((graph.nChannels & 1) && net.id != graph.inter[static_cast<size_t>((graph.nChannels - 1) * 2)]) return false;
  } else if (graph.crossNic == 0) {
    if (net.asic != start.asic || net.port != start.port) return false;
  }
  if (graph.pattern == Pattern::kBalancedTree && step != 0 &&
      net.id != graph.inter[static_cast<size_t>(graph.nChannels * 2 + 1)])
    return false;
  return true;
}

WEFT_SEARCH_INLINE inline void SearchEngine::reserveNetBw(int n, int bw) {
  if (netFacts_[static_cast<size_t>(n)].alone) {
    netBw_[static_cast<size_t>(n)] -= static_cast<float>(bw);
    return;
  }
  const int* same = samePortList_.data() + samePortStart_[static_cast<size_t>(n)];
  const int* end = samePortList_.data() + samePortStart_[static_cast<size_t>(n) + 1];
  for (; same != end; ++same) netBw_[static_cast<size_t>(*same)] -= static_cast<float>(bw);
}

void SearchEngine::recNet(Graph& graph, int backToNet, int backToFirstRank, int* time) {
  const int bw = static_cast<int>(graph.bwInter);  // NCCL truncates the NIC bandwidth check to int
  const std::vector<int>& nets = *selNets_[0];
  int netCount = static_cast<int>(nets.size());
  bool found = false;
  bool heads = graph.pattern == Pattern::kNvls || graph.pattern == Pattern::kCollnetDirect;
  int at = netStart_[static_cast<size_t>(graph.nChannels)];  // start at the channel's NIC, then wrap
  // Every NIC's channel starts with a step NET -> GPU; when all of them must fail (typically: the
  // channels found so far fill every GPU's way in), only the loop's writes remain.
  if (!heads && allEntriesShort(netGpu_)) {
    recNetClosed(graph, bw);
    return;
  }
  const NetFacts* facts = netFacts_.data();
  // What the loop reads of the graph does not change in it (the recursion below gives back all
  // it changes, and writes only this channel's slots and later ones): read once.
  const bool collNet = graph.collNet;
  const float fbw = static_cast<float>(bw);
  const int channel = graph.nChannels;
  const bool alternate = graph.pattern == Pattern::kRing && graph.crossNic == 2 && (channel & 1);
  const int64_t previous = alternate ? graph.inter[static_cast<size_t>((channel - 1) * 2 + 1)] : 0;
  const bool replay = channel > 0 && graph.sameChannels == 1;
  for (int i = 0; i < netCount; ++i, at = at + 1 == netCount ? 0 : at + 1) {
    if (heads && found) break;
    int n = nets[static_cast<size_t>(at)];
    const NetFacts& f = facts[n];
    if (collNet && !f.collSupport) continue;
    if (netBw_[static_cast<size_t>(n)] < fbw) continue;
    if (alternate && f.id != previous) continue;
    putNet(graph, channel * 2, n);
    graph.latencyInter = f.latency;
    reserveNetBw(n, bw);
    if (heads) {
      recNetHeads(graph, n, backToNet, backToFirstRank, netCount, time, &found);
    } else {
      recNetChannel(graph, n, backToNet, backToFirstRank, time);
      // NCCL leaves the NIC's bandwidth reserved when it reaches no GPU (a `continue` skips
      // the release); kept for identical results.
      if (!replay && f.noGpu) continue;
    }
    reserveNetBw(n, -bw);
  }
}

// recNet when every NIC's first step must fail (allEntriesShort(netGpu_)): no NIC reaches a GPU
// and no step of the budget is spent. What remains of the loop is what it writes: the NIC slot
// and latency of the last NIC that qualifies, and the NIC bandwidths, reserved and given back
// in float as NCCL computes them, or left reserved where NCCL leaves them (a NIC with no GPU).
void SearchEngine::recNetClosed(Graph& graph, int bw) {
  const std::vector<int>& nets = *selNets_[0];
  const int netCount = static_cast<int>(nets.size());
  if (netCount == 0) return;
  const float fb = static_cast<float>(bw);
  const bool replay = graph.nChannels > 0 && graph.sameChannels == 1;
  const bool alternate = graph.pattern == Pattern::kRing && graph.crossNic == 2 && (graph.nChannels & 1);
  const int64_t previous = alternate ? graph.inter[static_cast<size_t>((graph.nChannels - 1) * 2 + 1)] : 0;
  const bool collNet = graph.collNet;
  float* netBw = netBw_.data();
  const NetFacts* facts = netFacts_.data();
  if (closedScan_) {
    // Nothing to compute on any NIC (see the loop below): the last NIC that qualifies is the
    // first one found going backwards from where the loop ends.
    int at = netStart_[static_cast<size_t>(graph.nChannels)];
    for (int i = 0; i < netCount; ++i) {
      at = at == 0 ? netCount - 1 : at - 1;
      const int n = nets[static_cast<size_t>(at)];
      if (netBw[n] >= fb && !(collNet && !facts[n].collSupport) && !(alternate && facts[n].id != previous)) {
        putNet(graph, graph.nChannels * 2, n);
        graph.latencyInter = facts[n].latency;
        return;
      }
    }
    return;
  }
  int last = -1;
  for (int i = 0, at = netStart_[static_cast<size_t>(graph.nChannels)]; i < netCount;
       ++i, at = at + 1 == netCount ? 0 : at + 1) {
    const int n = nets[static_cast<size_t>(at)];
    const NetFacts& f = facts[n];
    if (collNet && !f.collSupport) continue;
    if (netBw[n] < fb) continue;
    if (alternate && f.id != previous) continue;
    last = n;
    // Alone on its port with fb <= netBw[n] < 2^24 (fb an integer): netBw[n] - fb is exact, so
    // giving fb back restores it; nothing to compute.
    if (f.alone && !(f.noGpu && !replay) && netBw[n] < 16777216.0f) continue;
    const int* same = samePortList_.data() + samePortStart_[static_cast<size_t>(n)];
    const int* end = samePortList_.data() + samePortStart_[static_cast<size_t>(n) + 1];
    if (f.noGpu && !replay) {
      for (; same != end; ++same) netBw[*same] -= fb;
    } else {
      for (; same != end; ++same) netBw[*same] = (netBw[*same] - fb) + fb;
    }
  }
  if (last < 0) return;
  putNet(graph, graph.nChannels * 2, last);
  graph.latencyInter = facts[last].latency;
}

// NVLS / CollNet direct: one head GPU per NIC, each GPU at most once.
void SearchEngine::recNetHeads(Graph& graph, int n, int backToNet, int backToFirstRank, int netCount, int* time,
                               bool* found) {
  if (graph.nChannels >= netCount) return;
  int gpu = sys_.node(NodeType::kNet, n).net.localGpu;
  if (gpu == -1) return;
  int rank = sys_.node(NodeType::kGpu, gpu).gpu.rank;
  for (int c = 0; c < graph.nChannels; ++c)
    if (graph.rank(c, 0) == rank) return;
  tryGpuFrom(graph, netGpu_, n, gpu, 0, Walk{backToNet, backToFirstRank, kFree, time});
  *found = true;
}

// Starts a channel at NIC n: replay the previous channel, or try the PCI order (first channel,
// no NVSwitch), the NIC's own GPU, then the other closest GPUs.
void SearchEngine::recNetChannel(Graph& graph, int n, int backToNet, int backToFirstRank, int* time) {
  if (graph.nChannels > 0 && graph.sameChannels == 1) {
    int g = replayGpu(graph, -1);
    if (g >= 0) tryGpuFrom(graph, netGpu_, n, g, 0, Walk{backToNet, backToFirstRank, kReplay, time});
    return;
  }
  if (graph.nChannels == 0 && !hasNvs_) {
    int t = kPciOrderBudget;
    tryGpuFrom(graph, netGpu_, n, 0, 0, Walk{backToNet, backToFirstRank, kPciOrder, &t});
    if (t == -1) *time = -1;
  }
  const NetFacts& f = netFacts_[static_cast<size_t>(n)];
  const int localGpu = f.localGpu;
  const Walk anyOrder{backToNet, backToFirstRank, kFree, time};
  if (localGpu != -1)
    tryGpuFrom(graph, netGpu_, n, localGpu, 0, anyOrder, /*hinted=*/true);
  // A step whose last link (into a GPU another channel already fills, typically) is exact and
  // lacks the bandwidth, on a plain path with no float link, fails in NCCL with every link as
  // it found it: not tried; then, as reserveStep would (hinted), neither is one whose link
  // where the path last fell short lacks it.
  for (const NetStep& st : netSteps_[static_cast<size_t>(n)]) {
    const FastPath& p = *st.path;
    if (st.lastHop && exactPath(p)) {
      const int last = p.count - 1;
      if (hopShort(netGpu_, p, st.mode, last) || (p.hint != last && hopShort(netGpu_, p, st.mode, p.hint))) continue;
      tryGpuStep(graph, netGpu_, n, st.g, st.mode, p, 0, anyOrder, /*hinted=*/false);
    } else {
      tryGpuStep(graph, netGpu_, n, st.g, st.mode, p, 0, anyOrder, /*hinted=*/true);
    }
  }
}

void SearchEngine::searchRec(Graph& graph, int* time) {
  if (searchDepth_ == 0) {
    loadLinkBw();
    prepareSearch(graph);
    if (sys_.inter && slowLinks_ != 0) markExactSteps(netGpu_);
    // (NIC bandwidths only go down from here, or back to what they were.)
    closedScan_ = sys_.inter;
    if (closedScan_) {
      for (int n : *selNets_[0]) {
        const NetFacts& f = netFacts_[static_cast<size_t>(n)];
        if (!f.alone || f.noGpu || !(netBw_[static_cast<size_t>(n)] < 8388608.0f)) closedScan_ = false;
      }
    }
  }
  ++searchDepth_;
  searchRecInner(graph, time);
  if (--searchDepth_ == 0) storeLinkBw();
}

uint32_t SearchEngine::pciSetNumber(const int* pci) {
  pciSetKey_.assign(pci, pci + ngpus_);
  auto it = pciSets_.find(pciSetKey_);
  if (it != pciSets_.end()) return it->second;
  const uint32_t number = static_cast<uint32_t>(pciSets_.size()) + 1;
  pciSets_.emplace(pciSetKey_, number);
  return number;
}

void SearchEngine::searchRecInner(Graph& graph, int* time) {
  int backToNet = -1, backToFirstRank = -1;
  if (sys_.inter) {
    backToNet = graph.pattern == Pattern::kRing        ? ngpus_ - 1
                : graph.pattern == Pattern::kSplitTree ? 1
                                                       : 0;
  } else if (graph.pattern == Pattern::kRing) {
    backToFirstRank = ngpus_ - 1;
  }
  if (sys_.inter) {
    // A channel starts: keep the PCI bandwidths, and number them (see chanEpoch_). A start
    // that finds the same bandwidths as the last start of this channel keeps its number, so
    // that the orders made for it (prepareEpochOrder) still serve: a search restarts the same
    // channel many times over the same channels below it.
    const size_t ch = static_cast<size_t>(graph.nChannels);
    const bool hadPci = chanPciTaken_[ch];
    chanPciTaken_[ch] = tiesSeen_;
    if (tiesSeen_) {
      int* pci = chanPci_.data() + ch * static_cast<size_t>(ngpus_);
      bool same = hadPci;
      for (int g = 0; g < ngpus_; ++g) {
        const int bw = gpuPciBw(g);
        same = same && pci[g] == bw;
        pci[g] = bw;
      }
      if (!same) chanEpoch_[ch] = pciSetNumber(pci);
    } else {
      chanEpoch_[ch] = 0;  // read only where chanPciTaken_
    }
    recNet(graph, backToNet, backToFirstRank, time);
    return;
  }
  if (graph.pattern == Pattern::kNvls) {
    tryFirstGpu(graph, Walk{backToNet, backToFirstRank, kFree, time}, graph.nChannels);
    return;
  }
  if (graph.nChannels == 0) {
    tryFirstGpu(graph, Walk{backToNet, backToFirstRank, kPciOrder, time}, 0);
  } else {
    int g = replayGpu(graph, -1);
    if (g >= 0) tryFirstGpu(graph, Walk{backToNet, backToFirstRank, kReplay, time}, g);
  }
  if (graph.sameChannels == 0 || graph.nChannels == 0)
    for (int g = 0; g < ngpus_; ++g) tryFirstGpu(graph, Walk{backToNet, backToFirstRank, kFree, time}, g);
}

// ncclTopoSelectNets: the NICs to try, preferred ones first (each GPU's per-channel NICs),
// then every other NIC within typeInter, by path type. Depends only on paths: cached.
const std::vector<int>& SearchEngine::selectNets(int typeInter, int gpu) {
  typeInter = std::clamp(typeInter, 0, kPathTypes - 1);  // no path is of a type past DIS
  NetList& slot = selectNetsCache_[static_cast<size_t>(typeInter * (ngpus_ + 1) + gpu + 1)];
  if (slot.filled) return slot.nets;
  std::vector<int> nets;
  auto add = [&nets](int n) {
    if (std::find(nets.begin(), nets.end(), n) == nets.end()) nets.push_back(n);
  };
  bool multiHost = sys_.hostHashes().size() > 1;
  if (multiHost) {
    // MNNVL: GPU first, then channel.
    std::vector<int> gpus, firstNets(static_cast<size_t>(ngpus_), -1);
    for (int g = 0; g < ngpus_; ++g)
      if (gpu == -1 || gpu == g) gpus.push_back(g);
    int remaining = static_cast<int>(gpus.size());
    std::vector<bool> done(gpus.size(), false);
    for (int c = 0; c < kMaxChannels && remaining > 0; ++c) {
      for (size_t k = 0; k < gpus.size(); ++k) {
        if (done[k]) continue;
        int n = localNet(sys_, params_, sys_.node(NodeType::kGpu, gpus[k]).gpu.rank, c);
        if (c == 0) firstNets[k] = n;
        else if (firstNets[k] == n) {
          done[k] = true;
          --remaining;
          continue;
        }
        if (n >= 0) add(n);
      }
    }
  } else {
    for (int g = 0; g < ngpus_; ++g) {
      if (gpu != -1 && gpu != g) continue;
      int rank = sys_.node(NodeType::kGpu, g).gpu.rank;
      std::vector<int> local;
      for (int c = 0; c < kMaxChannels; ++c) {
        int n = localNet(sys_, params_, rank, c);
        if (!local.empty() && n == local[0]) break;
        local.push_back(n);
      }
      for (int n : local)
        if (n >= 0) add(n);
    }
  }
  int maxDevs = std::numeric_limits<int>::max();
  if (params_.netDevsPolicy == NetDevsPolicy::kMax)
    maxDevs = gpu == -1 ? params_.netDevsMax * ngpus_ : params_.netDevsMax;
  if (static_cast<int>(nets.size()) < maxDevs) {
    for (int t = 0; t <= typeInter && static_cast<int>(nets.size()) < maxDevs; ++t) {
      for (int g = 0; g < ngpus_ && static_cast<int>(nets.size()) < maxDevs; ++g) {
        if (gpu != -1 && gpu != g) continue;
        const auto& paths = sys_.node(NodeType::kGpu, g).paths[idx(NodeType::kNet)];
        for (int n = 0; n < sys_.count(NodeType::kNet) && n < kMaxChannels; ++n) {
          if (val(paths[static_cast<size_t>(n)].type) != t) continue;
          add(n);
          if (static_cast<int>(nets.size()) >= maxDevs) break;
        }
      }
    }
  }
  slot.nets = std::move(nets);
  slot.filled = true;
  return slot.nets;
}

}  // namespace weft::topo::detail
