// The recursion behind computeGraph (internal to core/topo): tries GPUs and NETs channel by
// channel, reserving bandwidth on the links of each path it follows and releasing it when it
// backtracks. Every call of recGpu costs one step of the budget `time`, exactly as in NCCL.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "core/topo/graph.h"
#include "core/topo/params.h"
#include "core/topo/system.h"

// The search's hot helpers are forced inline into the recursion when optimizing. Without
// optimization (Debug, the sanitizer builds) forcing them would put every helper's locals into
// each recursive frame (about 21 KB per step under ASan, against 8 MB of stack for a recursion
// hundreds of steps deep); they are then ordinary functions.
#if defined(__OPTIMIZE__)
#define WEFT_SEARCH_INLINE __attribute__((always_inline))
#else
#define WEFT_SEARCH_INLINE
#endif

namespace weft::topo::detail {

class SearchEngine {
 public:
  SearchEngine(System& system, const Params& params, Graph& best);

  // ncclTopoSearchRec: extends `graph` by one channel in every possible way. Link bandwidths
  // live in the engine's own state during the call and are written back to the System after.
  void searchRec(Graph& graph, int* time);

 private:
  enum Order { kFree = 0, kPciOrder = 1, kReplay = 2 };
  // How a channel's walk goes on, the same at each of its steps but where noted (one struct,
  // so that the recursion passes four values as one argument): the step that heads back to
  // the NIC and the one that closes the ring (-1: none), the candidates' order, the budget.
  struct Walk {
    int backToNet;
    int backToFirstRank;
    int order;
    int* time;
  };

  // A path as the search uses it, packed: built once per search from the System's paths.
  struct FastPath {
    const int32_t* hops = nullptr;  // link indices (see bw_)
    int count = 0;
    int type = 11;           // PathType value; DIS when the path does not exist
    int revType = 11;        // the reverse path's type (trees check both directions)
    bool pciOverhead = false;  // from a GPU through an Intel CPU (PHB): PCI links cost 6/5
    bool fromGpu = false;
    bool intra = false;      // both ends GPU/NVS: uses the graph's intra speed and type
    bool plain = false;      // nothing in reverse, no link twice
    const int32_t* coded = nullptr;  // with pciOverhead: 2 * link index + (1 if a PCI link)
    mutable int hint = 0;            // where the last exact reservation on it fell short
    bool slow = false;  // one of its links was not a small one (see LinkBw) when markSlowPaths last ran
  };
  void buildPathTables();
  const FastPath& fastPath(NodeType t1, int i1, NodeType t2, int i2) const {
    const Table& t = tables_[idx(t1)][idx(t2)];
    return t.paths[static_cast<size_t>(i1 * t.stride + i2)];
  }

  bool followPath(Graph& graph, NodeType t1, int i1, NodeType t2, int i2, float mult);
  bool followExact(const FastPath& path, float bw, int32_t kb, int32_t kbPci);

 public:
  // kDrift (wide links only, see wideStepMemo): updated to NCCL's result, which integer
  // arithmetic does not undo.
  enum Exact { kDone, kShort, kFloat, kDrift };

 private:
  // kFloat leaves the integer updates of the first `done` links in place, for
  // followMixed(..., done) to go on from there.
  template <bool kPciCosts>
  Exact reserveExact(const FastPath& path, const int32_t* cost, int& done);
  template <bool kPciCosts>
  Exact reserveWide(const FastPath& path, const int32_t* cost, int s, int& done);
  template <bool kPciCosts>
  Exact releaseExact(const FastPath& path, const int32_t* cost, int& done);

  // The steps the recursion takes all the time (GPU -> GPU at the intra speed, NET -> GPU and
  // GPU -> NET at the inter speed): what each pair needs is decided once per search (searchRec
  // at depth 0), when speeds and types are fixed.
  enum StepMode : uint8_t {
    kNoStep = 0,   // the path's type (or its reverse's, for trees) is not allowed, or no path
    kUniform = 1,  // plain path, exact speed, one cost on every link
    kPci = 2,      // plain path, exact speed, 6/5 on its PCI links
    kGeneral = 3,  // anything else: followPath
  };
  struct StepTable {
    NodeType from = NodeType::kGpu, to = NodeType::kGpu;
    float keyBw = std::numeric_limits<float>::quiet_NaN();  // what it was built for (NaN: nothing)
    int keyType = -1;
    bool keyTree = false;
    int stride = 0;
    const FastPath* paths = nullptr;  // tables_[from][to]
    std::vector<uint8_t> mode;  // StepMode per (from, to) pair
    float bw = 0;                 // the bandwidth a step reserves
    int32_t reserve[2] = {0, 0};  // exact cost of a link, of a PCI link (6/5)
    int32_t release[2] = {0, 0};  // their negations
    std::vector<int> firstHop;    // per from-index: the first link of all its allowed steps, or -1
    // Per to-index with allowed steps: the last link all of them take and what they reserve
    // on it, when every to-index has one (entriesKnown; steps all exact).
    struct Entry {
      int32_t hop, cost;
    };
    std::vector<Entry> entries;
    bool entriesKnown = false;
    bool allExact = false;  // the paths of all allowed steps are exactPath (netGpu_'s: set when a search starts)
  };
  bool allEntriesShort(const StepTable& t) const;
  bool allShort(const StepTable& t, int i1) const;
  bool hopShort(const StepTable& t, const FastPath& p, StepMode mode, int s) const;
  int slowLinks_ = 0;  // links that are not small ones (kSlow or wide, see LinkBw)
  // The shortcuts that fail a step without touching its links hold for a path whose links are
  // all small, whatever the other links hold: FastPath::slow says which paths have another
  // link (a wide link's update may not be undone exactly by NCCL's arithmetic, so a step that
  // NCCL walks and gives back may leave it changed). It is made when a search starts
  // (markSlowPaths) and stays true to the links as long as no link turns small or not small
  // (slowChanges_ counts those turns).
  uint64_t slowChanges_ = 0;
  uint64_t slowMarkedAt_ = ~0ull;  // slowChanges_ when markSlowPaths last ran
  bool slowMarked_ = false;        // some FastPath::slow is set
  void markSlowPaths();
  void markExactSteps(StepTable& t);  // sets t.allExact
  bool exactPath(const FastPath& p) const { return slowLinks_ == 0 || (!p.slow && slowChanges_ == slowMarkedAt_); }

  bool prepareSteps(StepTable& t, NodeType from, NodeType to, float bw, int type, bool tree);  // false: t was it
  void buildSteps(StepTable& t, NodeType from, NodeType to, float bw, int type, bool tree);
  static constexpr size_t kStepCacheSize = 64;
  std::vector<StepTable> stepCache_;  // tables built so far, found by their key
  // hinted: check first the link where the path last fell short (for steps that often do).
  WEFT_SEARCH_INLINE bool reserveStep(Graph& graph, const StepTable& t, int i1, int i2, StepMode mode,
                                                  bool hinted) {
    return reserveStep(graph, t, i1, i2, t.paths[i1 * t.stride + i2], mode, hinted);
  }
  WEFT_SEARCH_INLINE void releaseStep(Graph& graph, const StepTable& t, int i1, int i2, StepMode mode,
                                                  uint64_t floatOps) {
    releaseStep(graph, t, i1, i2, t.paths[i1 * t.stride + i2], mode, floatOps);
  }
  // The same with the step's path at hand (t.paths[i1 * t.stride + i2]).
  bool reserveStep(Graph& graph, const StepTable& t, int i1, int i2, const FastPath& p, StepMode mode, bool hinted);
  void releaseStep(Graph& graph, const StepTable& t, int i1, int i2, const FastPath& p, StepMode mode,
                   uint64_t floatOps);
  // Counts the passes of the float code over links (followLinks, and mixedLinks where it wrote a
  // float): a step whose reservation saw none, with none since, gives back its exact cost
  // without checks.
  uint64_t floatOps_ = 0;
  void prepareSearch(const Graph& graph);
  struct PreparedFor {
    float bwIntra, bwInter;
    int typeIntra, typeInter;
    Pattern pattern;
    bool operator==(const PreparedFor&) const = default;
  };
  std::optional<PreparedFor> preparedFor_;  // what the step tables were last prepared for
  // tryGpu from GPU (table gpuGpu_) or NET (table netGpu_) i1 to GPU c.
  void tryGpuFrom(Graph& graph, const StepTable& t, int i1, int c, int step, const Walk& w, bool hinted = false);
  // The same with the step's mode (not kNoStep) and path (t.paths[i1 * t.stride + c]) at hand.
  void tryGpuStep(Graph& graph, const StepTable& t, int i1, int c, StepMode mode, const FastPath& p, int step,
                  const Walk& w, bool hinted);
  StepTable gpuGpu_, netGpu_, gpuNet_;
  // Per NET: the steps recNetChannel tries after the NIC's own GPU (its other local GPUs that
  // netGpu_ allows), with mode and path; made again whenever netGpu_ changes.
  struct NetStep {
    int g;
    StepMode mode;
    bool lastHop;  // kUniform or kPci with a link: a full last link rules it out
    const FastPath* path;
  };
  std::vector<std::vector<NetStep>> netSteps_;
  void buildNetSteps();
  // With an NVSwitch, the peers nextGpuStep tries from each GPU, in order (at most 2, c -1:
  // none), and, when the step to a peer is two exact links at one cost (kUniform, the usual
  // GPU -> NVSwitch -> GPU), those links (else hops[0] is -1).
  struct NvsPeer {
    int c = -1;
    int32_t hops[2] = {-1, -1};
  };
  std::vector<std::array<NvsPeer, 2>> nvsPeers_;
  void tryNvsPeer(Graph& graph, int g, const NvsPeer& p, int step, const Walk& w);
  bool reserveNvsFloat(Graph& graph, const NvsPeer& p);
  bool wideNvsStep(int32_t a, int32_t b, int32_t k, int32_t& na, int32_t& nb);
  void releaseNvsFloat(Graph& graph, int g, const NvsPeer& p, uint64_t floatOps);
  struct LinkBw {
    int32_t milli;  // k (small), kWide + k (wide), or kSlow
    float slowBw;   // the float value when milli == kSlow
  };
  // SUB_ROUND on a float or wide link that stays so, remembered per link and direction (a pure
  // function of the two values: the NVSwitch links of reserveNvsFloat go back and forth
  // between the same few values).
  struct FloatMemo {
    float from = std::numeric_limits<float>::quiet_NaN();  // equals nothing: empty
    float cost = 0;
    LinkBw to{kSlow, 0};
  };
  std::vector<FloatMemo> floatMemo_;  // 2 per link: taking (0) and giving back (1)
  void subFloat(int h, float cur, float cost, FloatMemo& memo);
  int followLinks(const FastPath& path, int maxSteps, float bw);
  bool followFloat(const FastPath& path, float bw);
  bool followMixed(const FastPath& path, float bw, const int32_t* cost, const int32_t* negCost, int from = 0);
  int mixedLinks(const FastPath& path, int from, int maxSteps, float bw, const int32_t* cost);
  void searchRecInner(Graph& graph, int* time);

  // Link bandwidths during a search. NCCL keeps them as floats and rounds every update to
  // 1e-3 (SUB_ROUND), so after the first update a link holds fl(k/1000) for an integer k.
  // For |k| < kMilliLimit and an update of the same form, SUB_ROUND computes exactly k - kb
  // (the float errors stay below 1/2 of 1e-3; proof in search_engine.cc, checked
  // by tests/unit/topo_search_bw_test.cc), so such a link is kept as the integer k and
  // updated with integer arithmetic: a small link. A link of that form with
  // 0 <= k < kWideLimit, where SUB_ROUND may differ from k - kb, is kept as kWide + k: a wide
  // link (CPU-attached NICs' 5,000 GB/s links, wide NVSwitch links). wideStep updates it when
  // NCCL's float arithmetic gives integer results both ways; otherwise the float code does. Any
  // other value is kept as the float NCCL would hold (kSlow) and handled by the float code.
 public:
  static constexpr int32_t kMilliLimit = 4000000;  // 4,000 GB/s
  static constexpr int32_t kSlow = INT32_MIN;
  static constexpr int32_t kWide = 1 << 30;  // above any small value minus any cost
  // fl(k/1000) is strictly increasing for 0 <= k < kWideLimit (the float spacing there is at
  // most 2^-10 < 1e-3), so comparing wide values is comparing their k.
  static constexpr int32_t kWideLimit = 16384000;  // 16,384 GB/s
  // The integer k with fl(k/1000) == bw and |k| < kMilliLimit, or kSlow.
  static int32_t exactMilli(float bw);
  // How a link holding bw is kept: k (small), kWide + k (wide) or kSlow.
  static int32_t linkMilli(float bw);
  static bool isSmall(int32_t m) { return m != kSlow && m < kWide; }
  // fl(k/1000) for |k| <= 2^24, without a division: the double product rounded to float gives
  // the same float as the float division (tests/unit/topo_search_bw_test.cc checks every k).
  static float milliToBw(int32_t k) { return static_cast<float>(static_cast<double>(k) * 0.001); }
  // NCCL's SUB_ROUND(a, b).
  static float subRoundBw(float a, float b);
  // A wide link (milli m) takes cost c (an exact form, |c| < kMilliLimit): kShort when it lacks
  // it (nothing written); kDone when NCCL's SUB_ROUND gives k - c and giving c back then gives
  // k again (m updated: integer arithmetic undoes it exactly, as NCCL's would); kFloat
  // (nothing written) otherwise.
  static Exact wideStep(int32_t& m, int32_t c);
  // An update of wide link m by cost c that wideStep leaves, as NCCL's SUB_ROUND computes it:
  // when the result r is again a wide value (0 <= r < kWideLimit, so the link stays wide, as
  // setLinkBw would keep it), m becomes kWide + r and the result is true; else m is unchanged.
  // Integer arithmetic does not undo such an update (a "drift").
  static bool wideDrift(int32_t& m, int32_t c);

 private:
  // wideStep from a memo of its results, a pure function of m and c (a CPU-attached NIC's link
  // goes back and forth between a few values): direct-mapped by a hash of both.
  // With kDrifts, an update wideStep leaves but wideDrift makes is made too (kDrift: the caller
  // counts it in floatOps_, as the float code would, and gives the links back in NCCL's
  // arithmetic should the walk fail); without, it is kFloat.
  struct WideMemo {
    int32_t m = kSlow;  // matches no wide value: empty
    int32_t c = 0;
    int32_t out = kSlow;  // the new m (kDone), its negation (a drift), or kSlow (kFloat)
  };
  static constexpr int kWideMemoBits = 10;
  std::array<WideMemo, size_t{1} << kWideMemoBits> wideMemo_{};
  // Both for wide link m with cost c (not more than it holds), in WideMemo::out's form: kWide + r
  // where wideStep updates it, -(kWide + r) where only wideDrift does, kSlow where neither does.
  static int32_t wideUpdate(int32_t m, int32_t c);
  template <bool kDrifts>
  Exact wideStepMemo(int32_t& m, int32_t c) {
    const uint32_t hash = static_cast<uint32_t>(m) * 0x9E3779B1u ^ static_cast<uint32_t>(c) * 0x85EBCA77u;
    WideMemo& memo = wideMemo_[hash >> (32 - kWideMemoBits)];
    if (memo.m != m || memo.c != c) {
      if (m - kWide < c) return kShort;
      memo = WideMemo{m, c, wideUpdate(m, c)};
    }
    if (memo.out >= 0) {
      m = memo.out;
      return kDone;
    }
    if (!kDrifts || memo.out == kSlow) return kFloat;
    m = -memo.out;
    return kDrift;
  }
  float linkBw(int i) const {
    const LinkBw& l = bw_[static_cast<size_t>(i)];
    if (l.milli == kSlow) return l.slowBw;
    return milliToBw(l.milli >= kWide ? l.milli - kWide : l.milli);
  }
  void setLinkBw(int i, float a, float b);  // link i = SUB_ROUND(a, b)
  void loadLinkBw();
  void storeLinkBw();
  std::vector<Link*> links_;          // every link of the system, by index
  std::vector<int32_t> revIndex_;     // index of each link's reverse link (-1: none)
  std::vector<int32_t> hopPool_;     // storage of FastPath::hops and ::coded (never grows after)
  std::vector<LinkBw> bw_;
  std::vector<float> linkValue_;  // each System link's value as last loaded or stored
  uint64_t floatOpsAtLoad_ = 0;
  int searchDepth_ = 0;
  // exactMilli of the graph's inter (0) and intra (1) bandwidth and of its PCI cost (6/5),
  // recomputed when the search moves to another speed.
  struct BwMilli {
    float base = std::numeric_limits<float>::quiet_NaN();  // matches no bandwidth
    int32_t k = kSlow;
    int32_t kPci = kSlow;
  };
  BwMilli bwMilli_[2];
  void tryFirstGpu(Graph& graph, const Walk& w, int g);
  void recGpu(Graph& graph, int g, int step, const Walk& w);
  void channelDone(Graph& graph, int* time);
  void backToNetStep(Graph& graph, int g, int step, const Walk& w);
  void nextGpuStep(Graph& graph, int g, int step, const Walk& w);
  void recNet(Graph& graph, int backToNet, int backToFirstRank, int* time);
  void recNetClosed(Graph& graph, int bw);
  // Every NIC recNet tries is alone on its port, reaches a GPU and holds under 2^23 GB/s (set
  // per search): recNetClosed then changes no NIC bandwidth and only looks for its last NIC.
  bool closedScan_ = false;
  void recNetHeads(Graph& graph, int n, int backToNet, int backToFirstRank, int netCount, int* time, bool* found);
  void recNetChannel(Graph& graph, int n, int backToNet, int backToFirstRank, int* time);
  void tryNvls(Graph& graph, int g, int* time);
  void tryCollnetDirect(Graph& graph, int g, int* time);
  int replayGpu(const Graph& graph, int step) const;
  bool checkNet(const Graph& graph, int startNet, int n, int step) const;
  bool better(const Graph& graph, const Graph& ref) const;
  void reserveNetBw(int n, int bw);

  // Lists that depend only on paths, computed once per search.
  const std::vector<int>& selectNets(int typeInter, int gpu);
  const std::vector<int>& sameRailNets(int typeInter, int gpu, int startNet);
  std::vector<const std::vector<int>*> selNets_;  // selectNets(typeInter, g) at index g + 1, per search
  // Where recNet's NIC loop starts for each channel: nChannels % selNets_[0]->size(), made per
  // search (the loop runs once per finished channel; an integer division is a slow instruction).
  std::array<uint8_t, kMaxChannels + 1> netStart_{};
  // NCCL's gpuPciBw: the narrower direction of GPU g's link to its switch as it stands now
  // (the search takes bandwidth from it), truncated to int as NCCL's scores are; -1: no link.
  int gpuPciBw(int g) const {
    const std::array<int32_t, 2>& l = gpuPciLinks_[static_cast<size_t>(g)];
    if (l[0] < 0) return -1;
    const LinkBw& up = bw_[static_cast<size_t>(l[0])];
    const LinkBw& down = bw_[static_cast<size_t>(l[1])];
    // A small link holds fl(k/1000) with |k| < 4e6, whose truncation is k / 1000 (here both
    // are small and not negative: other values, wide ones included, take the float way).
    if ((static_cast<uint32_t>(up.milli) | static_cast<uint32_t>(down.milli)) < static_cast<uint32_t>(kMilliLimit))
      return std::min(up.milli, down.milli) / 1000;
    return static_cast<int>(std::min(linkBw(l[0]), linkBw(l[1])));
  }
  std::vector<std::array<int32_t, 2>> gpuPciLinks_;  // per GPU: its PCI link up and down (-1: none)
  int32_t linkIndex(const Link* l) const;
  // The NET index of each id the search wrote to graph.inter (same slots): the first NET with
  // that id, so that the hot steps never search the NET ids.
  std::vector<int> netAt_;
  void putNet(Graph& graph, int slot, int n);  // graph.inter[slot] and netAt_[slot] for NET n

  // Next-GPU candidates of GPU g in search order when heading back to NIC `net` (-1: none).
  struct Candidate {
    int g;
    int intraBw;
    int intraNhops;
    int interBw;
    int basePos;  // position in SortedSlot::base
    bool tie;     // another candidate has the same interBw: the PCI bandwidth orders them
    int pciBw;    // gpuPciBw(g) when sorted
  };
  // Sorts candidates that are in `base` order by NIC bandwidth, then PCI bandwidth (stable).
  static void orderByPci(Candidate* c, size_t n);
  struct SortedSlot {
    bool ready = false;
    int gpu = -1;  // whose next GPUs
    std::vector<Candidate> order;
    // The candidates sorted on every key but the PCI bandwidth, which changes during the search
    // (order is base sorted again by it when the slot was made). With ties (candidates of equal
    // NIC bandwidth, ordered by their PCI bandwidth), order holds only while the PCI bandwidths
    // keep it sorted; else nextGpuStep sorts base again (nextGpuResorted).
    std::vector<Candidate> base;
    bool ties = false;
    // With ties, one entry per set of PCI bandwidths a channel started with (chanEpoch_, a
    // number per distinct set): whether order holds for every candidate under them, and when it
    // does not, the candidates sorted under them that gpuGpu_ allows a step to, with their steps
    // (like fwd and fwdStep; base.size() places per entry, epochCount used). entryOf[number] is
    // the entry made for that number (-1: none yet). The sets recur (a search restarts channels
    // over the same channels below), so each slot sorts once per set and step table.
    mutable std::vector<int32_t> entryOf;
    mutable std::vector<uint8_t> holds;
    // Per channel: the number its entry was looked up for (0: none), the entry, and its holds.
    mutable std::vector<uint32_t> epochOf;
    mutable std::vector<uint32_t> entryIn;
    mutable std::vector<uint8_t> holdsIn;
    mutable std::vector<int> epochFwd;
    mutable std::vector<uint16_t> epochCount;
    // With GPU masks, per entry: the GPUs of epochFwd and each one's position there (ngpus_
    // per entry).
    mutable std::vector<uint64_t> epochMask;
    mutable std::vector<uint8_t> epochPos;
    bool sameIntra = true;  // all of them have the same GPU bandwidth and hops
    // The GPUs of order the current gpuGpu_ table allows a step to (the others fail on their
    // path type, changing nothing), in order, and reversed without masks; valid while
    // stamp == stepStamp_.
    uint32_t stamp = 0;
    std::vector<int> fwd, rev;
    // With GPU masks (useMasks_): the GPUs of order, each GPU's class of equal GPU bandwidth
    // and hops among them, the GPUs of fwd and each one's position there.
    uint64_t orderMask = 0, fwdMask = 0;
    std::vector<uint64_t> classMask;
    std::vector<uint8_t> fwdPos;
    // Per position of fwd: its step from the slot's GPU in gpuGpu_ (mode and path).
    struct Step {
      StepMode mode;
      const FastPath* path;
    };
    std::vector<Step> fwdStep;
    mutable std::vector<Step> epochStep;
  };
  const SortedSlot& sortedCandidates(int g, int net);
  bool sortedUnder(const SortedSlot& slot, const int* pci) const;
  // Points the channel at the entry of slot for the PCI bandwidths it started with (made when
  // missing): slot.entryIn[channel], slot.holdsIn[channel].
  void epochEntry(const SortedSlot& slot, size_t channel);
  // nextGpuStep in the order of the slot's entry `entry`.
  void nextGpuInEpochOrder(Graph& graph, int g, int step, const Walk& w, const SortedSlot& slot, size_t entry,
                           int sortNet);
  // Within a channel's walk the links of the GPUs it has not used keep the bandwidth they had
  // when the walk started (a step takes bandwidth from its two ends only), but while a GPU ->
  // NIC step is held (PXN goes through another GPU's PCI link: pciDirty_). So each channel
  // start keeps the PCI bandwidths then (chanPci_, ngpus_ per channel) and the number of that
  // set of bandwidths (chanEpoch_, from 1; the same set always gets the same number: see
  // pciSetNumber).
  std::array<uint32_t, kMaxChannels + 1> chanEpoch_{};
  std::array<int, kMaxChannels + 1> pciDirty_{};
  // Whether chanPci_ was taken for the channel's start: only once some order has ties (with an
  // NVSwitch, or without NICs, nothing is sorted by PCI bandwidth and nothing is taken).
  std::array<bool, kMaxChannels + 1> chanPciTaken_{};
  bool tiesSeen_ = false;
  std::vector<int> chanPci_;
  // The distinct sets of PCI bandwidths seen at channel starts (ngpus_ each), numbered from 1 in
  // the order met; pciSetKey_ is the lookup's reused key.
  std::map<std::vector<int>, uint32_t> pciSets_;
  std::vector<int> pciSetKey_;
  uint32_t pciSetNumber(const int* pci);
  // nextGpuStep when the PCI bandwidths no longer give slot.order: sorts again into resorted_
  // (a stack, one frame per call: the recursion can sort again below it), leaving the slot.
  void nextGpuResorted(Graph& graph, int g, int step, const Walk& w, const SortedSlot& slot, int sortNet);
  // Appends slot.base's candidates to `out` (but those channel `channel` holds; -1: none), each
  // with its PCI bandwidth (pci[g], or gpuPciBw now when pci is nullptr), and sorts what it
  // appended as NCCL does. Returns how many.
  size_t appendByPci(const SortedSlot& slot, const int* pci, int channel, std::vector<Candidate>& out) const;
  std::vector<Candidate> resorted_;
  std::vector<Candidate> epochScratch_;
  void sortCandidates(SortedSlot& slot, int g, int net);
  void filterCandidates(SortedSlot& slot, int g);
  uint32_t stepStamp_ = 0;  // changes whenever gpuGpu_ does

  struct Table {
    int stride = 0;
    std::vector<FastPath> paths;
  };
  std::array<std::array<Table, kNodeTypeCount>, kNodeTypeCount> tables_;

  System& sys_;
  const Params& params_;
  Graph& best_;
  int ngpus_;
  bool hasNvs_ = false;  // an NVSwitch: nextGpuStep tries only index neighbours
  // Which GPUs each channel holds so far. With at most 64 GPUs (and not in the reference
  // search): per channel, one bit per GPU (chanMask_), so that next-GPU candidates are picked
  // with mask operations; else per GPU, one bit per channel (used_).
  bool useMasks_ = false;
  std::array<uint64_t, 64> chanMask_{};
  std::vector<uint64_t> used_;
  void toggleUsed(int channel, int g) {
    if (useMasks_) chanMask_[static_cast<size_t>(channel)] ^= 1ull << g;
    else used_[static_cast<size_t>(g)] ^= 1ull << channel;
  }
  bool isUsed(int channel, int g) const {
    return useMasks_ ? (chanMask_[static_cast<size_t>(channel)] >> g) & 1 : (used_[static_cast<size_t>(g)] >> channel) & 1;
  }
  std::vector<int> ranks_;      // per GPU index
  // NETs sharing each NET's physical port: samePortList_[samePortStart_[n] .. [n + 1]).
  std::vector<int> samePortStart_, samePortList_;
  // What the search reads of each NET, packed.
  struct NetFacts {
    int64_t id;
    uint64_t asic;
    int port;
    float latency;
    int firstIndex;  // the first NET with this id (what netAt_ holds for it)
    int localGpu;    // net.localGpu
    bool collSupport;
    bool noGpu;      // reaches no GPU (localNodes type DIS)
    bool alone;      // the only NET on its port
  };
  std::vector<NetFacts> netFacts_;
  int nets_ = 0;
  std::vector<float> netBw_;  // NIC bandwidths during a search (written back with the links)
  // Lists computed on first use, in flat tables sized once (references to them stay valid):
  // selectNets by (path type, GPU or -1), sameRailNets by (path type, GPU, start NIC).
  struct NetList {
    bool filled = false;
    std::vector<int> nets;
  };
  void fillSameRailNets(NetList& slot, int typeInter, int g, int startNet);
  static constexpr int kPathTypes = 12;  // PathType values 0..DIS
  std::vector<NetList> sameRailCache_;
  std::vector<SortedSlot> sortedCache_;
  std::vector<NetList> selectNetsCache_;
  std::vector<std::vector<int>> netLocalGpus_;  // localNodes(NET n -> GPU)
};

}  // namespace weft::topo::detail
