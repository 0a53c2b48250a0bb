// `weft tune` and `weft search --tune` with a tuner plugin, as a user runs them: weft's YAML rule
// tuner (NCCL_TUNER_PLUGIN=weft, found in the build tree) changes exactly the choices its rules
// match and --explain names the rule; a v5 tuner's constants reach the model's table; a tuner
// whose init fails follows WEFT_TUNER_FALLBACK. On 2 nodes of the bundled H100 example.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/strings.h"
#include "tests/support/tool.h"
#include "tests/support/tune_corpus.h"

namespace weft::tune {
namespace {

using Outcome = test::ToolOutcome;

const std::string kTopo = std::string(WEFT_SOURCE_DIR) + "/examples/topologies/hgx-h100-8gpu.xml";
const std::string kRules = std::string(WEFT_SOURCE_DIR) + "/tests/data/tuner/rules.yaml";
const std::string kFakes = WEFT_TEST_PLUGIN_DIR;

// The tool with NCCL's tuning log, none of this shell's tuning settings, and `env` in front.
Outcome tool(const std::string& env, const std::string& args) {
  return test::runCommand("env -u NCCL_ALGO -u NCCL_PROTO -u WEFT_CONFIG -u WEFT_TUNER_RULES_FILE "
                          "-u NCCL_TUNER_CONFIG_FILE -u WEFT_TUNER_FALLBACK -u WEFT_TUNER_GPU_ARCH "
                          "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,INIT,ENV " +
                          env + " " + test::weftTool() + " " + args);
}
// `text` with every run of spaces as one space: table rows without their column widths.
std::string squeezed(const std::string& text) {
  std::string out;
  for (char c : text)
    if (c != ' ' || out.empty() || out.back() != ' ') out += c;
  return out;
}

const std::string kWeftTuner = "NCCL_TUNER_PLUGIN=weft WEFT_TUNER_RULES_FILE=" + kRules;
const std::string kSizes = " --nodes 2 --sizes 1K:16M,1G";

// One entry of the JSON "choices": its text from {"coll" up to the next entry.
struct Choice {
  std::string text;
  std::string get(const std::string& key) const {
    std::string k = "\"" + key + "\":";
    size_t at = text.find(k);
    if (at == std::string::npos) return "";
    at += k.size();
    if (text[at] == '"') return text.substr(at + 1, text.find('"', at + 1) - at - 1);
    return text.substr(at, text.find_first_of(",}", at) - at);
  }
  std::string key() const { return get("coll") + " " + get("bytes"); }
};

std::map<std::string, Choice> choices(const std::string& json) {
  std::map<std::string, Choice> out;
  size_t end = json.find("\"explain\":");
  for (size_t at = json.find("{\"coll\":"); at != std::string::npos && at < end;) {
    size_t next = json.find("{\"coll\":", at + 1);
    Choice c{json.substr(at, std::min(next, end) - at)};
    out[c.key()] = c;
    at = next;
  }
  return out;
}

// What tests/data/tuner/rules.yaml sets for an operation on 2 nodes: the rule's line, algo,
// proto and channels ("" / 0: kept); line 0 when no rule matches.
struct Expected {
  int line = 0;
  std::string algo, proto;
  int channels = 0;
};
Expected ruleFor(const std::string& coll, size_t bytes) {
  if (coll == "AllReduce" && bytes >= 8192 && bytes <= 65536) return {3, "Ring", "Simple", 2};
  if (coll == "AllGather" && bytes == 1048576) return {4, "Ring", "LL", 0};
  if (coll == "Broadcast" && bytes >= (size_t{1} << 30)) return {5, "", "", 3};
  return {};
}

TEST(TuneTuner, YamlRulesChangeExactlyTheChoicesTheyMatch) {
  Outcome model = tool("NCCL_TUNER_PLUGIN=none", "tune " + kTopo + kSizes + " --format json 2>/dev/null | cat");
  Outcome tuned = tool(kWeftTuner, "tune " + kTopo + kSizes + " --format json 2>/dev/null | cat");
  ASSERT_EQ(model.rc, 0) << model.out;
  ASSERT_EQ(tuned.rc, 0) << tuned.out;
  EXPECT_NE(tuned.out.find("\"tunerPlugin\":\"weft-yaml (v5, libnccl-tuner-weft.so)\""), std::string::npos);
  std::map<std::string, Choice> before = choices(model.out), after = choices(tuned.out);
  ASSERT_EQ(before.size(), 80u);  // 5 collectives x 16 sizes
  ASSERT_EQ(after.size(), before.size());
  int fired = 0;
  for (const auto& [key, b] : before) {
    SCOPED_TRACE(key);
    const Choice& a = after.at(key);
    Expected want = ruleFor(b.get("coll"), std::stoull(b.get("bytes")));
    if (want.line == 0) {
      EXPECT_EQ(a.text, b.text);  // untouched, no "tuner" member
      continue;
    }
    ++fired;
    EXPECT_EQ(a.get("rule"), kRules + ":" + std::to_string(want.line));
    EXPECT_EQ(a.get("algo"), want.algo.empty() ? b.get("algo") : want.algo);
    EXPECT_EQ(a.get("proto"), want.proto.empty() ? b.get("proto") : want.proto);
    EXPECT_EQ(a.get("channels"), want.channels == 0 ? b.get("channels") : std::to_string(want.channels));
    // The rule's cell is the model's choice only where the model had chosen it already.
    EXPECT_NE(a.get("algo") + a.get("proto") + a.get("channels"), b.get("algo") + b.get("proto") + b.get("channels"));
  }
  EXPECT_EQ(fired, 4 + 1 + 1);
}

TEST(TuneTuner, RulesAboutNodesDoNotFireOnOneNode) {
  Outcome one = tool(kWeftTuner, "tune " + kTopo + " --coll allgather --sizes 1M --format json 2>/dev/null | cat");
  ASSERT_EQ(one.rc, 0) << one.out;
  auto c = choices(one.out);
  ASSERT_EQ(c.count("AllGather 1048576"), 1u) << one.out;
  EXPECT_EQ(c["AllGather 1048576"].text.find("\"tuner\""), std::string::npos) << one.out;
}

TEST(TuneTuner, LoaderAndPluginLinesComeRightBeforeTheModelAndPerCallLinesGoToTheTable) {
  Outcome o = tool(kWeftTuner, "tune " + kTopo + kSizes);
  ASSERT_EQ(o.rc, 0) << o.out;
  std::vector<std::string> info = test::infoMessages(o.out);
  ASSERT_GE(info.size(), 6u) << o.out;
  EXPECT_EQ(info[0], "NCCL_TUNER_PLUGIN set by environment to weft");
  EXPECT_EQ(info[1], "TUNER/Plugin: Using weft-yaml (v5)");
  EXPECT_EQ(info[2].rfind("Successfully loaded external tuner plugin /", 0), 0u) << info[2];
  EXPECT_TRUE(info[2].ends_with("/libnccl-tuner-weft.so")) << info[2];
  // The topology's sm reaches the plugin's `arch` rules offline.
  EXPECT_EQ(info[3].rfind("TUNER/weft: 3 rules from " + kRules + " (nRanks 16, nNodes 2, sm 90, host ", 0), 0u)
      << info[3];
  EXPECT_EQ(info[4].rfind("  Algorithm   |", 0), 0u) << info[4];
  // NCCL's closing line when the communicator goes, after the choices.
  EXPECT_GT(o.out.find("NCCL INFO TUNER/Plugin: Closing tuner: 'weft-yaml'"), o.out.find("  Broadcast "));
  // The plugin's per-operation lines are the table's tuner column, not log lines.
  EXPECT_EQ(o.out.find("NCCL INFO TUNER/weft: AllReduce"), std::string::npos) << o.out;
  std::string rows = squeezed(o.out);
  EXPECT_NE(rows.find("\n AllReduce 8192 Ring Simple 2 160 0.000 rule " + kRules + ":3\n"), std::string::npos) << rows;
  EXPECT_NE(rows.find("\n AllReduce 4096 Tree LL 1 640 25.553 -\n"), std::string::npos) << rows;
}

// The lines of --explain's block for `coll`.
std::string explainBlock(const std::string& out, const std::string& coll) {
  size_t at = out.find("# cost table: " + coll + ",");
  if (at == std::string::npos) return "";
  size_t end = out.find("\n# cost table: ", at + 1);
  return out.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

TEST(TuneTuner, ExplainShowsTheTableBeforeAndAfterTheTunerAndTheRuleThatFired) {
  Outcome o = tool(kWeftTuner, "tune " + kTopo + " --nodes 2 --coll allreduce,allgather --sizes 16K --explain 16K");
  ASSERT_EQ(o.rc, 0) << o.out;
  std::string ar = explainBlock(o.out, "AllReduce");
  ASSERT_FALSE(ar.empty()) << o.out;
  EXPECT_NE(ar.find("# after the tuner, weft-yaml (v5, libnccl-tuner-weft.so)\n"), std::string::npos) << ar;
  EXPECT_NE(ar.find("  tuner: rule " + kRules + ":3 fired: algo Ring proto Simple channels 2\n"), std::string::npos)
      << ar;
  EXPECT_NE(ar.find("  tuner: changed Ring/Simple "), std::string::npos) << ar;
  EXPECT_NE(ar.find("  => Ring/Simple, 2 channels, "), std::string::npos) << ar;
  // Before: the model's Ring/Simple time, not chosen; after: 0.000, chosen.
  size_t after = ar.find("# after the tuner");
  size_t ringBefore = ar.find("  Ring    ");
  size_t ringAfter = ar.find("  Ring    ", after);
  ASSERT_LT(ringBefore, after);
  ASSERT_NE(ringAfter, std::string::npos);
  std::string before = ar.substr(ringBefore, ar.find('\n', ringBefore) - ringBefore);
  std::string tuned = ar.substr(ringAfter, ar.find('\n', ringAfter) - ringAfter);
  EXPECT_EQ(before.find('*'), std::string::npos) << before;
  EXPECT_TRUE(tuned.ends_with("0.000*")) << tuned;
  std::string ag = explainBlock(o.out, "AllGather");
  EXPECT_NE(ag.find("  tuner: no change\n"), std::string::npos) << ag;
  EXPECT_NE(ag.find("  => Ring/LL, 1 channels, "), std::string::npos) << ag;

  Outcome json = tool(kWeftTuner, "tune " + kTopo +
                                      " --nodes 2 --coll allreduce --sizes 16K --explain 16K --format json "
                                      "2>/dev/null | cat");
  ASSERT_EQ(json.rc, 0) << json.out;
  size_t explain = json.out.find("\"explain\":");
  ASSERT_NE(explain, std::string::npos) << json.out;
  std::string e = json.out.substr(explain);
  EXPECT_NE(e.find("\"tuned_table\":{"), std::string::npos) << e;
  EXPECT_NE(e.find("\"rule\":\"" + kRules + ":3\",\"action\":\"algo Ring proto Simple channels 2\""),
            std::string::npos)
      << e;
}

// The TUNING table's rows ("AllReduce |  40.0/  20.8 | …"), by function, each as its cells.
std::map<std::string, std::vector<std::string>> tableRows(const std::string& out) {
  std::map<std::string, std::vector<std::string>> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find("NCCL INFO ");
    if (at == std::string::npos) continue;
    const std::string payload = line.substr(at + 10);
    std::vector<std::string> cells;
    for (std::string_view c : split(payload, '|')) cells.emplace_back(trim(c));
    static const std::vector<std::string> kFuncs = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
    if (cells.size() < 4 || std::find(kFuncs.begin(), kFuncs.end(), cells[0]) == kFuncs.end()) continue;
    auto& row = rows[cells[0]];
    row.insert(row.end(), cells.begin() + 1, cells.end());
  }
  return rows;
}

double latencyOf(const std::string& cell) { return std::stod(cell.substr(0, cell.find('/'))); }

TEST(TuneTuner, AV5TunersConstantsReachTheModelAndOlderVersionsSeeNone) {
  Outcome model = tool("NCCL_TUNER_PLUGIN=none", "tune " + kTopo + " --nodes 2 --sizes 1M");
  Outcome v5 = tool("NCCL_TUNER_PLUGIN=" + kFakes + "/libnccl-tuner-fakev5.so", "tune " + kTopo + " --nodes 2 --sizes 1M");
  Outcome v4 = tool("NCCL_TUNER_PLUGIN=" + kFakes + "/libnccl-tuner-fakev4.so", "tune " + kTopo + " --nodes 2 --sizes 1M");
  ASSERT_EQ(model.rc, 0) << model.out;
  ASSERT_EQ(v5.rc, 0) << v5.out;
  ASSERT_EQ(v4.rc, 0) << v4.out;
  auto base = tableRows(model.out), edited = tableRows(v5.out), old = tableRows(v4.out);
  ASSERT_EQ(base.size(), 5u) << model.out;
  EXPECT_EQ(old, base);  // v4's init gets no constants
  // fakev5 sets baseLatencies[Ring][LL] to 42 (NCCL's 6.6): every Ring/LL latency of the table
  // grows by 35.4 µs, and nothing else moves.
  constexpr size_t kRingLL = 3;  // Tree LL, LL128, Simple, then Ring LL
  for (const auto& [func, row] : base) {
    SCOPED_TRACE(func);
    const auto& e = edited.at(func);
    ASSERT_EQ(e.size(), row.size());
    for (size_t i = 0; i < row.size(); ++i) {
      if (i != kRingLL) {
        EXPECT_EQ(e[i], row[i]) << i;
        continue;
      }
      EXPECT_NEAR(latencyOf(e[i]) - latencyOf(row[i]), 35.4, 0.11) << row[i] << " -> " << e[i];
      EXPECT_EQ(e[i].substr(e[i].find('/')), row[i].substr(row[i].find('/')));
    }
  }
  // Its getCollInfo zeroes Ring/Simple and asks for 4 channels: every choice follows.
  EXPECT_NE(v5.out.find("tuner plugin fakev5 (v5, libnccl-tuner-fakev5.so)"), std::string::npos) << v5.out;
  EXPECT_NE(squeezed(v5.out).find("\n AllReduce 1048576 Ring Simple 4 544 0.000 changed\n"), std::string::npos) << v5.out;
}

TEST(TuneTuner, AFailingInitFollowsTheFallbackPolicy) {
  const std::string failing = "NCCL_TUNER_PLUGIN=" + kFakes + "/libnccl-tuner-initfails.so ";
  Outcome model = tool("NCCL_TUNER_PLUGIN=none", "tune " + kTopo + " --nodes 2 --sizes 1M");
  Outcome allow = tool(failing, "tune " + kTopo + " --nodes 2 --sizes 1M");
  ASSERT_EQ(allow.rc, 0) << allow.out;
  EXPECT_NE(allow.out.find("NCCL WARN TUNER/Plugin: "), std::string::npos) << allow.out;
  EXPECT_NE(allow.out.find("using the cost model without a tuner"), std::string::npos) << allow.out;
  EXPECT_NE(allow.out.find("(float32 sum, no tuner plugin)"), std::string::npos) << allow.out;
  // The plugin rewrote a constant before failing: the model must not see it.
  EXPECT_EQ(tableRows(allow.out), tableRows(model.out));
  EXPECT_EQ(allow.out.substr(allow.out.find("# NCCL 2.28.9's choice")),
            model.out.substr(model.out.find("# NCCL 2.28.9's choice")));

  Outcome deny = tool(failing + "WEFT_TUNER_FALLBACK=deny", "tune " + kTopo + " --nodes 2 --sizes 1M");
  EXPECT_NE(deny.rc, 0) << deny.out;
  EXPECT_NE(deny.out.find("weft tune: "), std::string::npos) << deny.out;
  EXPECT_NE(deny.out.find("(WEFT_TUNER_FALLBACK=deny)"), std::string::npos) << deny.out;
  EXPECT_EQ(deny.out.find("# NCCL 2.28.9's choice"), std::string::npos) << deny.out;
}

TEST(TuneTuner, AFailingGetCollInfoFailsEachOperationOnItsRowWithOneWarn) {
  Outcome o = tool("NCCL_TUNER_PLUGIN=" + kFakes + "/libnccl-tuner-getfails.so",
                   "tune " + kTopo + " --coll allreduce,allgather --sizes 1K,1M --explain 1M");
  ASSERT_EQ(o.rc, 0) << o.out;
  size_t warns = 0;
  for (size_t at = o.out.find("NCCL WARN "); at != std::string::npos; at = o.out.find("NCCL WARN ", at + 1)) ++warns;
  EXPECT_EQ(warns, 1u) << o.out;
  std::string rows = squeezed(o.out);
  EXPECT_NE(rows.find("\n AllGather 1048576 internal error: tuner getCollInfo: tuner for AllGather of 1048576 bytes: "),
            std::string::npos)
      << rows;
  std::string ag = explainBlock(o.out, "AllGather");
  EXPECT_NE(ag.find("  tuner: getCollInfo failed\n  => internal error: "), std::string::npos) << ag;
  // The table after the failed call is the one the tuner was given (the hook restores it).
  size_t after = ag.find("# after the tuner");
  ASSERT_NE(after, std::string::npos) << ag;
  std::string tunedPart = ag.substr(after, ag.find("  tuner:") - after);
  EXPECT_EQ(tunedPart.find(" 0.000"), std::string::npos) << ag;
  EXPECT_NE(tunedPart.find("  Ring "), std::string::npos) << ag;
}

TEST(TuneTuner, SearchTuneGoesThroughTheTunerToo) {
  Outcome o = tool(kWeftTuner, "search " + kTopo + " --nodes 2 --tune --format json 2>/dev/null | cat");
  ASSERT_EQ(o.rc, 0) << o.out;
  EXPECT_NE(o.out.find("\"tune\":{\"tunerPlugin\":\"weft-yaml (v5, libnccl-tuner-weft.so)\""), std::string::npos)
      << o.out.substr(0, 400);
  auto c = choices(o.out);
  ASSERT_EQ(c.count("AllReduce 16384"), 1u);
  EXPECT_EQ(c["AllReduce 16384"].get("algo"), "Ring");
  EXPECT_EQ(c["AllReduce 16384"].get("rule"), kRules + ":3");
}

}  // namespace
}  // namespace weft::tune
