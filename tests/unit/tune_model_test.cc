// NCCL 2.28.9's cost model, branch by branch, on small synthetic communicators. Expected values
// are worked out by hand from tuning.cc's formulas (comments show the arithmetic).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "core/base/strings.h"
#include "core/config/settings.h"
#include "core/tune/model.h"
#include "core/tune/offline.h"
#include "core/tune/select.h"
#include "tests/support/log_capture.h"

namespace weft::tune {
namespace {

using test::LogCapture;

// 8 Hopper GPUs per node over NVLink, 8 ring/tree channels of 20 GB/s, Intel x86.
CommInputs hopper(int nodes) {
  CommInputs c;
  c.nNodes = nodes;
  c.nRanks = 8 * nodes;
  c.localRanks = c.minLocalRanks = c.maxLocalRanks = 8;
  c.nodeLocalRanks.assign(static_cast<size_t>(nodes), 8);
  c.minCompCap = c.maxCompCap = 90;
  c.nChannels = 16;
  c.maxTreePattern = 1;
  for (int a : {kTree, kRing}) {
    GraphInputs& g = c.graphs[static_cast<size_t>(a)];
    g.nChannels = 8;
    g.bwIntra = g.bwInter = 20;
    g.typeIntra = 1;  // NVL
    g.typeInter = 4;  // PIX
  }
  return c;
}

Model run(const CommInputs& c, const TuneSettings& s = {}) {
  auto m = tuneModel(c, defaultConstants(), s);
  EXPECT_TRUE(m.isOk()) << m.status().toString();
  return m.isOk() ? *m : Model{};
}

TuneSettings settingsOf(std::initializer_list<std::pair<const char*, const char*>> kv) {
  config::Settings s;
  for (const auto& [k, v] : kv) EXPECT_TRUE(s.set(k, v).isOk()) << k;
  return TuneSettings::fromSettings(s);
}

// A tuner that zeroes one cell and sets a channel budget, or fails.
class PickCell : public TunerHook {
 public:
  PickCell(int a, int p, int channels, bool fail = false) : a_(a), p_(p), channels_(channels), fail_(fail) {}
  Status getCollInfo(const CollQuery& q, float* cost, int* nChannels) override {
    last = q;
    if (fail_) return internalError("tuner says no");
    if (cost[a_ * kNumProtocols + p_] != kIgnore) cost[a_ * kNumProtocols + p_] = 0.0f;
    *nChannels = channels_;
    return Status::ok();
  }
  CollQuery last;

 private:
  int a_, p_, channels_;
  bool fail_;
};

TEST(TuneConstants, V5LayoutAndDefaults) {
  const Constants& k = defaultConstants();
  EXPECT_EQ(sizeof(Constants), 1152u);
  EXPECT_EQ(k.hwLatencies[kHwNet][kNvlsTree][kSimple], 20.9);  // 2.28.9 (14 in 2.28.7)
  EXPECT_EQ(k.perChMaxNVLSTreeBws[3][2], 43.8);
  EXPECT_EQ(k.perChMaxRingLL128Bws[3][1], 34.6);
  EXPECT_EQ(k.baseLatencies[kPat][kLL], 8.0);
}

TEST(TuneModel, OneRankReturnsAfterTheThreadLimits) {
  CommInputs c = hopper(1);
  c.nRanks = 1;
  c.nodeLocalRanks = {1};
  Model m = run(c);
  EXPECT_EQ(m.maxThreads[kRing][kSimple], 512);
  EXPECT_EQ(m.bandwidths[kAllReduce][kRing][kSimple], 0.0f);
  CostTable t;
  costTable(c, m, Operation{}, t);
  EXPECT_EQ(t[kRing][kSimple], 0.0f);  // the only cell of a single rank
  EXPECT_EQ(t[kTree][kSimple], kIgnore);
}

TEST(TuneModel, NvlsOnOneNode) {
  CommInputs c = hopper(1);
  c.nvlsSupport = 1;
  c.nvlsChannels = 16;
  GraphInputs& g = c.graphs[kNvls];
  g.nChannels = 8;
  g.bwIntra = 40;
  g.bwInter = 60;
  g.typeIntra = 1;
  Model m = run(c);
  // 40 x 0.85 x 7/8 = 29.75, x2 for AllReduce = 59.5 < 60; x 8 channels = 476; x 8/14 = 272.
  EXPECT_NEAR(m.bandwidths[kAllReduce][kNvls][kSimple], 272.0f, 1e-3);
  EXPECT_FLOAT_EQ(m.latencies[kAllReduce][kNvls][kSimple], 25.0f);  // intraLat only, no base
  // AllGather: 29.75 x 7/8 (ppn) x 8 channels = 208.25, kept as busBw.
  EXPECT_NEAR(m.bandwidths[kAllGather][kNvls][kSimple], 208.25f, 1e-3);
  // NVLSTree is off on one node: latency stays, bandwidth 0.
  EXPECT_EQ(m.bandwidths[kAllReduce][kNvlsTree][kSimple], 0.0f);
  EXPECT_FLOAT_EQ(m.latencies[kAllReduce][kNvlsTree][kSimple], 25.0f);
  EXPECT_EQ(m.bandwidths[kAllReduce][kNvls][kLL], 0.0f);  // Simple only

  auto big = choose(c, m, {}, Operation{.func = kAllReduce, .bytes = 1u << 30}, nullptr);
  ASSERT_TRUE(big.isOk());
  EXPECT_EQ(big->algo, kNvls);
  EXPECT_EQ(big->nMaxChannels, 16);  // nvlsChannels on one node
  EXPECT_EQ(big->nThreads, 640);

  g.nChannels = 1;  // NVLS needs two channels
  Model one = run(c);
  EXPECT_EQ(one.latencies[kAllReduce][kNvls][kSimple], 0.0f);
  EXPECT_EQ(one.bandwidths[kAllReduce][kNvls][kSimple], 0.0f);
}

TEST(TuneModel, NvlsTreeAcrossTwoNodes) {
  CommInputs c = hopper(2);
  c.nvlsSupport = 1;
  c.nvlsChannels = 16;
  GraphInputs& g = c.graphs[kNvls];
  g.nChannels = 8;
  g.bwIntra = g.bwInter = 22;
  g.typeIntra = 1;
  Model m = run(c);
  // intra 22 x .85 x 7/8 x 2 = 32.725; inter 22 x 2 = 44; cap 57.7: 32.725 x 8 x 16/30 = 139.63.
  EXPECT_NEAR(m.bandwidths[kAllReduce][kNvlsTree][kSimple], 139.63f, 1e-2);
  EXPECT_NEAR(m.latencies[kAllReduce][kNvlsTree][kSimple], 25 + 2 * 20.9, 1e-4);
  // NVLS across nodes needs CollNet: disabled, and skipped in the table.
  EXPECT_EQ(m.bandwidths[kAllReduce][kNvls][kSimple], 0.0f);
  EXPECT_FLOAT_EQ(m.latencies[kAllReduce][kNvls][kSimple], 25.0f + 18.0f);
}

CommInputs withCollnet() {
  CommInputs c = hopper(2);
  c.collnetEnable = 1;
  c.nvsCount = 4;
  c.collNetHeadsNum = 8;
  c.collnetDirectHeads = 8;
  c.collNetAllGather = true;
  for (int a : {kCollnetDirect, kCollnetChain}) {
    GraphInputs& g = c.graphs[static_cast<size_t>(a)];
    g.nChannels = 8;
    g.bwIntra = 20;
    g.bwInter = 12;
    g.typeIntra = 1;
  }
  return c;
}

TEST(TuneModel, CollnetDirectAndChain) {
  CommInputs c = withCollnet();
  Model m = run(c);
  // Direct: 8 x 20 = 160; GPU/NIC factor 8/8 = 1; x .85 (sm90) = 136; x .5 = 68.
  EXPECT_NEAR(m.bandwidths[kAllReduce][kCollnetDirect][kSimple], 68.0f, 1e-4);
  // 2 x (1 x 3.7 + 7 x 0.4) + 31 = 44.
  EXPECT_NEAR(m.latencies[kAllReduce][kCollnetDirect][kSimple], 44.0f, 1e-4);
  EXPECT_EQ(m.bandwidths[kAllReduce][kCollnetDirect][kLL], 0.0f);
  // Chain: 160 x .5 = 80; 2 x 7 x 2.8 + 30 = 69.2.
  EXPECT_NEAR(m.bandwidths[kAllReduce][kCollnetChain][kSimple], 80.0f, 1e-4);
  EXPECT_NEAR(m.latencies[kAllReduce][kCollnetChain][kSimple], 69.2f, 1e-4);
  // AllGather: ppn x min(20, 12 x .9) = 86.4 (the plugin has iallgather, 8 heads for 8 ranks);
  // ReduceScatter: no ireducescatter.
  EXPECT_NEAR(m.bandwidths[kAllGather][kCollnetDirect][kSimple], 86.4f, 1e-3);
  EXPECT_EQ(m.bandwidths[kReduceScatter][kCollnetDirect][kSimple], 0.0f);

  c.collNetHeadsNum = 4;  // fewer heads than local ranks
  EXPECT_EQ(run(c).bandwidths[kAllGather][kCollnetDirect][kSimple], 0.0f);
  c = withCollnet();
  c.nvsCount = 0;  // CollNet direct needs an NVSwitch
  EXPECT_EQ(run(c).bandwidths[kAllReduce][kCollnetDirect][kSimple], 0.0f);
  EXPECT_NEAR(run(c).bandwidths[kAllReduce][kCollnetChain][kSimple], 80.0f, 1e-4);
}

TEST(TuneSelect, CollnetDirectChannelTuning) {
  CommInputs c = withCollnet();
  Model m = run(c);
  PickCell hook(kCollnetDirect, kSimple, 0);
  Operation op{.func = kAllReduce, .bytes = 1 << 20, .collNetSupport = 1};
  auto ch = choose(c, m, {}, op, &hook);
  ASSERT_TRUE(ch.isOk());
  EXPECT_EQ(ch->algo, kCollnetDirect);
  // 16 channels step down by switch 16, 8, 4, 2, halving the 512 threshold at 12, 6 and 3,
  // until 1 MiB >= 2 x 640 x 8 heads x 64.
  EXPECT_EQ(ch->nMaxChannels, 2);
  EXPECT_EQ(ch->nThreads, 640);
  // Without CollNet support for the op the cells stay ignored.
  CostTable t;
  costTable(c, m, Operation{.func = kAllReduce, .bytes = 1 << 20}, t);
  EXPECT_EQ(t[kCollnetDirect][kSimple], kIgnore);
}

TEST(TuneModel, PatWithOneGpuPerNode) {
  CommInputs c;
  c.nRanks = c.nNodes = 4;
  c.minCompCap = c.maxCompCap = 90;
  c.nChannels = 4;
  c.nodeLocalRanks.assign(4, 1);
  GraphInputs& tree = c.graphs[kTree];
  tree.nChannels = 2;
  tree.bwIntra = 20;
  tree.bwInter = 12;
  c.graphs[kRing] = tree;
  Model m = run(c);
  // bwInter (more than 2 nodes) 12 x 2 channels x .75 = 18, kept as busBw for AllGather.
  EXPECT_NEAR(m.bandwidths[kAllGather][kPat][kSimple], 18.0f, 1e-5);
  // 8 + log2(4) x 14 / 3.5 + 4 x 2.8 (ppn 1: the tree's network latency) = 27.2.
  EXPECT_NEAR(m.latencies[kReduceScatter][kPat][kSimple], 27.2f, 1e-4);
  EXPECT_EQ(m.latencies[kAllGather][kPat][kLL], 0.0f);  // Simple only
  EXPECT_EQ(m.maxThreads[kPat][kSimple], 0);           // never set
  PickCell pat(kPat, kSimple, 0);
  auto ch = choose(c, m, {}, Operation{.func = kAllGather, .bytes = 1 << 20}, &pat);
  ASSERT_TRUE(ch.isOk());
  EXPECT_EQ(ch->algo, kPat);
  EXPECT_EQ(ch->nThreads, 640);  // PAT always uses every thread

  EXPECT_EQ(run(c, settingsOf({{"NCCL_PAT_ENABLE", "0"}})).bandwidths[kAllGather][kPat][kSimple], 0.0f);
  // PreMulSum ReduceScatter never takes PAT.
  CostTable t;
  costTable(c, m, Operation{.func = kReduceScatter, .bytes = 4096, .preMulSumOrPostDiv = true}, t);
  EXPECT_EQ(t[kPat][kSimple], kIgnore);
  // Two ranks per node: auto leaves PAT off.
  CommInputs two = hopper(2);
  EXPECT_EQ(run(two).bandwidths[kAllGather][kPat][kSimple], 0.0f);
  EXPECT_GT(run(two, settingsOf({{"NCCL_PAT_ENABLE", "1"}})).bandwidths[kAllGather][kPat][kSimple], 0.0f);
}

TEST(TuneSelect, Fp8RingCellsAreLeastPreferred) {
  CommInputs c = hopper(2);
  c.graphs[kRing].typeInter = 8;  // PHB: LL128 auto-disabled on the ring
  Model m = run(c);
  CostTable plain, fp8;
  costTable(c, m, Operation{.func = kAllReduce, .bytes = 65536}, plain);
  costTable(c, m, Operation{.func = kAllReduce, .bytes = 65536, .fp8 = true}, fp8);
  EXPECT_EQ(plain[kRing][kLL128], kIgnore);
  EXPECT_EQ(fp8[kRing][kLL128], -1024.0f);  // NCCL's quirk: no longer IGNORE, still skipped
  EXPECT_FLOAT_EQ(fp8[kRing][kSimple], plain[kRing][kSimple] * 1024.0f);
  EXPECT_EQ(fp8[kTree][kSimple], plain[kTree][kSimple]);
  auto ch = choose(c, m, {}, Operation{.func = kAllReduce, .bytes = 65536, .fp8 = true}, nullptr);
  ASSERT_TRUE(ch.isOk());
  EXPECT_EQ(ch->algo, kTree);
  // Eight ranks or fewer: no penalty.
  CommInputs one = hopper(1);
  Model m1 = run(one);
  costTable(one, m1, Operation{.func = kAllReduce, .bytes = 65536}, plain);
  costTable(one, m1, Operation{.func = kAllReduce, .bytes = 65536, .fp8 = true}, fp8);
  EXPECT_EQ(fp8[kRing][kSimple], plain[kRing][kSimple]);
}

TEST(TuneSelect, TreeCorrectionRingPlateauAndPipelining) {
  CommInputs c = hopper(2);
  c.nChannels = 32;
  Model m = run(c);
  float bw = m.bandwidths[kAllReduce][kTree][kLL], lat = m.latencies[kAllReduce][kTree][kLL];
  // 1 KiB: log2(1024 >> 6) = 4, LL factor .9.
  EXPECT_FLOAT_EQ(algoTime(c, m, kAllReduce, kTree, kLL, 1024, 1), lat + 1024.0f / (1000 * (bw * 0.9f)));
  // 16 GiB is past the table: no correction.
  EXPECT_FLOAT_EQ(algoTime(c, m, kAllReduce, kTree, kLL, size_t{1} << 34, 1),
                  lat + static_cast<float>(size_t{1} << 34) / (1000 * bw));
  // Ring/Simple AllReduce across nodes: x1.4 from 64 B per channel and rank (32 x 16 x 64 = 32 KiB).
  float rl = m.latencies[kAllReduce][kRing][kSimple], rb = m.bandwidths[kAllReduce][kRing][kSimple];
  EXPECT_FLOAT_EQ(algoTime(c, m, kAllReduce, kRing, kSimple, 32767, 1), rl + 32767.0f / (1000 * rb));
  EXPECT_FLOAT_EQ(algoTime(c, m, kAllReduce, kRing, kSimple, 32768, 1),
                  static_cast<float>(rl * 1.4) + 32768.0f / (1000 * rb));
  CommInputs volta = c;
  volta.minCompCap = volta.maxCompCap = 70;
  Model mv = run(volta);
  EXPECT_FLOAT_EQ(algoTime(volta, mv, kAllReduce, kRing, kSimple, 32768, 1),
                  static_cast<float>(mv.latencies[kAllReduce][kRing][kSimple] * 1.9) +
                      32768.0f / (1000 * mv.bandwidths[kAllReduce][kRing][kSimple]));
  // 11 batched operations: 11 ring latencies, 2 tree latencies (batches of 10).
  EXPECT_FLOAT_EQ(algoTime(c, m, kAllGather, kRing, kLL, 0, 11), 11 * m.latencies[kAllGather][kRing][kLL]);
  EXPECT_FLOAT_EQ(algoTime(c, m, kAllReduce, kTree, kSimple, 0, 11), 2 * m.latencies[kAllReduce][kTree][kSimple]);
  EXPECT_EQ(algoTime(c, m, kBroadcast, kTree, kSimple, 1024, 1), -1.0f);  // not modelled
}

TEST(TuneModel, LatenciesOfTwoIntelNodes) {
  Model m = run(hopper(2));
  // Ring AllReduce: 30 steps, 2 across nodes: LL 6.6 + 28 x .6 -> max(.6, 1.0 net overhead) = 28 + 2 x 2.7 = 40.0.
  EXPECT_NEAR(m.latencies[kAllReduce][kRing][kLL], 40.0f, 1e-4);
  // Simple: 8.4 + 28 x max(3.4, 3.0) + 2 x 14 = 131.6.
  EXPECT_NEAR(m.latencies[kAllReduce][kRing][kSimple], 131.6f, 1e-4);
  // Tree: 6.8 + 2 x (7 x .6 + 1 x 5.0) = 25.2.
  EXPECT_NEAR(m.latencies[kAllReduce][kTree][kLL], 25.2f, 1e-4);
  // Broadcast without sameChannels: 16 steps of the NET latency (Simple: the tree's).
  EXPECT_NEAR(m.latencies[kBroadcast][kRing][kSimple], 8.4f + 16 * 14.0f, 1e-3);
  // NCCL_NET_OVERHEAD in ns: 5000 -> 5 µs, x3 for Simple.
  Model o = run(hopper(2), settingsOf({{"NCCL_NET_OVERHEAD", "5000"}}));
  EXPECT_NEAR(o.latencies[kAllReduce][kRing][kLL], 6.6f + 28 * 5.0f + 2 * 2.7f, 1e-3);
  EXPECT_NEAR(o.latencies[kAllReduce][kRing][kSimple], 8.4f + 28 * 15.0f + 2 * 14.0f, 1e-3);
  // AMD x86: 2 µs, and the AMD row of the LL caps.
  CommInputs amd = hopper(2);
  amd.cpuVendor = kCpuVendorAmd;
  Model a = run(amd);
  EXPECT_NEAR(a.latencies[kAllReduce][kRing][kLL], 6.6f + 28 * 2.0f + 2 * 2.7f, 1e-3);
}

// A public NCCL 2.29.7 log (print code unchanged from 2.28.9; nccl-tuning-facts.md §2.9): two
// ranks of one GPU each as two nodes over sockets, one 2.4 GB/s ring channel. Its table rows:
//   Broadcast | ... |  9.3/ 1.2 | 18.0/ 0.0 | 22.4/ 2.4 |
//   AllGather | ... | 11.6/ 2.4 | 22.5/ 0.0 | 22.4/ 4.8 |   and Ring/Simple Max NThreads 256.
TEST(TuneModel, PublicLogOfTwoSocketNodes) {
  CommInputs c;
  c.nRanks = c.nNodes = 2;
  c.localRanks = c.minLocalRanks = c.maxLocalRanks = 1;
  c.nodeLocalRanks = {1, 1};
  c.minCompCap = c.maxCompCap = 80;
  c.nChannels = 2;
  for (int a : {kTree, kRing}) {
    GraphInputs& g = c.graphs[static_cast<size_t>(a)];
    g.nChannels = 1;
    g.sameChannels = 1;
    g.bwIntra = g.bwInter = 2.4f;
    g.typeInter = 10;  // NET
  }
  TuneSettings defaults;
  Model m = run(c, defaults);
  auto cell = [&m](int f, int p) {
    return strprintf("%8.1f/%6.1f", static_cast<double>(m.latencies[f][kRing][p]), static_cast<double>(m.bandwidths[f][kRing][p]));
  };
  EXPECT_EQ(cell(kBroadcast, kLL), "     9.3/   1.2");
  EXPECT_EQ(cell(kBroadcast, kLL128), "    18.0/   0.0");
  EXPECT_EQ(cell(kBroadcast, kSimple), "    22.4/   2.4");
  EXPECT_EQ(cell(kAllGather, kLL), "    11.6/   2.4");
  EXPECT_EQ(cell(kAllGather, kLL128), "    22.5/   0.0");
  EXPECT_EQ(cell(kAllGather, kSimple), "    22.4/   4.8");
  EXPECT_EQ(m.maxThreads[kRing][kSimple], 256);
  // Its per-operation lines pick RING/SIMPLE for a 32 KiB Broadcast (36.1 µs against LL's 36.6).
  auto ch = choose(c, m, defaults, Operation{.func = kBroadcast, .bytes = 32768}, nullptr);
  ASSERT_TRUE(ch.isOk());
  EXPECT_EQ(ch->algo, kRing);
  EXPECT_EQ(ch->proto, kSimple);
}

TEST(TuneModel, PowerCpuMakesTreeSimpleAsCheapAsTheRing) {
  CommInputs c = hopper(1);
  for (GraphInputs& g : c.graphs) g.typeIntra = 4;  // PCI
  c.cpuArch = kCpuArchPower;
  Model m = run(c);
  EXPECT_NEAR(m.latencies[kAllReduce][kTree][kSimple], 8.4f + 2 * 7 * 5.7f, 1e-3);
  EXPECT_EQ(m.constants.hwLatencies[kHwPci][kTree][kSimple], 5.7);
  c.cpuArch = kCpuArchX86;
  EXPECT_NEAR(run(c).latencies[kAllReduce][kTree][kSimple], 8.4f + 2 * 7 * 4.0f, 1e-3);
}

TEST(TuneModel, Ll128Enablement) {
  CommInputs c = hopper(2);
  c.graphs[kRing].typeInter = 7;  // PXN
  EXPECT_GT(run(c).bandwidths[kAllReduce][kRing][kLL128], 0.0f);  // sm90: up to PXN
  {
    LogCapture cap(log::Level::kInfo, log::kGraph);
    EXPECT_EQ(run(c, settingsOf({{"NCCL_LL128_C2C", "0"}})).bandwidths[kAllReduce][kRing][kLL128], 0.0f);
    bool said = false;
    for (const std::string& l : cap.lines()) said |= l.find("Disabling LL128 over all PxN connections") != std::string::npos;
    EXPECT_TRUE(said);
  }
  CommInputs ampere = c;
  ampere.minCompCap = ampere.maxCompCap = 80;
  EXPECT_EQ(run(ampere).bandwidths[kAllReduce][kRing][kLL128], 0.0f);  // before sm90: up to PXB
  // NCCL_PROTO naming LL128 forces it on.
  EXPECT_GT(run(ampere, settingsOf({{"NCCL_PROTO", "LL128,Simple"}})).bandwidths[kAllReduce][kRing][kLL128], 0.0f);
  CommInputs mixed = hopper(1);
  mixed.maxCompCap = 100;  // different GPUs
  EXPECT_EQ(run(mixed).bandwidths[kAllReduce][kRing][kLL128], 0.0f);
}

TEST(TuneSettings, ProtoAndAlgoGrammar) {
  LogCapture cap(log::Level::kInfo, log::kEnv);
  Model m = run(hopper(2), settingsOf({{"NCCL_PROTO", "^LL128;allreduce:LL128"}, {"NCCL_ALGO", "ring;allreduce:^ring"}}));
  EXPECT_EQ(m.protoEnable[kBroadcast][kLL], 1);
  EXPECT_EQ(m.protoEnable[kBroadcast][kLL128], 0);
  EXPECT_EQ(m.protoEnable[kAllReduce][kLL128], 1);
  EXPECT_EQ(m.protoEnable[kAllReduce][kSimple], 0);
  EXPECT_EQ(m.algoEnable[kAllGather][kRing], 1);
  EXPECT_EQ(m.algoEnable[kAllGather][kPat], 0);
  EXPECT_EQ(m.algoEnable[kAllReduce][kRing], 0);
  EXPECT_EQ(m.algoEnable[kAllReduce][kTree], 1);
  EXPECT_EQ(m.bandwidths[kAllReduce][kRing][kLL128], 0.0f);
  EXPECT_GT(m.bandwidths[kAllReduce][kTree][kLL128], 0.0f);
  EXPECT_EQ(m.bandwidths[kAllReduce][kTree][kSimple], 0.0f);
  std::vector<std::string> lines = test::linesOfRank(cap.lines(), 0);
  ASSERT_GE(cap.lines().size(), 3u);
  std::string all;
  for (const std::string& l : cap.lines()) all += l + "\n";
  EXPECT_NE(all.find("NCCL_PROTO set by environment to ^LL128;allreduce:LL128"), std::string::npos) << all;
  EXPECT_NE(all.find("NCCL_ALGO set by environment to ring;allreduce:^ring"), std::string::npos) << all;
  // The matrix: one INFO line with the table embedded, NCCL's widths.
  EXPECT_NE(all.find("Enabled NCCL Func/Proto/Algo Matrix:\n     Function |       LL     LL128    Simple   | "
                     "         Tree           Ring  CollNetDirect   CollNetChain           NVLS       NVLSTree  "
                     "          PAT  \n"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("    AllReduce |        0         1         0   |             1              0              1  "),
            std::string::npos)
      << all;
  // Only one protocol section per function: left-out functions keep LL128 on auto (2).
  Model only = run(hopper(2), settingsOf({{"NCCL_PROTO", "allreduce:Simple"}}));
  EXPECT_EQ(only.protoEnable[kBroadcast][kLL128], 2);
  EXPECT_EQ(only.protoEnable[kAllReduce][kLL], 0);
}

TEST(TuneSettings, ConfigRejectsWhatNcclRejects) {
  config::Settings s;
  EXPECT_FALSE(s.set("NCCL_ALGO", "ring;tree").isOk());           // a later section without a function
  EXPECT_FALSE(s.set("NCCL_PROTO", "LL,Fast").isOk());            // unknown protocol
  EXPECT_FALSE(s.set("NCCL_ALGO", "allgahter:ring").isOk());      // unknown function
  EXPECT_TRUE(s.set("NCCL_ALGO", "nvlstree,ring;allgather:^pat").isOk());  // case-insensitive
}

TEST(TuneSettings, ThreadCountsAndThresholds) {
  CommInputs c = hopper(2);
  {
    LogCapture cap(log::Level::kInfo, log::kEnv);
    Model m = run(c, settingsOf({{"NCCL_NTHREADS", "100"}, {"NCCL_LL128_NTHREADS", "96"}}));
    EXPECT_EQ(m.maxThreads[kRing][kSimple], 512);
    EXPECT_EQ(m.maxThreads[kTree][kLL], 512);
    EXPECT_EQ(m.maxThreads[kRing][kLL128], 160);
    EXPECT_EQ(m.maxThreads[kNvls][kSimple], 640);  // fixed
    int invalid = 0;
    for (const std::string& l : cap.lines()) invalid += l.find("Invalid NCCL_NTHREADS 100 (must be a multiple of 32)") != std::string::npos;
    EXPECT_EQ(invalid, 3);  // NCCL checks it for ring Simple, tree Simple and LL
    std::vector<std::string> l = cap.lines();
    // ncclLoadParam's line comes first, once, where NCCL first reads the setting.
    auto at = [&l](const std::string& text) {
      for (size_t i = 0; i < l.size(); ++i)
        if (l[i].find(text) != std::string::npos) return static_cast<int>(i);
      return -1;
    };
    EXPECT_GE(at("NCCL_NTHREADS set by environment to 100."), 0);
    EXPECT_LT(at("NCCL_NTHREADS set by environment to 100."), at("Invalid NCCL_NTHREADS 100"));
    EXPECT_LT(at("Invalid NCCL_NTHREADS 100"), at("NCCL_LL128_NTHREADS set by environment to 96."));
  }
  EXPECT_EQ(run(c, settingsOf({{"NCCL_NTHREADS", "1024"}})).maxThreads[kRing][kSimple], 512);
  EXPECT_EQ(run(c, settingsOf({{"NCCL_NTHREADS", "32"}})).maxThreads[kTree][kSimple], 64);
  EXPECT_EQ(run(c, settingsOf({{"NCCL_NTHREADS", "128"}})).maxThreads[kRing][kLL], 128);
  // A ring under 12 GB/s in total gets 256 Simple threads.
  CommInputs slow = c;
  slow.graphs[kRing].bwIntra = 1.5f;
  EXPECT_EQ(run(slow).maxThreads[kRing][kSimple], 256);

  Model d = run(c);
  EXPECT_EQ(d.threadThresholds[kRing][kLL], 8 * 16);  // x nRanks
  EXPECT_EQ(d.threadThresholds[kCollnetDirect][kSimple], 512);
  LogCapture cap(log::Level::kInfo, log::kInit | log::kEnv);
  Model t = run(c, settingsOf({{"NCCL_THREAD_THRESHOLDS", "1 2 3 -1 5"}}));
  EXPECT_EQ(t.threadThresholds[kTree][kSimple], 3);
  EXPECT_EQ(t.threadThresholds[kRing][kLL], 128);  // negative keeps the default
  EXPECT_EQ(t.threadThresholds[kRing][kLL128], 5);
  EXPECT_EQ(t.threadThresholds[kRing][kSimple], 64);  // missing keeps the default
  std::string all;
  for (const std::string& l : cap.lines()) all += l + "\n";
  EXPECT_NE(all.find("NCCL_THREAD_THRESHOLDS set by environment to 1 2 3 -1 5"), std::string::npos);
  EXPECT_NE(all.find("threadThresholds 1/2/3 | 128/5/64 | 512 | 512"), std::string::npos) << all;
}

TEST(TuneSelect, ChannelsAndThreadsShrinkForSmallSizes) {
  CommInputs c = hopper(1);
  Model m = run(c, settingsOf({{"NCCL_ALGO", "ring"}, {"NCCL_PROTO", "simple"}}));
  // Ring/Simple: 512 threads, threshold 64: 4 KiB < nc x 512 x 64 down to 1 channel, then
  // threads halve to 64 (4096 >= 64 x 64); +32 for the sync warp.
  auto ch = choose(c, m, {}, Operation{.func = kAllReduce, .bytes = 4096}, nullptr);
  ASSERT_TRUE(ch.isOk());
  EXPECT_EQ(ch->algo, kRing);
  EXPECT_EQ(ch->proto, kSimple);
  EXPECT_EQ(ch->nMaxChannels, 1);
  EXPECT_EQ(ch->nThreads, 96);
  auto big = choose(c, m, {}, Operation{.func = kAllReduce, .bytes = 1u << 30}, nullptr);
  ASSERT_TRUE(big.isOk());
  EXPECT_EQ(big->nMaxChannels, 16);
  EXPECT_EQ(big->nThreads, 544);
}

TEST(TuneSelect, HugeThresholdsWrapLikeNcclsIntProducts) {
  CommInputs c = hopper(1);
  TuneSettings s = settingsOf({{"NCCL_ALGO", "ring"}, {"NCCL_PROTO", "simple"}, {"NCCL_THREAD_THRESHOLDS", "-1 -1 -1 -1 -1 2000000"}});
  Model m = run(c, s);
  auto ch = choose(c, m, s, Operation{.func = kAllReduce, .bytes = 1u << 30}, nullptr);
  ASSERT_TRUE(ch.isOk());
  // nc x 512 x 2e6 wraps in 32 bits: negative (always "more than the bytes") at 16 and 15
  // channels, 1451098112 at 14, 427098112 at 13 (below 1 GiB): NCCL stops at 13.
  EXPECT_EQ(ch->nMaxChannels, 13);
  EXPECT_EQ(ch->nThreads, 544);
}

TEST(TuneSelect, TunerHookSeesTheTableAndSetsChannels) {
  CommInputs c = hopper(2);
  Model m = run(c);
  PickCell hook(kRing, kSimple, 3);
  Operation op{.func = kAllGather, .bytes = 8, .numPipeOps = 2, .regBuff = 1};
  CostTable after;
  auto ch = choose(c, m, {}, op, &hook, &after);
  ASSERT_TRUE(ch.isOk());
  EXPECT_EQ(ch->algo, kRing);
  EXPECT_EQ(ch->proto, kSimple);
  EXPECT_EQ(ch->timeUs, 0.0f);
  EXPECT_EQ(ch->nMaxChannels, 3);  // the tuner's budget replaces NCCL's
  EXPECT_EQ(ch->nThreads, 96);     // threads as NCCL picked them for its own channel count
  EXPECT_EQ(after[kRing][kSimple], 0.0f);
  EXPECT_EQ(hook.last.func, kAllGather);
  EXPECT_EQ(hook.last.numPipeOps, 2);
  EXPECT_EQ(hook.last.regBuff, 1);
  PickCell failing(kRing, kSimple, 0, true);
  auto bad = choose(c, m, {}, op, &failing);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("tuner says no"), std::string::npos);
  // A disabled cell stays disabled: the hook cannot pick an IGNORE cell.
  PickCell disabled(kCollnetChain, kSimple, 0);
  auto d = choose(c, m, {}, Operation{.func = kAllReduce, .bytes = 8}, &disabled);
  ASSERT_TRUE(d.isOk());
  EXPECT_NE(d->algo, kCollnetChain);
}

class TuneNoChoice : public test::WeftTest {};

TEST_F(TuneNoChoice, NothingEnabledIsAnError) {
  expectWarn("no algorithm/protocol available");
  CommInputs c = hopper(2);
  TuneSettings s = settingsOf({{"NCCL_ALGO", "nvls"}});
  Model m = run(c, s);
  auto ch = choose(c, m, s, Operation{.func = kAllReduce, .bytes = 8}, nullptr);
  ASSERT_FALSE(ch.isOk());
  EXPECT_EQ(ch.status().code(), Code::kInvalidUsage);
  EXPECT_NE(ch.status().message().find("NCCL_ALGO was set to nvls"), std::string::npos);
  TuneSettings none;
  Model plain = run(c);
  CommInputs broken = c;
  broken.graphs[kRing].nChannels = broken.graphs[kTree].nChannels = 0;
  Model z = run(broken);
  auto ch2 = choose(broken, z, none, Operation{.func = kBroadcast, .bytes = 8}, nullptr);
  ASSERT_FALSE(ch2.isOk());
  EXPECT_EQ(ch2.status().code(), Code::kInternalError);
  (void)plain;
}

}  // namespace
}  // namespace weft::tune

namespace weft::tune {
namespace {

// ncclTopoComputeP2pChannels on the bundled HGX H100 (8 GPUs on NVSwitch, GPUs behind PCIe
// switches so no NIC count by bandwidth), through the whole offline pipeline.
CommInputs p2pOf(int nodes, std::initializer_list<std::pair<const char*, const char*>> kv) {
  config::Settings s;
  for (const auto& [k, v] : kv) EXPECT_TRUE(s.set(k, v).isOk()) << k;
  auto topo = topo::TopoXml::load(std::string(WEFT_SOURCE_DIR) + "/examples/topologies/hgx-h100-8gpu.xml");
  EXPECT_TRUE(topo.isOk());
  auto comm = simulateComm(*topo, tuneSearchOptions(nodes, s));
  EXPECT_TRUE(comm.isOk()) << comm.status().toString();
  std::vector<std::string> discarded;
  log::ScopedRecorder quiet(&discarded, log::kAll);
  auto t = tuneComm(*comm, s);
  EXPECT_TRUE(t.isOk());
  return t.isOk() ? t->comm : CommInputs{};
}

TEST(TuneInputs, P2pChannelsFollowNcclsRules) {
  // One node: 24 channels -> 32; NVLink peers give 2 x 18 links: 32 per peer.
  CommInputs one = p2pOf(1, {});
  EXPECT_EQ(one.p2pnChannels, 32);
  EXPECT_EQ(one.p2pnChannelsPerPeer, 32);
  // Two nodes: 16 channels; a network peer gets 2 (2 x 16 ranks <= 16 x 4).
  CommInputs two = p2pOf(2, {});
  EXPECT_EQ(two.nChannels, 16);
  EXPECT_EQ(two.p2pnChannels, 16);
  EXPECT_EQ(two.p2pnChannelsPerPeer, 2);
  // Sixteen nodes: 2 x 128 ranks > 16 x 4, so one channel per network peer.
  EXPECT_EQ(p2pOf(16, {}).p2pnChannelsPerPeer, 1);
  EXPECT_EQ(p2pOf(2, {{"NCCL_MAX_P2P_NCHANNELS", "8"}}).p2pnChannels, 8);
  EXPECT_EQ(p2pOf(2, {{"NCCL_NCHANNELS_PER_NET_PEER", "3"}}).p2pnChannelsPerPeer, 4);  // a power of two
  EXPECT_EQ(p2pOf(2, {{"NCCL_NCHANNELS_PER_NET_PEER", "0"}}).p2pnChannelsPerPeer, 2);  // <= 0: unset
}

// NCCL's minCompCap and maxCompCap span every rank's own GPU (peer info), not each trim
// domain's smallest: one sm80 GPU among sm90 ones on NVSwitch (one domain) gives 80/90, and
// LL128, which needs one GPU generation, is off everywhere (nccl-oracle's mixsm copies).
// The bundled HGX H100 with GPU `dev` given `sm`, tuned on `nodes` nodes.
Result<Tuned> hgxWithOneGpu(int dev, int sm, int nodes) {
  std::string text;
  {
    std::ifstream in(std::string(WEFT_SOURCE_DIR) + "/examples/topologies/hgx-h100-8gpu.xml");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string gpu = strprintf("<gpu dev=\"%d\" sm=\"90\"", dev);
  size_t at = text.find(gpu);
  if (at == std::string::npos) return invalidArgument("no " + gpu);
  text.replace(at, gpu.size(), strprintf("<gpu dev=\"%d\" sm=\"%d\"", dev, sm));
  WEFT_ASSIGN_OR_RETURN(topo::TopoXml topo, topo::TopoXml::parse(text));
  config::Settings s;
  WEFT_ASSIGN_OR_RETURN(OfflineComm comm, simulateComm(topo, tuneSearchOptions(nodes, s)));
  std::vector<std::string> discarded;
  log::ScopedRecorder quiet(&discarded, log::kAll);
  return tuneComm(comm, s);
}

TEST(TuneInputs, MixedComputeCapabilitiesTurnLl128Off) {
  for (int nodes : {1, 2}) {
    SCOPED_TRACE(nodes);
    auto t = hgxWithOneGpu(3, 80, nodes);
    ASSERT_TRUE(t.isOk()) << t.status().toString();
    EXPECT_EQ(t->comm.minCompCap, 80);
    EXPECT_EQ(t->comm.maxCompCap, 90);
    for (int a : {kTree, kRing}) EXPECT_EQ(t->model.bandwidths[kAllReduce][a][kLL128], 0.0f) << algoName(a);
  }
}

// ncclNvlsInit counts NVLS channels from the rank's own GPU: rank 0 on an sm100 GPU among sm90
// ones has Blackwell's 24 (one host) or 32 (several), not the 16 of the box's smallest sm.
TEST(TuneInputs, NvlsChannelsFollowRankZerosOwnGpu) {
  auto one = hgxWithOneGpu(0, 100, 1);
  ASSERT_TRUE(one.isOk()) << one.status().toString();
  EXPECT_EQ(one->comm.nvlsChannels, 24);
  auto two = hgxWithOneGpu(0, 100, 2);
  ASSERT_TRUE(two.isOk()) << two.status().toString();
  EXPECT_EQ(two->comm.nvlsChannels, 32);
  auto other = hgxWithOneGpu(1, 100, 1);  // rank 1's GPU: rank 0 keeps Hopper's 16
  ASSERT_TRUE(other.isOk()) << other.status().toString();
  EXPECT_EQ(other->comm.nvlsChannels, 16);
}

}  // namespace
}  // namespace weft::tune
