// Tuner plugin loading, the v2 … v5 adapters, and what weft does with a tuner that fails or
// lies (docs/tuner.md). The plugins are tests/plugins/fake_tuner.c builds.
#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <string>

#include "core/plugin/tuner_loader.h"
#include "tests/unit/plugin_test_support.h"

extern "C" {
// fake_tuner.c's record of what the host passed.
struct FakeTunerState {
  int initCalls, getCalls, finalizeCalls;
  size_t nRanks, nNodes;
  uint64_t commId;
  int sawConstants, nvlDomains, sawLogger;
  int lastColl, lastPipeOps, lastRegBuff, lastNumAlgo, lastNumProto;
  size_t lastBytes;
  int lastCollNetSupport, lastNvlsSupport;
  void* lastCtx;
};
}

namespace weft::plugin {
namespace {

using test::fakePlugin;
constexpr int kCells = WEFT_TUNER_NUM_ALGORITHMS * WEFT_TUNER_NUM_PROTOCOLS;
constexpr int kRingSimple = WEFT_ALGO_RING * 3 + WEFT_PROTO_SIMPLE;
constexpr int kTreeLL = WEFT_ALGO_TREE * 3 + WEFT_PROTO_LL;
constexpr int kNvlsSimple = WEFT_ALGO_NVLS * 3 + WEFT_PROTO_SIMPLE;
constexpr int kChainSimple = WEFT_ALGO_COLLNET_CHAIN * 3 + WEFT_PROTO_SIMPLE;

std::string fakeTuner(const std::string& name) { return fakePlugin("libnccl-tuner-" + name + ".so"); }

// A library's fake state (the same handle the loader holds: dlopen returns it again).
class FakeState {
 public:
  explicit FakeState(const std::string& name) : handle_(dlopen(fakeTuner(name).c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ != nullptr) state_ = static_cast<FakeTunerState*>(dlsym(handle_, "fakeTunerState"));
    if (state_ != nullptr) std::memset(state_, 0, sizeof(*state_));
  }
  ~FakeState() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  FakeState(const FakeState&) = delete;
  FakeState& operator=(const FakeState&) = delete;
  FakeTunerState* operator->() const { return state_; }
  bool ok() const { return state_ != nullptr; }

 private:
  void* handle_;
  FakeTunerState* state_ = nullptr;
};

// A model-like table: Tree and Ring usable, CollNet and NVLS disabled, PAT usable on Simple.
struct Table {
  float c[kCells];
  Table() {
    for (float& x : c) x = -1.0f;
    for (int i = 0; i < 6; ++i) c[i] = 10.0f + static_cast<float>(i);
    c[WEFT_ALGO_PAT * 3 + WEFT_PROTO_SIMPLE] = 30.0f;
  }
};

class TunerTest : public test::PluginLogTest {
 protected:
  TunerLoaderOptions options() const {
    TunerLoaderOptions o;
    o.pluginDirs = {WEFT_TEST_PLUGIN_DIR};
    return o;
  }
  TunerInitArgs args() {
    TunerInitArgs a;
    a.commId = 0x1234;
    a.nRanks = 16;
    a.nNodes = 2;
    a.nvlDomain = {2, 8, 8};
    a.constants = &constants_;
    a.maxChannels = 32;
    return a;
  }
  std::unique_ptr<TunerInstance> instance(const std::string& name) {
    TunerLoad l = loadTunerPlugin(fakeTuner(name), "environment", options());
    EXPECT_TRUE(l.tuner) << l.failure.toString();
    if (!l.tuner) return nullptr;
    auto i = initTuner(l.tuner, args());
    EXPECT_TRUE(i.isOk()) << i.status().toString();
    return i.isOk() ? std::move(*i) : nullptr;
  }
  config::Settings settings(const std::string& plugin, const std::string& fallback = "") {
    config::Settings s;
    if (!plugin.empty()) { EXPECT_TRUE(s.set("NCCL_TUNER_PLUGIN", plugin, config::Source::kEnv).isOk()); }
    if (!fallback.empty()) { EXPECT_TRUE(s.set("WEFT_TUNER_FALLBACK", fallback).isOk()); }
    return s;
  }
  weft_tuner_constants_v5_t constants_{};
};

TEST(TunerCandidateFiles, FollowNcclThenWeftFolders) {
  std::vector<std::string> dirs = {"/opt/weft/lib"};
  EXPECT_EQ(tunerCandidateFiles("", dirs), std::vector<std::string>{"libnccl-tuner.so"});
  EXPECT_EQ(tunerCandidateFiles("/x/libfoo.so", dirs), std::vector<std::string>{"/x/libfoo.so"});
  EXPECT_EQ(tunerCandidateFiles("libnccl-tuner-ofi.so", dirs), std::vector<std::string>{"libnccl-tuner-ofi.so"});
  EXPECT_EQ(tunerCandidateFiles("weft", dirs),
            (std::vector<std::string>{"weft", "libnccl-tuner-weft.so", "/opt/weft/lib/libnccl-tuner-weft.so"}));
  // "lib" without ".so" is still a bare name for NCCL.
  EXPECT_EQ(tunerCandidateFiles("libx", dirs).size(), 3u);
}

TEST_F(TunerTest, EachVersionLoadsWithNcclsInfoLines) {
  for (int v = 2; v <= 5; ++v) {
    std::string name = "fakev" + std::to_string(v);
    TunerLoad l = loadTunerPlugin(name, "environment", options());
    ASSERT_TRUE(l.tuner) << name << ": " << l.failure.toString();
    EXPECT_EQ(l.tuner->abiVersion(), v);
    EXPECT_EQ(l.tuner->symbol(), "ncclTunerPlugin_v" + std::to_string(v));
    EXPECT_STREQ(l.tuner->name(), name.c_str());
    EXPECT_EQ(linesWith("TUNER/Plugin: Using " + name + " (v" + std::to_string(v) + ")").size(), 1u);
    EXPECT_EQ(linesWith("Successfully loaded external tuner plugin " + l.tuner->path()).size(), 1u);
  }
  EXPECT_EQ(linesWith("NCCL_TUNER_PLUGIN set by environment to fakev5").size(), 1u);
}

TEST_F(TunerTest, NoneDisablesAndUnsetFindsNothingHere) {
  TunerLoad none = loadTunerPlugin("NONE", "environment", options());
  EXPECT_FALSE(none.tuner);
  EXPECT_TRUE(none.failure.isOk());
  TunerLoad unset = loadTunerPlugin("", "", options());
  EXPECT_FALSE(unset.tuner);
  EXPECT_TRUE(unset.failure.isOk());  // the implicit libnccl-tuner.so is not a failure
  EXPECT_EQ(linesWith("TUNER/Plugin: Could not find: libnccl-tuner.so").size(), 1u);
}

TEST_F(TunerTest, MissingRequestedTunerListsWhatWasTried) {
  TunerLoad l = loadTunerPlugin("nosuch", "environment", options());
  EXPECT_FALSE(l.tuner);
  EXPECT_EQ(l.failure.code(), Code::kInvalidArgument);
  EXPECT_NE(l.failure.message().find("libnccl-tuner-nosuch.so"), std::string::npos) << l.failure.message();
}

TEST_F(TunerTest, LibraryWithoutKnownSymbolIsUnsupported) {
  TunerLoad l = loadTunerPlugin("onlyv1", "environment", options());
  EXPECT_FALSE(l.tuner);
  EXPECT_NE(l.failure.message().find("it exports ncclTunerPlugin_v1"), std::string::npos) << l.failure.message();
  EXPECT_EQ(linesWith("External tuner plugin").size(), 1u);
}

TEST_F(TunerTest, FallsBackToTheNetPluginsLibrary) {
  TunerLoaderOptions o = options();
  o.netLibraryPath = fakeTuner("fakev3");  // a "net plugin" that also carries a tuner
  TunerLoad l = loadTunerPlugin("", "", o);
  ASSERT_TRUE(l.tuner) << l.failure.toString();
  EXPECT_EQ(l.tuner->abiVersion(), 3);
  EXPECT_EQ(linesWith("in the net plugin's library").size(), 1u);
  // A net library without a tuner is the normal case: no tuner, no failure.
  o.netLibraryPath = fakePlugin("libnccl-net-fakev11.so");
  TunerLoad none = loadTunerPlugin("", "", o);
  EXPECT_FALSE(none.tuner);
  EXPECT_TRUE(none.failure.isOk());
}

TEST_F(TunerTest, StaticPluginPrefixOpensTheProgram) {
  // NCCL compares only the given length with "STATIC_PLUGIN": "static" opens the program,
  // which exports no tuner here.
  TunerLoad l = loadTunerPlugin("static", "environment", options());
  EXPECT_FALSE(l.tuner);
  EXPECT_NE(l.failure.message().find("STATIC_PLUGIN: no ncclTunerPlugin_v5"), std::string::npos) << l.failure.message();
}

TEST_F(TunerTest, V5GetsEveryInitArgumentAndMayRewriteConstants) {
  FakeState st("fakev5");
  ASSERT_TRUE(st.ok());
  auto t = instance("fakev5");
  ASSERT_TRUE(t);
  EXPECT_EQ(st->initCalls, 1);
  EXPECT_EQ(st->commId, 0x1234u);
  EXPECT_EQ(st->nRanks, 16u);
  EXPECT_EQ(st->nNodes, 2u);
  EXPECT_EQ(st->nvlDomains, 2);
  EXPECT_EQ(st->sawConstants, 1);
  EXPECT_EQ(st->sawLogger, 1);
  EXPECT_EQ(constants_.baseLatencies[WEFT_ALGO_RING][WEFT_PROTO_LL], 42.0);
  EXPECT_EQ(linesWith("fake tuner v5 init").size(), 1u);  // through weft's logger
  t.reset();
  EXPECT_EQ(st->finalizeCalls, 1);
}

TEST_F(TunerTest, OlderVersionsNeverSeeTheConstants) {
  for (int v = 2; v <= 4; ++v) {
    std::string name = "fakev" + std::to_string(v);
    FakeState st(name);
    ASSERT_TRUE(st.ok()) << name;
    auto t = instance(name);
    ASSERT_TRUE(t);
    EXPECT_EQ(st->nRanks, 16u) << name;
    EXPECT_EQ(st->nNodes, 2u) << name;
    EXPECT_EQ(st->commId, 0u) << name;
    t.reset();
    EXPECT_EQ(st->finalizeCalls, 1) << name << ": destroy on finalize";
  }
  EXPECT_EQ(constants_.baseLatencies[WEFT_ALGO_RING][WEFT_PROTO_LL], 0.0);
}

TEST_F(TunerTest, TableVersionsSeeTheQueryAndSteerTheTable) {
  for (int v = 3; v <= 5; ++v) {
    std::string name = "fakev" + std::to_string(v);
    FakeState st(name);
    auto t = instance(name);
    ASSERT_TRUE(t);
    Table tb;
    int ch = 0;
    ASSERT_TRUE(t->getCollInfo({.func = 4, .bytes = 1 << 20, .numPipeOps = 3, .regBuff = 1}, tb.c, &ch).isOk());
    EXPECT_EQ(tb.c[kRingSimple], 0.0f) << name;
    EXPECT_EQ(tb.c[kTreeLL], 10.0f) << name;
    EXPECT_EQ(ch, 4) << name;
    EXPECT_EQ(st->lastColl, 4);
    EXPECT_EQ(st->lastBytes, 1u << 20);
    EXPECT_EQ(st->lastPipeOps, 3);
    EXPECT_EQ(st->lastNumAlgo, 7);
    EXPECT_EQ(st->lastNumProto, 3);
    EXPECT_EQ(st->lastRegBuff, v >= 4 ? 1 : -1) << name << ": v3 has no regBuff";
    EXPECT_NE(st->lastCtx, nullptr) << name << ": init's context comes back";
  }
}

TEST_F(TunerTest, V2AnswerBecomesAZeroCellAndSupportComesFromTheTable) {
  FakeState st("fakev2");
  auto t = instance("fakev2");
  ASSERT_TRUE(t);
  Table tb;
  int ch = 0;
  ASSERT_TRUE(t->getCollInfo({.func = 2, .bytes = 4096}, tb.c, &ch).isOk());
  EXPECT_EQ(tb.c[kRingSimple], 0.0f);
  EXPECT_EQ(ch, 4);
  EXPECT_EQ(st->lastNvlsSupport, 0);
  EXPECT_EQ(st->lastCollNetSupport, 0);
  Table withNvls;
  withNvls.c[kNvlsSimple] = 5.0f;
  withNvls.c[kChainSimple] = 6.0f;
  ASSERT_TRUE(t->getCollInfo({.func = 4, .bytes = 4096}, withNvls.c, &ch).isOk());
  EXPECT_EQ(st->lastNvlsSupport, 1);
  EXPECT_EQ(st->lastCollNetSupport, 1);
  // A v2 answer on an IGNORE cell changes nothing (NCCL's adapter checks it).
  Table ringOff;
  ringOff.c[kRingSimple] = -1.0f;
  ASSERT_TRUE(t->getCollInfo({.func = 4, .bytes = 4096}, ringOff.c, &ch).isOk());
  EXPECT_EQ(ringOff.c[kRingSimple], -1.0f);
}

TEST_F(TunerTest, V2OutOfRangeOrHalfAnswersAreIgnored) {
  for (const char* name : {"badalgov2", "halfchoicev2"}) {
    auto t = instance(name);
    ASSERT_TRUE(t);
    Table tb;
    const Table orig;
    int ch = 0;
    ASSERT_TRUE(t->getCollInfo({.func = 4, .bytes = 4096}, tb.c, &ch).isOk()) << name;
    EXPECT_EQ(std::memcmp(tb.c, orig.c, sizeof(tb.c)), 0) << name;
    EXPECT_EQ(ch, 0);
  }
}

TEST_F(TunerTest, GetCollInfoErrorFailsTheOperationAndKeepsTheTable) {
  expectWarn("the operation fails, as in NCCL");
  for (const char* name : {"getfails", "getfailsv2"}) {
    auto t = instance(name);
    ASSERT_TRUE(t);
    Table tb;
    const Table orig;
    int ch = 7;
    Status s = t->getCollInfo({.func = 4, .bytes = 64}, tb.c, &ch);
    EXPECT_EQ(s.code(), Code::kInternalError) << name;
    EXPECT_NE(s.message().find("getCollInfo returned"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("AllReduce of 64 bytes"), std::string::npos) << s.message();
    EXPECT_EQ(std::memcmp(tb.c, orig.c, sizeof(tb.c)), 0);
    EXPECT_EQ(ch, 7) << "outputs untouched on failure";
  }
}

TEST_F(TunerTest, EnablingADisabledCellIsUndoneWithOneWarn) {
  expectWarn("which is disabled here; ignored");
  auto t = instance("zeroesall");
  ASSERT_TRUE(t);
  for (int call = 0; call < 3; ++call) {
    Table tb;
    tb.c[WEFT_ALGO_RING * 3 + WEFT_PROTO_LL128] = -1024.0f;  // fp8's scaled IGNORE is disabled too
    int ch = 0;
    ASSERT_TRUE(t->getCollInfo({.func = 4, .bytes = 64}, tb.c, &ch).isOk());
    for (int i = 0; i < kCells; ++i) {
      bool wasUsable = i < 6 && i != WEFT_ALGO_RING * 3 + WEFT_PROTO_LL128;
      wasUsable = wasUsable || i == WEFT_ALGO_PAT * 3 + WEFT_PROTO_SIMPLE;
      if (wasUsable) {
        EXPECT_EQ(tb.c[i], 0.0f) << i;
      } else {
        EXPECT_LT(tb.c[i], 0.0f) << i;
      }
    }
  }
  EXPECT_EQ(logs_.warnings().size(), 1u) << "one WARN per instance, not per call";
}

TEST_F(TunerTest, NanOrNegativeEverywhereFailsTheOperation) {
  expectWarn("left no usable algorithm/protocol");
  expectWarn("read as IGNORE");
  for (const char* name : {"nanall", "negall"}) {
    auto t = instance(name);
    ASSERT_TRUE(t);
    Table tb;
    int ch = 0;
    Status s = t->getCollInfo({.func = 0, .bytes = 8}, tb.c, &ch);
    EXPECT_EQ(s.code(), Code::kInternalError) << name;
    EXPECT_NE(s.message().find("no algorithm/protocol available for Broadcast of 8 bytes"), std::string::npos)
        << s.message();
    for (float c : tb.c) EXPECT_EQ(c, -1.0f) << name << ": NaN and negatives read as IGNORE";
  }
}

TEST_F(TunerTest, ChannelsOutOfRangeAreKeptOrClamped) {
  expectWarn("keeping the model's channels");
  auto neg = instance("negchannels");
  ASSERT_TRUE(neg);
  Table tb;
  int ch = 9;
  ASSERT_TRUE(neg->getCollInfo({.func = 4, .bytes = 64}, tb.c, &ch).isOk());
  EXPECT_EQ(ch, 0);
  auto many = instance("manychannels");
  ASSERT_TRUE(many);
  ASSERT_TRUE(many->getCollInfo({.func = 4, .bytes = 64}, tb.c, &ch).isOk());
  EXPECT_EQ(ch, 32) << "clamped to the communicator's channels, as NCCL's scheduler does";
  TunerInitArgs unbounded = args();
  unbounded.maxChannels = 0;
  auto many64 = initTuner(loadTunerPlugin("manychannels", "environment", options()).tuner, unbounded);
  ASSERT_TRUE(many64.isOk());
  ASSERT_TRUE((*many64)->getCollInfo({.func = 4, .bytes = 64}, tb.c, &ch).isOk());
  EXPECT_EQ(ch, 64) << "NCCL's MAXCHANNELS when the caller gives no channel count";
}

TEST_F(TunerTest, SelectAppliesTheFallbackPolicy) {
  TunerInitArgs a = args();
  // allow (default): a failing init drops the tuner with a WARN and restores the constants.
  expectWarn("using the cost model without a tuner");
  auto allowed = selectTuner(settings(fakeTuner("initfails")), a, options());
  ASSERT_TRUE(allowed.isOk()) << allowed.status().toString();
  EXPECT_FALSE(*allowed);
  EXPECT_EQ(constants_.baseLatencies[WEFT_ALGO_RING][WEFT_PROTO_LL], 0.0) << "init's partial rewrite is undone";
  auto missing = selectTuner(settings("nosuch"), a, options());
  ASSERT_TRUE(missing.isOk());
  EXPECT_FALSE(*missing);
  // deny: each is an error.
  expectWarn("WEFT_TUNER_FALLBACK=deny");
  auto denied = selectTuner(settings(fakeTuner("initfailsv2"), "deny"), a, options());
  ASSERT_FALSE(denied.isOk());
  EXPECT_NE(denied.status().message().find("init returned"), std::string::npos) << denied.status().message();
  EXPECT_FALSE(selectTuner(settings("onlyv1", "deny"), a, options()).isOk());
  EXPECT_FALSE(selectTuner(settings("nosuch", "deny"), a, options()).isOk());
  // none, and a good tuner.
  auto none = selectTuner(settings("none", "deny"), a, options());
  ASSERT_TRUE(none.isOk());
  EXPECT_FALSE(*none);
  auto good = selectTuner(settings("fakev4", "deny"), a, options());
  ASSERT_TRUE(good.isOk()) << good.status().toString();
  ASSERT_TRUE(*good);
  EXPECT_EQ((*good)->plugin().abiVersion(), 4);
}

TEST_F(TunerTest, TheLibraryClosesAfterTheLastCommunicator) {
  const std::string path = fakeTuner("negchannels");  // loaded by no other test of this process
  {
    auto t = instance("negchannels");
    ASSERT_TRUE(t);
    void* probe = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(probe, nullptr) << "loaded while a communicator uses it";
    if (probe != nullptr) dlclose(probe);
  }
  EXPECT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr) << "still loaded after finalize";
  EXPECT_EQ(linesWith("TUNER/Plugin: Closing tuner: 'negchannels'").size(), 1u);
}

TEST_F(TunerTest, OneLibraryIsSharedAcrossCommunicators) {
  TunerLoad a = loadTunerPlugin("fakev5", "environment", options());
  TunerLoad b = loadTunerPlugin(fakeTuner("fakev5"), "environment", options());
  ASSERT_TRUE(a.tuner && b.tuner);
  EXPECT_EQ(a.tuner.get(), b.tuner.get());
}

}  // namespace
}  // namespace weft::plugin
