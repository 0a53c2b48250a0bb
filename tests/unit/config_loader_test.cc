// Loading: sources, precedence, conf-file quirks, YAML discovery, profiles, logging.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/config/loader.h"
#include "tests/support/log_capture.h"
#include "tests/unit/config_test_util.h"

namespace weft::config {
namespace {

using test::TempTree;
using LoaderTest = weft::test::WeftTest;

Settings load(const Inputs& in, const Facts& facts = {}) {
  auto p = Policy::load(in);
  EXPECT_TRUE(p.isOk()) << p.status().message();
  return p.isOk() ? p->resolve(facts) : Settings();
}

// Every combination of the six sources setting NCCL_MAX_NCHANNELS to a value that says which
// source it came from: the highest source present must win, and say where it came from.
TEST_F(LoaderTest, PrecedenceMatrixOfAllSixSources) {
  TempTree t;
  const std::string yamlPath = t.home() + "/.config/weft/weft.yaml";
  const Facts facts{.nodes = 4, .gpusPerNode = 8};
  for (int mask = 0; mask < 64; ++mask) {
    auto has = [&](int bit) { return (mask >> bit) & 1; };
    t.write("etc/nccl.conf", has(0) ? "NCCL_MAX_NCHANNELS=1\n" : "NCCL_CROSS_NIC=1\n");
    t.write("home/.nccl.conf", has(1) ? "NCCL_MAX_NCHANNELS=2\n" : "NCCL_CROSS_NIC=1\n");
    std::string yaml = has(2) ? "MAX_NCHANNELS: 3\n" : "CROSS_NIC: 1\n";
    yaml += "profiles:\n";
    yaml += std::string("  - match: {nodes: 4}\n    settings: {") + (has(3) ? "MAX_NCHANNELS: 4" : "CROSS_NIC: 0") + "}\n";
    yaml += std::string("  - match: {gpus: 8}\n    settings: {") + (has(4) ? "MAX_NCHANNELS: 5" : "CROSS_NIC: 0") + "}\n";
    t.write("home/.config/weft/weft.yaml", yaml);
    EnvMap env;
    if (has(5)) env["NCCL_MAX_NCHANNELS"] = "6";

    Settings s = load(t.inputs(env), facts);
    int top = -1;
    for (int b = 0; b < 6; ++b)
      if (has(b)) top = b;
    const std::string wheres[] = {t.etc() + "/nccl.conf:1", t.home() + "/.nccl.conf:1", yamlPath + ":1",
                                  "profile[0] " + yamlPath + ":4", "profile[1] " + yamlPath + ":6", "env"};
    EXPECT_EQ(s.integer("NCCL_MAX_NCHANNELS"), top < 0 ? -2 : top + 1) << "mask " << mask;
    const Value* w = s.winner(*findDef("NCCL_MAX_NCHANNELS"));
    if (top < 0) {
      EXPECT_EQ(w, nullptr) << "mask " << mask;
    } else {
      ASSERT_NE(w, nullptr) << "mask " << mask;
      EXPECT_EQ(w->where, wheres[top]) << "mask " << mask;
      EXPECT_EQ(s.history("NCCL_MAX_NCHANNELS").size(), static_cast<size_t>(__builtin_popcount(mask)) + 1);
    }
  }
}

TEST_F(LoaderTest, ConfFileNamedByNcclConfFileReplacesHomeButNotEtc) {
  TempTree t;
  t.write("home/.nccl.conf", "NCCL_CROSS_NIC=1\nNCCL_NVB_DISABLE=1\n");
  t.write("etc/nccl.conf", "NCCL_CROSS_NIC=0\nNCCL_PXN_DISABLE=1\n");
  std::string named = t.write("my.conf", "NCCL_ALGO=Tree\n");
  Settings s = load(t.inputs({{"NCCL_CONF_FILE", named}}));
  EXPECT_EQ(s.string("NCCL_ALGO"), "Tree");
  EXPECT_EQ(s.integer("NCCL_CROSS_NIC"), 0);      // /etc/nccl.conf is always read
  EXPECT_EQ(s.integer("NCCL_NVB_DISABLE"), 0);    // ~/.nccl.conf is not
  EXPECT_EQ(s.integer("NCCL_PXN_DISABLE"), 1);
  EXPECT_EQ(s.lookup("NCCL_CONF_FILE")->where, "env");
}

TEST_F(LoaderTest, ConfFilesReadAsNcclReadsThem) {
  TempTree t;
  t.write("home/.nccl.conf",
          "# a comment\r\n"
          "NCCL_DEBUG_FILE=/tmp/log=%h.%p\r\n"  // the value is everything after the first '='
          "   # an indented comment\n"
          "\n"
          "NCCL_CROSS_NIC=1\n"
          "NCCL_CROSS_NIC=0\n"      // setenv never overwrites: the first line wins
          "NCCL_ALGO=\n");          // empty: the default, and /etc/nccl.conf cannot set it
  t.write("etc/nccl.conf", "NCCL_ALGO=Tree\nNCCL_PROTO=Simple");  // no final newline
  Settings s = load(t.inputs());
  EXPECT_EQ(s.string("NCCL_DEBUG_FILE"), "/tmp/log=%h.%p");
  EXPECT_EQ(s.integer("NCCL_CROSS_NIC"), 1);
  EXPECT_EQ(s.winner(*findDef("NCCL_CROSS_NIC"))->where, t.home() + "/.nccl.conf:5");
  EXPECT_EQ(s.string("NCCL_ALGO"), "");
  EXPECT_FALSE(s.isSet("NCCL_ALGO"));
  EXPECT_EQ(s.string("NCCL_PROTO"), "Simple");
}

TEST_F(LoaderTest, EmptyEnvironmentVariableMeansDefault) {
  TempTree t;
  t.write("etc/nccl.conf", "NCCL_CROSS_NIC=1\n");
  Settings s = load(t.inputs({{"NCCL_CROSS_NIC", ""}}));
  EXPECT_EQ(s.integer("NCCL_CROSS_NIC"), 2);
  EXPECT_EQ(s.winner(*findDef("NCCL_CROSS_NIC"))->where, "env");
}

TEST_F(LoaderTest, OldNameInEnvironmentLosesToNewNameInAFile) {
  TempTree t;
  t.write("etc/nccl.conf", "NCCL_MIN_NCHANNELS=4\n");
  Settings s = load(t.inputs({{"NCCL_MIN_NRINGS", "8"}}));
  EXPECT_EQ(s.integer("NCCL_MIN_NCHANNELS"), 4);
  Settings alone = load(TempTree().inputs({{"NCCL_MIN_NRINGS", "8"}}));
  EXPECT_EQ(alone.integer("NCCL_MIN_NCHANNELS"), 8);
}

TEST_F(LoaderTest, YamlDiscoveryOrder) {
  TempTree t;
  t.write("etc/weft.yaml", "ALGO: Ring\n");
  EXPECT_EQ(load(t.inputs()).string("NCCL_ALGO"), "Ring");
  t.write("home/.config/weft/weft.yaml", "ALGO: Tree\n");
  EXPECT_EQ(load(t.inputs()).string("NCCL_ALGO"), "Tree");  // only the first found is read
  std::string named = t.write("named.yaml", "ALGO: NVLS\n");
  EXPECT_EQ(load(t.inputs({{"WEFT_CONFIG", named}})).string("NCCL_ALGO"), "NVLS");
  Inputs explicitFile = t.inputs({{"WEFT_CONFIG", named}});
  explicitFile.yamlPath = t.write("explicit.yaml", "ALGO: PAT\n");
  EXPECT_EQ(load(explicitFile).string("NCCL_ALGO"), "PAT");
  auto p = Policy::load(explicitFile);
  ASSERT_TRUE(p.isOk());
  ASSERT_FALSE(p->files().empty());
  EXPECT_EQ(p->files()[0].path, explicitFile.yamlPath);
  EXPECT_EQ(p->files()[0].role, "YAML policy from --yaml");
}

TEST_F(LoaderTest, NoFilesAtAllIsFine) {
  Inputs in;
  in.etcDir.clear();
  auto p = Policy::load(in);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_TRUE(p->files().empty());
  EXPECT_EQ(p->resolve({}).integer("NCCL_CROSS_NIC"), 2);
}

TEST_F(LoaderTest, MissingNamedConfFileWarnsAsNcclIgnoresIt) {
  TempTree t;
  expectWarn("NCCL_CONF_FILE " + t.path("nope.conf") + " cannot be read (no such file)");
  Settings s = load(t.inputs({{"NCCL_CONF_FILE", t.path("nope.conf")}}));
  EXPECT_EQ(s.integer("NCCL_CROSS_NIC"), 2);
}

constexpr const char* kProfiles = R"(ALGO: Ring
profiles:
  - match: {host: "gpu*", nodes: 2-8}
    settings: {MAX_NCHANNELS: 16}
  - match: {arch: sm90+, gpus: [4, 8]}
    settings: {PROTO: Simple}
  - match: {net: ib}
    settings: {NET_FALLBACK: deny}
  - match: {nodes: 16+}
    settings: {MAX_NCHANNELS: 32}
)";

TEST_F(LoaderTest, ProfilesApplyWhenEveryConditionHolds) {
  TempTree t;
  t.write("etc/weft.yaml", kProfiles);
  Settings s = load(t.inputs(), {.host = "gpu17", .nodes = 4, .gpusPerNode = 8, .smArch = 90, .netPlugin = "IB"});
  EXPECT_EQ(s.integer("NCCL_MAX_NCHANNELS"), 16);
  EXPECT_EQ(s.string("NCCL_PROTO"), "Simple");
  EXPECT_EQ(s.netFallback(), NetFallback::kDeny);  // plugin names compare case-insensitively
  EXPECT_EQ(s.string("NCCL_ALGO"), "Ring");
  EXPECT_EQ(s.winner(*findDef("NCCL_PROTO"))->where, "profile[1] " + t.etc() + "/weft.yaml:6");
}

TEST_F(LoaderTest, ProfilesDoNotApplyWhenAConditionFailsOrAFactIsUnknown) {
  TempTree t;
  t.write("etc/weft.yaml", kProfiles);
  Settings other = load(t.inputs(), {.host = "login1", .nodes = 4, .gpusPerNode = 2, .smArch = 80, .netPlugin = "Socket"});
  EXPECT_EQ(other.integer("NCCL_MAX_NCHANNELS"), -2);
  EXPECT_FALSE(other.isSet("NCCL_PROTO"));
  EXPECT_EQ(other.netFallback(), NetFallback::kAllow);
  // Nothing known: only the top-level keys apply.
  Settings unknown = load(t.inputs(), {});
  EXPECT_EQ(unknown.integer("NCCL_MAX_NCHANNELS"), -2);
  EXPECT_EQ(unknown.string("NCCL_ALGO"), "Ring");
  // Host known but node count not: profile[0] needs both.
  EXPECT_EQ(load(t.inputs(), {.host = "gpu1"}).integer("NCCL_MAX_NCHANNELS"), -2);
  EXPECT_EQ(load(t.inputs(), {.nodes = 64}).integer("NCCL_MAX_NCHANNELS"), 32);
}

TEST_F(LoaderTest, MatchSaysWhyItDoesNotHold) {
  Match m;
  m.hosts = {"gpu*"};
  m.nodes = {{2, 8}};
  EXPECT_EQ(m.whyNot({}), "host is unknown (match wants gpu*)");
  EXPECT_EQ(m.whyNot({.host = "login"}), "host is login, not gpu*");
  EXPECT_EQ(m.whyNot({.host = "gpu3", .nodes = 9}), "nodes is 9, not 2-8");
  EXPECT_EQ(m.whyNot({.host = "gpu3", .nodes = 8}), "");
  EXPECT_EQ(m.describe(), "host=gpu*, nodes=2-8");
  // holds() is whyNot() without the words.
  m.arch = {{90, INT64_MAX}};
  m.nets = {"IB"};
  const Facts cases[] = {{}, {.host = "login"}, {.host = "gpu3", .nodes = 9}, {.host = "gpu3", .nodes = 8},
                         {.host = "gpu3", .nodes = 8, .smArch = 90}, {.host = "gpu3", .nodes = 8, .smArch = 80, .netPlugin = "ib"},
                         {.host = "gpu3", .nodes = 8, .smArch = 100, .netPlugin = "ib"},
                         {.host = "gpu3", .nodes = 8, .smArch = 100, .netPlugin = "Socket"}};
  for (const Facts& f : cases) EXPECT_EQ(m.holds(f), m.whyNot(f).empty()) << f.describe();
  EXPECT_TRUE(m.holds({.host = "gpu3", .nodes = 8, .smArch = 100, .netPlugin = "ib"}));
}

TEST_F(LoaderTest, ArchAcceptsSmNamesAndComputeCapabilities) {
  EXPECT_EQ(*parseArch("sm90"), 90);
  EXPECT_EQ(*parseArch("SM80"), 80);
  EXPECT_EQ(*parseArch("9.0"), 90);
  EXPECT_EQ(*parseArch("100"), 100);
  EXPECT_EQ(parseArch("hopper").status().message(), "bad GPU architecture \"hopper\" (expected smXX, as in sm90)");
}

TEST_F(LoaderTest, YamlListsAndBooleansWhereObvious) {
  TempTree t;
  t.write("etc/weft.yaml",
          "NET_PLUGIN: [ofi, socket]\n"
          "SOCKET_IFNAME: [\"^docker\", lo]\n"
          "NVB_DISABLE: true\n"
          "PXN_DISABLE: off\n"
          "HOSTID: \"yes\"\n"      // quoted: text, not a boolean
          "MAX_NCHANNELS: 0x10\n");
  Settings s = load(t.inputs());
  EXPECT_EQ(s.string("NCCL_NET_PLUGIN"), "ofi,socket");
  EXPECT_EQ(s.string("NCCL_SOCKET_IFNAME"), "^docker,lo");
  EXPECT_EQ(s.integer("NCCL_NVB_DISABLE"), 1);
  EXPECT_EQ(s.integer("NCCL_PXN_DISABLE"), 0);
  EXPECT_EQ(s.string("NCCL_HOSTID"), "yes");
  EXPECT_EQ(s.integer("NCCL_MAX_NCHANNELS"), 16);
}

TEST_F(LoaderTest, FixturePoliciesLoadWithTheirValues) {
  // The fixtures double as fuzzing seeds; each must load as written.
  for (const char* name : {"flat.yaml", "profiles.yaml", "lists.yaml", "quirks.yaml"}) {
    Inputs in;
    in.etcDir.clear();
    in.yamlPath = std::string(WEFT_TEST_DATA_DIR) + "/config/" + name;
    auto p = Policy::load(in);
    ASSERT_TRUE(p.isOk()) << name << ": " << p.status().message();
    EXPECT_FALSE(p->yaml()->base.empty()) << name;
  }
  Inputs quirks;
  quirks.etcDir.clear();
  quirks.yamlPath = WEFT_TEST_DATA_DIR "/config/quirks.yaml";
  Settings s = load(quirks);
  EXPECT_EQ(s.integer("NCCL_MAX_NCHANNELS"), 8);  // 010 is octal
  EXPECT_EQ(s.integer("NCCL_MIN_NCHANNELS"), 2);
  EXPECT_EQ(s.pathLevel("NCCL_P2P_LEVEL"), 9);  // old level 5 = SYS
  EXPECT_TRUE(s.algorithms().empty());
  EXPECT_EQ(s.netDevsPolicy().kind, NetDevsPolicy::Kind::kAll);
  Inputs profiles;
  profiles.etcDir.clear();
  profiles.yamlPath = WEFT_TEST_DATA_DIR "/config/profiles.yaml";
  Settings p = load(profiles, {.host = "gpu-b3", .nodes = 64, .gpusPerNode = 8, .smArch = 75, .netPlugin = "aws libfabric"});
  EXPECT_EQ(p.string("NCCL_IB_HCA"), "mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(p.integer("NCCL_MAX_NCHANNELS"), 16);
  EXPECT_EQ(p.integer("NCCL_NET_GDR_READ"), 0);
  EXPECT_EQ(p.integer("NCCL_NVLS_ENABLE"), 2);  // sm75 is neither sm80 nor sm90+
  EXPECT_EQ(p.integer("NCCL_NET_DISABLE_INTRA"), 0);
}

TEST_F(LoaderTest, YamlAnchorsAndAliasesAreExpanded) {
  TempTree t;
  t.write("etc/weft.yaml",
          "NET: &ib IB\n"
          "NET_PLUGIN: [*ib, socket]\n"
          "profiles:\n"
          "  - match: {nodes: 2}\n"
          "    settings: &big {MAX_NCHANNELS: 24}\n"
          "  - match: {nodes: 4}\n"
          "    settings: *big\n");
  Settings s = load(t.inputs(), {.nodes = 4});
  EXPECT_EQ(s.string("NCCL_NET_PLUGIN"), "IB,socket");
  EXPECT_EQ(s.integer("NCCL_MAX_NCHANNELS"), 24);
}

TEST_F(LoaderTest, UnknownNcclVariablesAreOneWarnLine) {
  TempTree t;
  t.write("etc/nccl.conf", "NCCL_LL128_BUFFSIZE=4194304\n");
  weft::test::LogCapture capture(log::Level::kWarn);
  auto p = Policy::load(t.inputs({{"NCCL_MAX_NCHANELS", "4"}, {"NCCL_IB_QPS_PER_CONNECTION", "2"},
                                  {"WEFT_CORPUS_DIR", "/x"}, {"WEFT_NET_FALLBAK", "deny"}}));
  ASSERT_TRUE(p.isOk()) << p.status().message();
  std::vector<std::string> warns = capture.warnings();
  ASSERT_EQ(warns.size(), 1u);
  EXPECT_NE(warns[0].find("Ignoring settings weft does not read: NCCL_IB_QPS_PER_CONNECTION (env), "
                          "NCCL_MAX_NCHANELS (env; did you mean NCCL_MAX_NCHANNELS?), "
                          "WEFT_NET_FALLBAK (env; did you mean WEFT_NET_FALLBACK?), "
                          "NCCL_LL128_BUFFSIZE (" + t.etc() + "/nccl.conf:1:1)"),
            std::string::npos)
      << warns[0];
  EXPECT_EQ(warns[0].find("WEFT_CORPUS_DIR"), std::string::npos);  // not a setting, not a misspelling
  EXPECT_EQ(p->unknown().size(), 4u);
}

TEST_F(LoaderTest, NoWarningWhenEverythingIsKnown) {
  weft::test::LogCapture capture(log::Level::kWarn);
  auto p = Policy::load(TempTree().inputs({{"NCCL_ALGO", "Ring"}}));
  ASSERT_TRUE(p.isOk());
  EXPECT_TRUE(capture.warnings().empty());
}

TEST_F(LoaderTest, InfoLinesForValuesThatDifferFromDefaults) {
  TempTree t;
  std::string yaml = t.write("etc/weft.yaml", "ALGO: Ring\nCROSS_NIC: 2\n");
  weft::test::LogCapture capture(log::Level::kInfo, log::kEnv);
  auto s = loadSettings(t.inputs({{"NCCL_NET_GDR_LEVEL", "PHB"}, {"NCCL_MAX_NRINGS", "4"}}), {});
  ASSERT_TRUE(s.isOk()) << s.status().message();
  std::vector<std::string> lines = capture.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("NCCL INFO NCCL_MAX_NRINGS set by environment to 4."), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("NCCL INFO NCCL_NET_GDR_LEVEL set by environment to PHB."), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("NCCL INFO NCCL_ALGO set by " + yaml + ":1 to Ring."), std::string::npos) << lines[2];
}

TEST_F(LoaderTest, LogOptionsFollowTheSettings) {
  Settings s;
  ASSERT_TRUE(s.set("NCCL_DEBUG", "info").isOk());
  ASSERT_TRUE(s.set("NCCL_DEBUG_SUBSYS", "GRAPH,NET").isOk());
  log::Options o = logOptions(s);
  EXPECT_EQ(o.level, log::Level::kInfo);
  EXPECT_EQ(o.mask, log::kGraph | log::kNet);
  EXPECT_EQ(logOptions(Settings()).mask, log::kInit | log::kBootstrap | log::kEnv);
}

TEST_F(LoaderTest, EnvironmentFromAnEnvironArrayKeepsOnlyOurVariables) {
  const char* envp[] = {"NCCL_ALGO=Ring", "PATH=/bin", "WEFT_CONFIG=/x.yaml", "NCCL_DEBUG_FILE=/a=b", "BROKEN", nullptr};
  EnvMap env = environmentFrom(envp);
  EXPECT_EQ(env, (EnvMap{{"NCCL_ALGO", "Ring"}, {"NCCL_DEBUG_FILE", "/a=b"}, {"WEFT_CONFIG", "/x.yaml"}}));
}

}  // namespace
}  // namespace weft::config
