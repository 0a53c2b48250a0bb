// NCCL 2.28.9's tuning on every case of corpus/reference-nccl-2.28.9-tuning: weft's search and
// connect feed weft's model, and its INFO lines, per-size choices (TUNE), channel budgets
// (TUNECH) and whole cost tables (COST) must equal NCCL's. The `# comm` / `# graph` lines are
// NCCL's model inputs: checked too, so that a difference points at the stage that caused it.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/tune/offline.h"
#include "core/tune/select.h"
#include "tests/support/corpus.h"
#include "tests/support/tune_corpus.h"

namespace weft::tune {
namespace {

using Case = test::TuneCase;

int funcOf(const std::string& name) {
  static const std::map<std::string, int> kFuncs = {{"broadcast", kBroadcast},   {"reduce", kReduce},
                                                    {"allgather", kAllGather},   {"reducescatter", kReduceScatter},
                                                    {"allreduce", kAllReduce}};
  auto it = kFuncs.find(name);
  return it == kFuncs.end() ? -1 : it->second;
}

std::string fmtFloat(float v) { return strprintf("%g", static_cast<double>(v)); }

const char* pathName(int t) {
  static const char* kNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return t >= 0 && t < 12 ? kNames[t] : "?";
}

// weft's value of every "# comm" field.
std::map<std::string, std::string> commFields(const CommInputs& c) {
  auto s = [](long v) { return std::to_string(v); };
  return {{"nRanks", s(c.nRanks)},
          {"nNodes", s(c.nNodes)},
          {"localRanks", s(c.localRanks)},
          {"maxLocalRanks", s(c.maxLocalRanks)},
          {"minLocalRanks", s(c.minLocalRanks)},
          {"minCompCap", s(c.minCompCap)},
          {"maxCompCap", s(c.maxCompCap)},
          {"cpuArch", s(c.cpuArch)},
          {"cpuVendor", s(c.cpuVendor)},
          {"netDeviceType", s(c.netDeviceType)},
          {"maxTreePattern", s(c.maxTreePattern)},
          {"nChannels", s(c.nChannels)},
          {"nvlsSupport", s(c.nvlsSupport)},
          {"nvlsChannels", s(c.nvlsChannels)},
          {"collnetEnable", s(c.collnetEnable)},
          {"p2pnChannels", s(c.p2pnChannels)},
          {"p2pnChannelsPerPeer", s(c.p2pnChannelsPerPeer)}};
}

std::map<std::string, std::string> graphFields(const GraphInputs& g) {
  auto s = [](long v) { return std::to_string(v); };
  return {{"pattern", s(g.pattern)},           {"nChannels", s(g.nChannels)},
          {"sameChannels", s(g.sameChannels)}, {"bwIntra", fmtFloat(g.bwIntra)},
          {"bwInter", fmtFloat(g.bwInter)},    {"latencyInter", fmtFloat(g.latencyInter)},
          {"typeIntra", pathName(g.typeIntra)}, {"typeInter", pathName(g.typeInter)},
          {"crossNic", s(g.crossNic)}};
}

int graphIndex(const std::string& name) {
  if (name == "Ring") return kRing;
  if (name == "Tree") return kTree;
  if (name == "CollNetChain") return kCollnetChain;
  if (name == "CollNetDirect") return kCollnetDirect;
  if (name == "NVLS") return kNvls;
  return -1;
}

// Cells of one case: every value compared, and how many matched.
struct Tally {
  int cells = 0;
  int matched = 0;
  void add(bool ok) {
    ++cells;
    matched += ok ? 1 : 0;
  }
};

struct Totals {
  Tally info, tune, tunech, cost;
};

// Runs one case; records the first difference of each kind as a test failure.
void runCase(const Case& c, Totals& totals) {
  SCOPED_TRACE(c.name);
  ASSERT_FALSE(c.tune.empty()) << "no TUNE lines";
  config::Settings settings;
  for (const auto& [k, v] : c.env) ASSERT_TRUE(settings.set(k, v).isOk()) << k << "=" << v;
  auto topo = topo::TopoXml::load(c.topology.string());
  ASSERT_TRUE(topo.isOk()) << topo.status().toString();
  auto comm = simulateComm(*topo, tuneSearchOptions(c.nodes, settings));
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  std::vector<std::string> lines;
  Result<Tuned> tuned = [&] {
    log::ScopedRecorder recorder(&lines, log::kTuning | log::kInit | log::kEnv);
    return tuneComm(*comm, settings);
  }();
  ASSERT_TRUE(tuned.isOk()) << tuned.status().toString();

  // Inputs.
  std::map<std::string, std::string> mine = commFields(tuned->comm);
  for (const auto& [k, v] : c.comm)
    EXPECT_EQ(mine.count(k) ? mine[k] : "(none)", v) << "# comm " << k;
  for (const auto& [name, fields] : c.graphs) {
    int g = graphIndex(name);
    ASSERT_GE(g, 0) << name;
    std::map<std::string, std::string> gm = graphFields(tuned->comm.graphs[static_cast<size_t>(g)]);
    // A graph with no channels is not modelled; NCCL's leftover path types of a failed search do not matter.
    bool empty = fields.count("nChannels") && fields.at("nChannels") == "0";
    for (const auto& [k, v] : fields) {
      if (empty && (k == "typeIntra" || k == "typeInter")) continue;
      EXPECT_EQ(gm[k], v) << "# graph " << name << " " << k;
    }
  }

  // INFO lines, in order.
  size_t n = std::max(lines.size(), c.info.size());
  bool infoReported = false;
  for (size_t i = 0; i < n; ++i) {
    std::string want = i < c.info.size() ? c.info[i] : "(no line)";
    std::string got = i < lines.size() ? lines[i] : "(no line)";
    bool ok = want == got;
    if (i < c.info.size()) totals.info.add(ok);
    if (!ok && !infoReported) {
      infoReported = true;
      ADD_FAILURE() << "INFO line " << i << " differs\n  NCCL: " << want << "\n  weft: " << got;
    }
  }

  // Per size: the choice, its channels and threads, the whole table.
  std::map<std::pair<std::string, std::string>, Choice> choices;
  std::map<std::pair<std::string, std::string>, std::vector<float>> tables;
  auto run = [&](const std::string& coll, const std::string& bytes) -> const Choice* {
    auto key = std::make_pair(coll, bytes);
    if (!choices.count(key)) {
      Operation op;
      op.func = funcOf(coll);
      op.bytes = std::stoull(bytes);
      CostTable table;
      auto choice = choose(tuned->comm, tuned->model, tuned->settings, op, nullptr, &table);
      if (!choice.isOk()) return nullptr;
      choices[key] = *choice;
      tables[key].assign(&table[0][0], &table[0][0] + kNumAlgorithms * kNumProtocols);
    }
    return &choices[key];
  };
  bool tuneReported = false, chReported = false, costReported = false;
  for (const auto& t : c.tune) {
    ASSERT_EQ(t.size(), 5u);
    const Choice* ch = run(t[0], t[1]);
    std::string got = ch ? strprintf("%s %s %.3f", algoName(ch->algo), protoName(ch->proto), static_cast<double>(ch->timeUs))
                         : "(error)";
    std::string want = t[2] + " " + t[3] + " " + t[4];
    totals.tune.add(got == want);
    if (got != want && !tuneReported) {
      tuneReported = true;
      ADD_FAILURE() << "TUNE " << t[0] << " " << t[1] << ": NCCL " << want << ", weft " << got;
    }
  }
  for (const auto& t : c.tunech) {
    ASSERT_EQ(t.size(), 4u);
    const Choice* ch = run(t[0], t[1]);
    std::string got = ch ? strprintf("%d %d", ch->nMaxChannels, ch->nThreads) : "(error)";
    std::string want = t[2] + " " + t[3];
    totals.tunech.add(got == want);
    if (got != want && !chReported) {
      chReported = true;
      ADD_FAILURE() << "TUNECH " << t[0] << " " << t[1] << ": NCCL " << want << ", weft " << got;
    }
  }
  for (const auto& t : c.cost) {
    ASSERT_EQ(t.size(), 2u + kNumAlgorithms * kNumProtocols);
    ASSERT_NE(run(t[0], t[1]), nullptr);
    const std::vector<float>& table = tables[{t[0], t[1]}];
    for (int i = 0; i < kNumAlgorithms * kNumProtocols; ++i) {
      std::string got = strprintf("%.3f", static_cast<double>(table[static_cast<size_t>(i)]));
      bool ok = got == t[2 + static_cast<size_t>(i)];
      totals.cost.add(ok);
      if (!ok && !costReported) {
        costReported = true;
        ADD_FAILURE() << "COST " << t[0] << " " << t[1] << " " << algoName(i / kNumProtocols) << "/"
                      << protoName(i % kNumProtocols) << ": NCCL " << t[2 + static_cast<size_t>(i)] << ", weft " << got;
      }
    }
  }
}

TEST(TuneGolden, EveryCorpusCaseMatchesNccl) {
  WEFT_REQUIRE_CORPUS();
  std::vector<Case> cases = test::tuneCases();
  ASSERT_GE(cases.size(), 10u);
  Totals totals;
  for (const Case& c : cases) runCase(c, totals);
  std::printf("tune golden: %zu cases; INFO lines %d/%d, TUNE %d/%d, TUNECH %d/%d, COST cells %d/%d match\n",
              cases.size(), totals.info.matched, totals.info.cells, totals.tune.matched, totals.tune.cells,
              totals.tunech.matched, totals.tunech.cells, totals.cost.matched, totals.cost.cells);
}

}  // namespace
}  // namespace weft::tune
