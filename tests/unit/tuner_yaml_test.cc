// weft's YAML rule tuner: the rule parser and its errors, matching and applying, the policy
// loader's check of TUNER_RULES, and the built libnccl-tuner-weft.so through weft's loader.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "core/config/sources.h"
#include "core/plugin/tuner_loader.h"
#include "plugins/tuner-yaml/rules.h"
#include "tests/support/scoped_env.h"
#include "tests/unit/plugin_test_support.h"

namespace weft::tuneryaml {
namespace {

std::vector<Rule> parse(const std::string& yaml, std::string* err = nullptr) {
  std::vector<Rule> rules;
  std::string e = parseRulesDocument(yaml, "weft.yaml", rules);
  if (err != nullptr) *err = e;
  else EXPECT_EQ(e, "");
  return rules;
}

std::string errorOf(const std::string& yaml) {
  std::string e;
  parse(yaml, &e);
  return e;
}

TEST(TunerYamlBytes, BinaryUnitsAndPlainCounts) {
  uint64_t v = 0;
  EXPECT_TRUE(parseBytes("64K", v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(parseBytes("1m", v));
  EXPECT_EQ(v, 1u << 20);
  EXPECT_TRUE(parseBytes("2G", v));
  EXPECT_EQ(v, 2ull << 30);
  EXPECT_TRUE(parseBytes("4096", v));
  EXPECT_EQ(v, 4096u);
  EXPECT_FALSE(parseBytes("", v));
  EXPECT_FALSE(parseBytes("K", v));
  EXPECT_FALSE(parseBytes("1.5M", v));
  EXPECT_FALSE(parseBytes("-1", v));
  EXPECT_FALSE(parseBytes("99999999999999999T", v));
}

TEST(TunerYamlRules, EveryMatchAndActionForm) {
  auto rules = parse(
      "NCCL_DEBUG: WARN\n"
      "TUNER_RULES:\n"
      "  - {coll: allreduce, size: 0-64K, nodes: 2-, ranks: -64, arch: hopper, algo: tree, proto: ll}\n"
      "  - coll: [AllGather, reduce_scatter]\n"
      "    size: 1M-\n"
      "    arch: [90, blackwell]\n"
      "    channels: 16\n"
      "  - {size: 8, proto: Simple}\n");
  ASSERT_EQ(rules.size(), 3u);
  const Rule& a = rules[0];
  EXPECT_EQ(a.where, "weft.yaml:3");
  EXPECT_EQ(a.collMask, 1u << 4);
  EXPECT_EQ(a.bytes.min, 0u);
  EXPECT_EQ(a.bytes.max, 65536u);
  EXPECT_EQ(a.nodes.min, 2u);
  EXPECT_EQ(a.nodes.max, UINT64_MAX);
  EXPECT_EQ(a.ranks.max, 64u);
  EXPECT_EQ(a.archs, std::vector<int>{90});
  EXPECT_EQ(a.algo, 0);
  EXPECT_EQ(a.proto, 0);
  EXPECT_EQ(rules[1].where, "weft.yaml:4");
  EXPECT_EQ(rules[1].collMask, (1u << 2) | (1u << 3));
  EXPECT_EQ(rules[1].bytes.min, 1u << 20);
  EXPECT_EQ(rules[1].archs, (std::vector<int>{90, 100}));
  EXPECT_EQ(rules[1].channels, 16);
  EXPECT_EQ(rules[1].algo, -1);
  EXPECT_EQ(rules[2].collMask, 0x1fu);
  EXPECT_EQ(rules[2].bytes.min, 8u);
  EXPECT_EQ(rules[2].bytes.max, 8u);
  EXPECT_EQ(rules[2].proto, 2);
}

TEST(TunerYamlRules, ErrorsNameFileLineKeyAndTheExpectedForm) {
  EXPECT_EQ(errorOf("TUNER_RULES:\n  - {coll: allreduce, algo: bogus}\n"),
            "weft.yaml:2: algo: bad value \"bogus\"; expected one of Tree, Ring, CollNetDirect, CollNetChain, NVLS, "
            "NVLSTree, PAT");
  EXPECT_EQ(errorOf("TUNER_RULES:\n  - {algo: ring}\n  - {coll: allreduce, size: 64Q-1M, algo: ring}\n"),
            "weft.yaml:3: size: bad value \"64Q-1M\"; expected bytes as N, A-B, A- or -B with K/M/G/T units (0-64K)");
  EXPECT_NE(errorOf("TUNER_RULES:\n  - {coll: allreduce}\n").find("weft.yaml:2: the rule sets nothing"),
            std::string::npos);
  EXPECT_NE(errorOf("TUNER_RULES:\n  - {colll: allreduce, algo: ring}\n").find("unknown rule key \"colll\""),
            std::string::npos);
  EXPECT_NE(errorOf("TUNER_RULES:\n  - {coll: alltoall, algo: ring}\n").find("unknown collective \"alltoall\""),
            std::string::npos);
  EXPECT_NE(errorOf("TUNER_RULES: {algo: ring}\n").find("weft.yaml:1: TUNER_RULES: expected a list"), std::string::npos);
  EXPECT_NE(errorOf("TUNER_RULES:\n  - {algo: ring, algo: tree}\n").find("duplicate rule key algo"), std::string::npos);
  EXPECT_NE(errorOf("TUNER_RULES:\n  - {size: 1M-64K, algo: ring}\n").find("size: bad value"), std::string::npos);
  EXPECT_NE(errorOf("TUNER_RULES:\n  - {channels: 65}\n").find("1 to 64"), std::string::npos);
  EXPECT_NE(errorOf("TUNER_RULES:\n  - {arch: pascal9, algo: ring}\n").find("unknown architecture"), std::string::npos);
  EXPECT_NE(errorOf("TUNER_RULES:\n  - [1, 2]\n").find("weft.yaml:2: a rule must be a map"), std::string::npos);
  EXPECT_NE(errorOf("TUNER_RULES: [\n").find("weft.yaml:"), std::string::npos);
}

TEST(TunerYamlRules, FirstMatchWinsWithInclusiveRanges) {
  auto rules = parse(
      "TUNER_RULES:\n"
      "  - {coll: allreduce, size: 0-64K, algo: tree}\n"
      "  - {coll: allreduce, size: 64K-, nodes: 2-4, algo: ring}\n"
      "  - {arch: 90, proto: ll128}\n"
      "  - {algo: pat}\n");
  auto at = [&](Query q) { const Rule* r = firstMatch(rules, q); return r ? r->where : std::string("none"); };
  EXPECT_EQ(at({.coll = 4, .bytes = 65536, .nRanks = 8, .nNodes = 1}), "weft.yaml:2");  // inclusive, first wins
  EXPECT_EQ(at({.coll = 4, .bytes = 65537, .nRanks = 8, .nNodes = 4}), "weft.yaml:3");
  EXPECT_EQ(at({.coll = 4, .bytes = 65537, .nRanks = 8, .nNodes = 5, .arch = 90}), "weft.yaml:4");
  EXPECT_EQ(at({.coll = 4, .bytes = 65537, .nRanks = 8, .nNodes = 5, .arch = 0}), "weft.yaml:5") << "unknown arch";
  EXPECT_EQ(at({.coll = 7, .bytes = 1}), "none") << "not a modelled collective";
}

TEST(TunerYamlRules, PipeOpsAndRegisteredBuffersMatch) {
  auto rules = parse(
      "TUNER_RULES:\n"
      "  - {pipe_ops: 2-, reg_buff: 1, algo: nvls}\n"
      "  - {reg_buff: 0, algo: ring}\n"
      "  - {algo: tree}\n");
  auto at = [&](Query q) { return firstMatch(rules, q)->where; };
  EXPECT_EQ(at({.coll = 4, .numPipeOps = 2, .regBuff = 1}), "weft.yaml:2");
  EXPECT_EQ(at({.coll = 4, .numPipeOps = 1, .regBuff = 1}), "weft.yaml:4");
  EXPECT_EQ(at({.coll = 4, .numPipeOps = 1, .regBuff = 0}), "weft.yaml:3");
  EXPECT_EQ(at({.coll = 4, .numPipeOps = 2, .regBuff = -1}), "weft.yaml:4") << "a v3 host does not say";
  std::string e;
  parse("TUNER_RULES:\n  - {reg_buff: 2, algo: ring}\n", &e);
  EXPECT_EQ(e, "weft.yaml:2: reg_buff: bad value \"2\"; expected 0 or 1");
}

TEST(TunerYamlRules, HostGlobsMatchLikeAPolicyProfile) {
  auto rules = parse(
      "TUNER_RULES:\n"
      "  - {host: ['gpu-a*', 'dgx?'], algo: nvls}\n"
      "  - {algo: ring}\n");
  auto at = [&](std::string_view host) { return firstMatch(rules, {.coll = 4, .host = host})->where; };
  EXPECT_EQ(at("gpu-a17"), "weft.yaml:2");
  EXPECT_EQ(at("dgx7"), "weft.yaml:2");
  EXPECT_EQ(at("gpu-b1"), "weft.yaml:3");
  EXPECT_EQ(at(""), "weft.yaml:3") << "an unknown host name matches no host rule";
}

// NVIDIA's ext-tuner CSV, read into the same rules (the example of docs/tuner.md).
TEST(TunerYamlCsv, ReadsNvidiasFormatIntoTheSameRules) {
  const std::string csv =
      "# nccl_tuner.conf\n"
      "allreduce,0,65536,tree,ll,-1,2,16\n"
      "\n"
      "allreduce, 65537, 8388608, ring, ll128, -1, 2, -1\r\n"
      "allgather,0,1048576,collnet_direct,simple,8,-1,-1,4\n"
      "reducescatter,0,1048576,nvls_tree,simple,-1,-1,-1,-1,1\n";
  std::vector<Rule> rules;
  ASSERT_EQ(parseCsvRules(csv, "nccl_tuner.conf", rules), "");
  ASSERT_EQ(rules.size(), 4u);
  EXPECT_EQ(rules[0].where, "nccl_tuner.conf:2");
  EXPECT_EQ(rules[0].collMask, 1u << 4);
  EXPECT_EQ(rules[0].bytes.max, 65536u);
  EXPECT_EQ(rules[0].algo, 0);
  EXPECT_EQ(rules[0].proto, 0);
  EXPECT_EQ(rules[0].channels, 0) << "-1: keep";
  EXPECT_EQ(rules[0].nodes.min, 2u);
  EXPECT_EQ(rules[0].nodes.max, 2u);
  EXPECT_EQ(rules[0].ranks.min, 16u);
  EXPECT_EQ(rules[1].where, "nccl_tuner.conf:4");
  EXPECT_EQ(rules[1].ranks.max, UINT64_MAX) << "-1: any";
  EXPECT_EQ(rules[1].proto, 1);
  EXPECT_EQ(rules[2].algo, 2);
  EXPECT_EQ(rules[2].channels, 8);
  EXPECT_EQ(rules[2].pipeOps.min, 4u);
  EXPECT_EQ(rules[3].algo, 5);
  EXPECT_EQ(rules[3].regBuff, 1);
  EXPECT_EQ(rules[3].pipeOps.max, UINT64_MAX);
}

TEST(TunerYamlCsv, UnknownValuesAreErrorsNotSilentDefaults) {
  std::vector<Rule> rules;
  EXPECT_EQ(parseCsvRules("allreduce,0,64,treee,ll,-1,-1,-1\n", "t.conf", rules),
            "t.conf:1: algorithm \"treee\": expected one of Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, "
            "PAT");
  EXPECT_NE(parseCsvRules("allreduce,0,64,tree,ll,-1\n", "t.conf", rules).find("t.conf:1: 6 fields"),
            std::string::npos);
  EXPECT_NE(parseCsvRules("#x\nallreduce,100,64,tree,ll,-1,-1,-1\n", "t.conf", rules).find("t.conf:2: min_bytes"),
            std::string::npos);
  EXPECT_NE(parseCsvRules("allreduce,0,64,tree,ll,0,-1,-1\n", "t.conf", rules).find("channels \"0\""),
            std::string::npos);
  EXPECT_NE(parseCsvRules("bcast,0,64,tree,ll,-1,-1,-1\n", "t.conf", rules).find("collective_type"),
            std::string::npos);
  EXPECT_TRUE(rules.empty()) << "outputs only on success";
}

TEST(TunerYamlRules, ApplyZeroesTheCheapestAllowedCellAndNeverAnIgnoredOne) {
  float t[21];
  for (float& x : t) x = -1.0f;
  t[0] = 9.0f;  // Tree/LL
  t[2] = 5.0f;  // Tree/Simple
  t[3] = 7.0f;  // Ring/LL
  int ch = 0;
  Rule tree;
  tree.algo = 0;
  EXPECT_TRUE(applyRule(tree, t, &ch));
  EXPECT_EQ(t[2], 0.0f) << "Tree's cheapest protocol";
  EXPECT_EQ(t[0], 9.0f);
  Rule ll;
  ll.proto = 0;
  ll.channels = 3;
  t[2] = 5.0f;
  EXPECT_TRUE(applyRule(ll, t, &ch));
  EXPECT_EQ(t[3], 0.0f) << "LL's cheapest algorithm";
  EXPECT_EQ(ch, 3);
  Rule nvls;
  nvls.algo = 4;
  nvls.proto = 2;
  EXPECT_FALSE(applyRule(nvls, t, &ch));
  EXPECT_EQ(t[14], -1.0f);
}

TEST(TunerYamlPolicy, WeftsPolicyLoaderChecksTunerRules) {
  auto ok = config::parseYamlPolicy("NCCL_ALGO: Ring\nTUNER_RULES:\n  - {coll: allreduce, algo: tree}\n", "p.yaml");
  EXPECT_TRUE(ok.isOk()) << ok.status().toString();
  auto bad = config::parseYamlPolicy("NCCL_ALGO: Ring\nTUNER_RULES:\n  - {coll: allreduce, proto: LL256}\n", "p.yaml");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("p.yaml:3: proto: bad value \"LL256\""), std::string::npos)
      << bad.status().message();
}

// The built plugin, loaded by weft's tuner loader.
class TunerYamlPlugin : public test::PluginLogTest {
 protected:
  std::string writeRules(const std::string& text) {
    std::string path = ::testing::TempDir() + "/weft-tuner-rules-" + std::to_string(getpid()) + ".yaml";
    std::ofstream(path) << text;
    files_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const std::string& f : files_) std::remove(f.c_str());
    PluginLogTest::TearDown();
  }
  Result<std::unique_ptr<plugin::TunerInstance>> init(size_t nRanks, size_t nNodes) {
    plugin::TunerLoad l =
        plugin::loadTunerPlugin(std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-tuner-weft.so", "environment", {});
    EXPECT_TRUE(l.tuner) << l.failure.toString();
    if (!l.tuner) return internalError("not loaded");
    EXPECT_EQ(l.tuner->abiVersion(), 5);
    plugin::TunerInitArgs a;
    a.nRanks = nRanks;
    a.nNodes = nNodes;
    a.constants = &constants_;
    return plugin::initTuner(l.tuner, a);
  }
  std::vector<std::string> files_;
  weft_tuner_constants_v5_t constants_{};
};

TEST_F(TunerYamlPlugin, FiresTheFirstMatchingRuleAndLogsItsLine) {
  std::string path = writeRules(
      "TUNER_RULES:\n"
      "  - {coll: allreduce, size: 0-64K, nodes: 2-, algo: tree, proto: ll, channels: 2}\n"
      "  - {coll: allreduce, algo: ring}\n");
  test::ScopedEnv env("WEFT_TUNER_RULES_FILE", path.c_str());
  test::ScopedEnv arch("WEFT_TUNER_GPU_ARCH", "90");
  auto t = init(16, 2);
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  float c[21];
  for (float& x : c) x = -1.0f;
  for (int i = 0; i < 6; ++i) c[i] = 20.0f;
  int ch = 0;
  ASSERT_TRUE((*t)->getCollInfo({.func = 4, .bytes = 4096}, c, &ch).isOk());
  EXPECT_EQ(c[0], 0.0f);
  EXPECT_EQ(ch, 2);
  EXPECT_EQ(linesWith("TUNER/weft: AllReduce 4096 bytes: rule " + path + ":2 -> algo Tree proto LL channels 2").size(),
            1u);
  for (int i = 0; i < 6; ++i) c[i] = 20.0f;
  c[5] = 10.0f;
  ASSERT_TRUE((*t)->getCollInfo({.func = 4, .bytes = 1 << 20}, c, &ch).isOk());
  EXPECT_EQ(c[5], 0.0f) << "Ring's cheapest protocol";
  EXPECT_EQ(c[3], 20.0f);
  EXPECT_EQ(linesWith("rule " + path + ":3").size(), 1u);
  EXPECT_EQ(linesWith("TUNER/weft: 2 rules from " + path).size(), 1u);
}

TEST_F(TunerYamlPlugin, AnOfflineRecorderSeesWhichRuleFired) {
  // How `weft tune --explain` learns the rule: the plugin logs through weft's logger, whose
  // per-thread recorder keeps TUNING lines whatever NCCL_DEBUG says.
  std::string path = writeRules("TUNER_RULES:\n  - {coll: broadcast, proto: simple}\n");
  test::ScopedEnv env("WEFT_TUNER_RULES_FILE", path.c_str());
  auto t = init(8, 1);
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  log::Logger& logger = log::processLogger();
  log::Options quiet = logger.options();
  log::Options saved = quiet;
  quiet.level = log::Level::kNone;
  logger.setOptions(quiet);
  std::vector<std::string> lines;
  float c[21];
  for (float& x : c) x = 5.0f;
  int ch = 0;
  {
    log::ScopedRecorder recorder(&lines, log::kTuning);
    ASSERT_TRUE((*t)->getCollInfo({.func = 0, .bytes = 100}, c, &ch).isOk());
  }
  logger.setOptions(saved);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "TUNER/weft: Broadcast 100 bytes: rule " + path + ":2 -> algo - proto Simple channels 0");
}

TEST_F(TunerYamlPlugin, RulesFileFromThePolicyReachesThePlugin) {
  // WEFT_TUNER_RULES_FILE set in the YAML policy (not the environment) is exported to the
  // plugin by selectTuner, as the net plugins' settings are.
  std::string path = writeRules("TUNER_RULES:\n  - {algo: tree}\n");
  ASSERT_EQ(std::getenv("WEFT_TUNER_RULES_FILE"), nullptr);
  config::Settings s;
  ASSERT_TRUE(s.set("NCCL_TUNER_PLUGIN", std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-tuner-weft.so",
                    config::Source::kEnv).isOk());
  ASSERT_TRUE(s.set("WEFT_TUNER_RULES_FILE", path, config::Source::kYaml).isOk());
  plugin::TunerInitArgs a;
  a.constants = &constants_;
  auto t = plugin::selectTuner(s, a, {});
  unsetenv("WEFT_TUNER_RULES_FILE");
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  ASSERT_TRUE(*t);
  EXPECT_EQ(linesWith("TUNER/weft: 1 rule from " + path).size(), 1u);
}

TEST_F(TunerYamlPlugin, ReadsNvidiasCsvWhenNcclTunerConfigFileIsSet) {
  std::string path = writeRules("allreduce,0,1024,ring,ll128,6,-1,-1\n");
  test::ScopedEnv env("NCCL_TUNER_CONFIG_FILE", path.c_str());
  auto t = init(8, 1);
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  float c[21];
  for (float& x : c) x = 4.0f;
  int ch = 0;
  ASSERT_TRUE((*t)->getCollInfo({.func = 4, .bytes = 1024}, c, &ch).isOk());
  EXPECT_EQ(c[WEFT_ALGO_RING * 3 + WEFT_PROTO_LL128], 0.0f);
  EXPECT_EQ(ch, 6);
  EXPECT_EQ(linesWith("rule " + path + ":1 -> algo Ring proto LL128 channels 6").size(), 1u);
}

TEST_F(TunerYamlPlugin, ItsV4AndV3TablesActLikeV5) {
  // What NCCL 2.24 … 2.27 bind: the same rules through the older tables and weft's adapters.
  std::string path = writeRules("TUNER_RULES:\n  - {coll: allgather, size: 1K-, algo: ring, channels: 3}\n");
  test::ScopedEnv env("WEFT_TUNER_RULES_FILE", path.c_str());
  for (int v : {4, 3}) {
    auto opened = plugin::SharedLibrary::open(std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-tuner-weft.so");
    ASSERT_TRUE(opened.library) << opened.error.message;
    std::string sym = "ncclTunerPlugin_v" + std::to_string(v);
    const void* table = opened.library->symbol(sym.c_str());
    ASSERT_NE(table, nullptr) << sym;
    auto loaded = std::make_shared<plugin::LoadedTuner>(opened.library, plugin::makeTunerAdapter(v, table), sym);
    plugin::TunerInitArgs a;
    a.nRanks = 4;
    a.constants = &constants_;
    auto t = plugin::initTuner(loaded, a);
    ASSERT_TRUE(t.isOk()) << t.status().toString();
    float c[21];
    for (float& x : c) x = 9.0f;
    c[WEFT_ALGO_RING * 3 + WEFT_PROTO_LL128] = 2.0f;
    int ch = 0;
    ASSERT_TRUE((*t)->getCollInfo({.func = 2, .bytes = 4096}, c, &ch).isOk()) << sym;
    EXPECT_EQ(c[WEFT_ALGO_RING * 3 + WEFT_PROTO_LL128], 0.0f) << sym;
    EXPECT_EQ(ch, 3) << sym;
    EXPECT_EQ(c[WEFT_ALGO_RING * 3 + WEFT_PROTO_LL], 9.0f) << sym;
  }
}

TEST_F(TunerYamlPlugin, BadRulesFailInitWithFileAndLine) {
  std::string path = writeRules("TUNER_RULES:\n  - {coll: allreduce, size: lots, algo: tree}\n");
  test::ScopedEnv env("WEFT_TUNER_RULES_FILE", path.c_str());
  expectWarn(path + ":2: size: bad value \"lots\"");
  auto t = init(8, 1);
  ASSERT_FALSE(t.isOk());
  EXPECT_EQ(t.status().code(), Code::kInvalidUsage);
}

TEST_F(TunerYamlPlugin, NoRulesFileChangesNothing) {
  test::ScopedEnv env("WEFT_CONFIG", "");
  test::ScopedEnv home("HOME", "/nonexistent");
  auto t = init(8, 1);
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  float c[21];
  for (float& x : c) x = 3.0f;
  int ch = 0;
  ASSERT_TRUE((*t)->getCollInfo({.func = 4, .bytes = 8}, c, &ch).isOk());
  for (float x : c) EXPECT_EQ(x, 3.0f);
  EXPECT_EQ(linesWith("TUNER/weft: no rules file").size(), 1u);
}

}  // namespace
}  // namespace weft::tuneryaml
