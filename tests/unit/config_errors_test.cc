// Malformed YAML policies, conf files and environment values: each load fails with a message
// that names the file, line, column, key, value and what was expected.
#include <gtest/gtest.h>

#include "core/base/strings.h"
#include "core/config/loader.h"
#include "tests/support/log_capture.h"
#include "tests/unit/config_test_util.h"

namespace weft::config {
namespace {

using test::TempTree;

struct BadInput {
  const char* name;
  const char* file;  // "yaml" (the YAML policy), "conf" (~/.nccl.conf) or "env" (NCCL_ALGO=text)
  const char* text;
  const char* expected;  // the whole message; {F} is the file's path
};

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) s.replace(pos, from.size(), to);
  return s;
}

class BadInputTest : public weft::test::WeftTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(BadInputTest, FailsWithAPreciseMessage) {
  const BadInput& c = GetParam();
  TempTree t;
  Inputs in = t.inputs();
  std::string path;
  if (std::string(c.file) == "yaml") path = t.write("home/.config/weft/weft.yaml", c.text);
  if (std::string(c.file) == "conf") path = t.write("home/.nccl.conf", c.text);
  if (std::string(c.file) == "env") in.env["NCCL_ALGO"] = c.text;
  EXPECT_EQ(test::loadError(in), replaceAll(c.expected, "{F}", path));
}

constexpr const char* kAlgoForm =
    "[^]algo,...[;func:[^]algo,...]... with algo in Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, "
    "PAT and func in Broadcast, Reduce, AllGather, ReduceScatter, AllReduce, SendRecv";
constexpr const char* kPathForm = "a path type (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS) or an old level 0-5";
const std::string kProtoForm =
    "[^]proto,...[;func:[^]proto,...]... with proto in LL, LL128, Simple and func in Broadcast, Reduce, "
    "AllGather, ReduceScatter, AllReduce, SendRecv";

const std::string kAlgoNull = std::string("{F}:1:1: ALGO: no value (write \"\" for the default); expected ") + kAlgoForm;
const std::string kAlgoRign = std::string("{F}:1:7: ALGO: bad value \"Rign\": unknown algorithm \"Rign\" (did you mean Ring?); expected ") + kAlgoForm;
const std::string kP2pLower = std::string("{F}:1:12: P2P_LEVEL: bad value \"nvl\": NCCL only reads path types in upper case: write NVL; expected ") + kPathForm;
const std::string kProtoBad = "{F}:4:14: PROTO: bad value \"LL129\": unknown protocol \"LL129\" (did you mean LL128?); expected " + kProtoForm;
const std::string kEnvAlgo = std::string("env: NCCL_ALGO: bad value \"Ring;Tree\": \"Tree\": every section after the first needs a function, as in allreduce:Tree; expected ") + kAlgoForm;

const BadInput kCases[] = {
    {"UnknownKeyCloseToAName", "yaml", "MAX_NCHANELS: 16\n",
     "{F}:1:1: unknown setting \"MAX_NCHANELS\" (value \"16\"); did you mean MAX_NCHANNELS?"},
    {"LowerCaseKey", "yaml", "max_nchannels: 16\n",
     "{F}:1:1: unknown setting \"max_nchannels\" (value \"16\"); keys are upper case: did you mean MAX_NCHANNELS?"},
    {"UnknownKeyFarFromAnyName", "yaml", "ALGO: Ring\nLL128_BUFFSIZE: 4194304\n",
     "{F}:2:1: unknown setting \"LL128_BUFFSIZE\" (value \"4194304\"); see `weft info --config` or docs/settings.md for the settings"},
    {"IntegerOutOfRange", "yaml", "CROSS_NIC: 3\n",
     "{F}:1:12: CROSS_NIC: bad value \"3\": out of range; expected an integer 0-2"},
    {"NotAnInteger", "yaml", "MAX_NCHANNELS: lots\n",
     "{F}:1:16: MAX_NCHANNELS: bad value \"lots\": not an integer; expected an integer >= 1 or -2 (auto)"},
    {"ListForAnInteger", "yaml", "MAX_NCHANNELS: [1, 2]\n",
     "{F}:1:16: MAX_NCHANNELS: bad value: got a list; expected an integer >= 1 or -2 (auto)"},
    {"MapForAString", "yaml", "NET: {name: IB}\n", "{F}:1:6: NET: bad value: got a map; expected a string"},
    {"BooleanForANonFlag", "yaml", "CROSS_NIC: true\n",
     "{F}:1:12: CROSS_NIC: bad value true: a YAML boolean (quote it if you mean the text); expected an integer 0-2"},
    {"MissingValue", "yaml", "ALGO:\n", kAlgoNull.c_str()},
    {"DuplicateKeyInTwoSpellings", "yaml", "MAX_NCHANNELS: 8\nNCCL_MAX_NCHANNELS: 16\n",
     "{F}:2:1: duplicate key NCCL_MAX_NCHANNELS (value \"16\"): NCCL_MAX_NCHANNELS is already set by MAX_NCHANNELS at line 1"},
    {"DuplicateThroughAnOlderName", "yaml", "MIN_NRINGS: 2\nMIN_NCHANNELS: 4\n",
     "{F}:2:1: duplicate key MIN_NCHANNELS (value \"4\"): NCCL_MIN_NCHANNELS is already set by MIN_NRINGS at line 1"},
    {"UnknownAlgorithm", "yaml", "ALGO: Rign\n", kAlgoRign.c_str()},
    {"LowerCasePathType", "yaml", "P2P_LEVEL: nvl\n", kP2pLower.c_str()},
    {"EnvironmentOnlyKey", "yaml", "CONF_FILE: /etc/other.conf\n",
     "{F}:1:1: CONF_FILE can only be set in the environment (it chooses which files are read)"},
    {"YamlSyntax", "yaml", "ALGO: [Ring\n", "{F}:2:1: YAML syntax error: end of sequence flow not found"},
    {"TopLevelList", "yaml", "- MAX_NCHANNELS: 4\n",
     "{F}:1:1: expected a map of settings (NAME: value) at the top, got a list"},
    {"TwoDocuments", "yaml", "ALGO: Ring\n---\nPROTO: LL\n", "{F}:3:1: more than one YAML document; a policy is one"},
    {"KeyThatIsAList", "yaml", "[a, b]: 1\n", "{F}:1:1: keys must be names, got a list"},
    {"ProfilesNotAList", "yaml", "profiles: {match: {nodes: 1}}\n",
     "{F}:1:11: profiles: expected a list of {match: {...}, settings: {...}}, got a map"},
    {"ProfilesMisspelt", "yaml", "profile:\n  - match: {nodes: 1}\n    settings: {ALGO: Ring}\n",
     "{F}:1:1: unknown setting \"profile\"; did you mean profiles?"},
    {"ProfileWithoutMatch", "yaml", "profiles:\n  - settings: {ALGO: Ring}\n",
     "{F}:2:5: profile[0]: no match: (a profile applies only where its match holds; put settings for every host at the top level)"},
    {"ProfileWithoutSettings", "yaml", "profiles:\n  - match: {nodes: 2}\n", "{F}:2:5: profile[0]: no settings:"},
    {"ProfileKeyMisspelt", "yaml", "profiles:\n  - match: {nodes: 2}\n    setting: {ALGO: Ring}\n",
     "{F}:3:5: unknown profile key \"setting\" (did you mean settings?); expected match, settings"},
    {"MatchKeyMisspelt", "yaml", "profiles:\n  - match: {node: 2}\n    settings: {ALGO: Ring}\n",
     "{F}:2:13: unknown match key \"node\" (did you mean nodes?); expected host, nodes, gpus, arch, net"},
    {"MatchRangeBackwards", "yaml", "profiles:\n  - match: {nodes: 8-2}\n    settings: {ALGO: Ring}\n",
     "{F}:2:20: match nodes: bad value \"8-2\": expected N, N+ or N-M with N >= 1 (8, 16+, 2-8)"},
    {"MatchArchWithoutSm", "yaml", "profiles:\n  - match: {arch: hopper}\n    settings: {ALGO: Ring}\n",
     "{F}:2:19: match arch: bad value \"hopper\": expected smXX, smXX+ or smXX-smYY (sm90, sm80+, sm80-sm90)"},
    {"EmptyMatch", "yaml", "profiles:\n  - match: {}\n    settings: {ALGO: Ring}\n",
     "{F}:2:12: match: expected a map of conditions (host, nodes, gpus, arch, net), got an empty map"},
    {"BadValueInAProfile", "yaml", "profiles:\n  - match: {gpus: 8}\n    settings:\n      PROTO: LL129\n", kProtoBad.c_str()},
    {"StrayComma", "yaml", ",\n", "{F}:1:1: YAML syntax error: unexpected character"},
    {"AliasInsideItsOwnAnchor", "yaml", "NET_PLUGIN: &a [ofi, *a]\n", "{F}:1:22: YAML alias refers to the node that contains it"},
    {"AliasBomb", "yaml",
     "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
     "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
     "{F}: too large once YAML aliases are expanded (more than 200000 nodes or 8 MiB)"},
    {"ConfLineWithoutEquals", "conf", "NCCL_DEBUG INFO\n", "{F}:1:1: expected NAME=value, got \"NCCL_DEBUG INFO\""},
    {"ConfSpacesAroundName", "conf", "NCCL_DEBUG = INFO\n",
     "{F}:1:1: \"NCCL_DEBUG \" has spaces around the name; NCCL would set a variable of that name, which nothing "
     "reads: write NCCL_DEBUG=INFO"},
    {"ConfQuotedValue", "conf", "NCCL_SOCKET_IFNAME=\"eth0\"\n",
     "{F}:1:20: NCCL_SOCKET_IFNAME: bad value \"\"eth0\"\": NCCL keeps quotes as part of the value in conf files; "
     "write NCCL_SOCKET_IFNAME=eth0"},
    {"ConfValueOutOfRange", "conf", "# comment\nNCCL_CROSS_NIC=5\n",
     "{F}:2:16: NCCL_CROSS_NIC: bad value \"5\": out of range; expected an integer 0-2"},
    {"ConfNoName", "conf", "=5\n", "{F}:1:1: no name before '='"},
    {"ConfEnvironmentOnly", "conf", "WEFT_CONFIG=/x.yaml\n",
     "{F}:1:13: WEFT_CONFIG can only be set in the environment (it chooses which files are read)"},
    {"EnvironmentBadValue", "env", "Ring;Tree", kEnvAlgo.c_str()},
};

INSTANTIATE_TEST_SUITE_P(Config, BadInputTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BadInput>& i) { return std::string(i.param.name); });

using NamedFileTest = weft::test::WeftTest;

TEST_F(NamedFileTest, MissingWeftConfigFileIsAnError) {
  TempTree t;
  EXPECT_EQ(test::loadError(t.inputs({{"WEFT_CONFIG", t.path("missing.yaml")}})),
            t.path("missing.yaml") + ": no such file (YAML policy from WEFT_CONFIG)");
}

TEST_F(NamedFileTest, UnreadableYamlIsAnError) {
  TempTree t;
  Inputs in = t.inputs();
  in.yamlPath = t.home();  // a folder
  EXPECT_EQ(test::loadError(in), "cannot read " + t.home() + ": Is a directory");
}

}  // namespace
}  // namespace weft::config
