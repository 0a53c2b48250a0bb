// `weft tune` and `weft search --tune` as a user runs them: on every case of the tuning corpus,
// the "[0] NCCL INFO" lines of `weft tune` equal NCCL's, in order, and every TUNE line equals
// the JSON choice (algorithm, protocol, time to 0.001 µs).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/strings.h"
#include "core/coll/host_cost.h"
#include "tests/support/corpus.h"
#include "tests/support/tool.h"
#include "tests/support/tune_corpus.h"

namespace weft::tune {
namespace {

namespace fs = std::filesystem;

using Outcome = test::ToolOutcome;
Outcome run(const std::string& command) { return test::runCommand(command); }
std::string weft() { return test::weftTool(); }

// The tool with NCCL's logging of the tuning subsystems and no other settings of this shell.
// `env` holds the run's own NAME='VALUE ' assignments. The corpus was made without a tuner
// plugin: NCCL_TUNER_PLUGIN=none, whose one line (modelInfo) comes before the model's.
std::string tool(const std::string& args, const std::string& env = "") {
  return "env -u NCCL_ALGO -u NCCL_PROTO -u WEFT_CONFIG NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,INIT,ENV "
         "NCCL_TUNER_PLUGIN=none " +
         env + weft() + " " + args;
}

// The INFO messages of a `tool` run after NCCL's NCCL_TUNER_PLUGIN line, which must come first.
std::vector<std::string> modelInfo(const std::string& out) {
  std::vector<std::string> info = test::infoMessages(out);
  EXPECT_FALSE(info.empty());
  if (info.empty()) return info;
  EXPECT_EQ(info.front(), "NCCL_TUNER_PLUGIN set by environment to none");
  info.erase(info.begin());
  return info;
}

// "Broadcast" for the corpus's "broadcast".
std::string collName(const std::string& lower) {
  static const std::map<std::string, std::string> kNames = {{"allreduce", "AllReduce"},
                                                            {"allgather", "AllGather"},
                                                            {"reducescatter", "ReduceScatter"},
                                                            {"broadcast", "Broadcast"},
                                                            {"reduce", "Reduce"}};
  auto it = kNames.find(lower);
  return it == kNames.end() ? lower : it->second;
}

// The case's settings as shell assignments.
std::string envOf(const test::TuneCase& c) {
  std::string out;
  for (const auto& [k, v] : c.env) out += k + "='" + v + "' ";
  return out;
}

// The "choices" of weft tune's JSON, field by field (the writer's compact form, in its order).
struct Choice {
  std::string coll, bytes, algo, proto, time;
};

std::string field(const std::string& obj, const std::string& key) {
  std::string k = "\"" + key + "\":";
  size_t at = obj.find(k);
  if (at == std::string::npos) return "";
  at += k.size();
  if (obj[at] == '"') return obj.substr(at + 1, obj.find('"', at + 1) - at - 1);
  size_t end = obj.find_first_of(",}", at);
  return obj.substr(at, end - at);
}

std::vector<Choice> jsonChoices(const std::string& json) {
  std::vector<Choice> out;
  for (size_t at = json.find("{\"coll\":"); at != std::string::npos; at = json.find("{\"coll\":", at + 1)) {
    std::string obj = json.substr(at, json.find('}', at) - at + 1);
    out.push_back({field(obj, "coll"), field(obj, "bytes"), field(obj, "algo"), field(obj, "proto"), field(obj, "time_us")});
  }
  return out;
}

TEST(TuneCli, InfoLinesAndJsonChoicesEqualNcclOnEveryCorpusCase) {
  WEFT_REQUIRE_CORPUS();
  std::vector<test::TuneCase> cases = test::tuneCases();
  ASSERT_GE(cases.size(), 10u);
  for (const test::TuneCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::map<std::string, std::string> tune;  // "AllReduce 8" -> "Tree LL 25.200"
    for (const auto& t : c.tune) tune[collName(t[0]) + " " + t[1]] = t[2] + " " + t[3] + " " + t[4];
    std::string args = "tune " + c.topology.string() + " --nodes " + std::to_string(c.nodes);
    Outcome text = run(tool(args, envOf(c)));
    ASSERT_EQ(text.rc, 0) << text.out;
    EXPECT_EQ(modelInfo(text.out), c.info);

    Outcome json = run(tool(args + " --format json", envOf(c)));
    ASSERT_EQ(json.rc, 0) << json.out;
    size_t seen = 0;
    for (const Choice& m : jsonChoices(json.out)) {
      std::string key = m.coll + " " + m.bytes;
      auto want = tune.find(key);
      ASSERT_NE(want, tune.end()) << key;
      std::string got = m.algo + " " + m.proto + " " + strprintf("%.3f", std::stod(m.time));
      EXPECT_EQ(got, want->second) << key;
      ++seen;
    }
    EXPECT_EQ(seen, tune.size());
  }
}

// --format log prints a reference log's own lines (all but its two header comments), so that
// tools/nccl-oracle/compare_tune.sh can set weft beside NCCL's code on any topology and setting.
TEST(TuneCli, LogFormatReprintsEveryCorpusCaseLineForLine) {
  WEFT_REQUIRE_CORPUS();
  std::vector<test::TuneCase> cases = test::tuneCases();
  ASSERT_GE(cases.size(), 10u);
  fs::path dir = test::corpusDir() / "reference-nccl-2.28.9-tuning";
  for (const test::TuneCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::ifstream in(dir / c.name);
    ASSERT_TRUE(in.good());
    std::vector<std::string> want;
    for (std::string line; std::getline(in, line);)
      if (line.rfind("# oracle:", 0) != 0 && line.rfind("# nccl-oracle", 0) != 0) want.push_back(line);
    Outcome out = run(tool("tune " + c.topology.string() + " --nodes " + std::to_string(c.nodes) + " --format log",
                           envOf(c)));
    ASSERT_EQ(out.rc, 0) << out.out;
    std::vector<std::string> got;
    std::istringstream lines(out.out);
    for (std::string line; std::getline(lines, line);) got.push_back(line);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "line " << i + 1;
  }
}

TEST(TuneCli, SearchTuneAppendsTheTuningLinesAfterTheConnectLines) {
  WEFT_REQUIRE_CORPUS();
  std::string topo = (test::corpusDir() / "topologies/oracle-oci-hpc/H100-topology.xml").string();
  Outcome o = run("env -u NCCL_DEBUG -u NCCL_DEBUG_SUBSYS -u NCCL_ALGO -u NCCL_PROTO " + weft() + " search " + topo +
                  " --nodes 2 --tune");
  ASSERT_EQ(o.rc, 0) << o.out;
  size_t channel = o.out.rfind("NCCL INFO Channel ");
  size_t table = o.out.find("NCCL INFO   Algorithm   |");
  size_t summary = o.out.find("coll channels, ");
  size_t choices = o.out.find("  AllReduce                  8  Tree");
  ASSERT_NE(channel, std::string::npos);
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(channel, table);
  EXPECT_LT(table, summary);
  EXPECT_LT(summary, choices);
}

TEST(TuneCli, ExplainPrintsTheWholeTableAndBadArgumentsFail) {
  WEFT_REQUIRE_CORPUS();
  std::string topo = (test::corpusDir() / "topologies/oracle-oci-hpc/H100-topology.xml").string();
  Outcome e = run(weft() + " tune " + topo + " --coll allreduce --sizes 1M --explain 1M");
  ASSERT_EQ(e.rc, 0) << e.out;
  EXPECT_NE(e.out.find("# cost table: AllReduce, 1048576 bytes"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("  NVLS"), std::string::npos);
  EXPECT_NE(e.out.find("  => "), std::string::npos);
  Outcome bad = run(weft() + " tune " + topo + " --coll allgahter");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.out.find("unknown collective \"allgahter\""), std::string::npos) << bad.out;
  Outcome sizes = run(weft() + " tune " + topo + " --sizes 1G:8");
  EXPECT_NE(sizes.rc, 0);
  EXPECT_NE(sizes.out.find("ends below its start"), std::string::npos) << sizes.out;
  Outcome help = run(weft() + " tune --help");
  EXPECT_EQ(help.rc, 0);
  EXPECT_NE(help.out.find("NCCL_DEBUG_SUBSYS=TUNING,INIT,ENV"), std::string::npos);
}

}  // namespace
}  // namespace weft::tune

namespace weft::tune {
namespace {

// NCCL reads NCCL_ALGO, NCCL_PROTO and NCCL_THREAD_THRESHOLDS with getenv: present but empty,
// they still print their line (and the matrix), where an empty integer setting is unset.
// `weft tune` of the corpus H100 on 2 nodes, AllReduce at 1 MiB, with `env`.
Outcome h100AllReduce(const std::string& env) {
  std::string topo = (test::corpusDir() / "topologies/oracle-oci-hpc/H100-topology.xml").string();
  return run(tool("tune " + topo + " --nodes 2 --coll allreduce --sizes 1M", env));
}

TEST(TuneCli, EmptyAlgoProtoAndThresholdsStillPrintTheirLines) {
  WEFT_REQUIRE_CORPUS();
  Outcome o = h100AllReduce("NCCL_ALGO= NCCL_THREAD_THRESHOLDS= NCCL_NTHREADS= ");
  ASSERT_EQ(o.rc, 0) << o.out;
  std::vector<std::string> info = modelInfo(o.out);
  ASSERT_GE(info.size(), 3u);
  EXPECT_EQ(info[0], "NCCL_ALGO set by environment to ");
  EXPECT_EQ(info[1].rfind("Enabled NCCL Func/Proto/Algo Matrix:\n", 0), 0u) << info[1];
  EXPECT_NE(std::find(info.begin(), info.end(), "NCCL_THREAD_THRESHOLDS set by environment to "), info.end());
  EXPECT_EQ(std::count_if(info.begin(), info.end(), [](const std::string& l) { return l.rfind("NCCL_NTHREADS", 0) == 0; }),
            0);
}

TEST(TuneCli, SettingsPrintTheirLinesAndTheMatrixAsOneMessage) {
  WEFT_REQUIRE_CORPUS();
  Outcome o = h100AllReduce("NCCL_PROTO='^LL128' NCCL_ALGO='ring;allreduce:tree' NCCL_NTHREADS=128 ");
  ASSERT_EQ(o.rc, 0) << o.out;
  std::vector<std::string> info = modelInfo(o.out);
  ASSERT_GE(info.size(), 5u);
  EXPECT_EQ(info[0], "NCCL_NTHREADS set by environment to 128.");
  EXPECT_EQ(info[1], "NCCL_PROTO set by environment to ^LL128");
  EXPECT_EQ(info[2], "NCCL_ALGO set by environment to ring;allreduce:tree");
  const std::string& matrix = info[3];
  EXPECT_EQ(matrix.rfind("Enabled NCCL Func/Proto/Algo Matrix:\n     Function |", 0), 0u) << matrix;
  EXPECT_EQ(std::count(matrix.begin(), matrix.end(), '\n'), 6) << matrix;  // header and 5 functions
  EXPECT_NE(matrix.find("\n    AllReduce |        1         0         1   |             1              0  "),
            std::string::npos)
      << matrix;
  EXPECT_EQ(info[4].rfind("  Algorithm   |", 0), 0u) << info[4];
  EXPECT_NE(o.out.find("  AllReduce            1048576  Tree          Simple"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace weft::tune

namespace weft::tune {
namespace {

TEST(TuneCli, AnOperationNcclWouldFailIsReportedOnItsRow) {
  WEFT_REQUIRE_CORPUS();
  std::string topo = (test::corpusDir() / "topologies/oracle-oci-hpc/H100-topology.xml").string();
  // No tree for Broadcast: NCCL fails that operation with a WARN; the other rows stay.
  Outcome json = run(tool("tune " + topo + " --coll allreduce,broadcast --sizes 1M --format json 2>/dev/null | cat",
                          "NCCL_ALGO=tree "));
  ASSERT_EQ(json.rc, 0) << json.out;
  ASSERT_EQ(json.out.rfind("{\"weft\":", 0), 0u) << json.out;  // stdout is one JSON document (the WARN: stderr)
  EXPECT_NE(json.out.find("{\"coll\":\"AllReduce\",\"bytes\":1048576,\"algo\":\"Tree\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("{\"coll\":\"Broadcast\",\"bytes\":1048576,\"error\":\"no algorithm/protocol available for "
                          "function Broadcast with datatype ncclFloat32. NCCL_ALGO was set to tree.\"}"),
            std::string::npos)
      << json.out;
  Outcome text = run(tool("tune " + topo + " --coll broadcast --sizes 1M", "NCCL_ALGO=tree "));
  ASSERT_EQ(text.rc, 0) << text.out;
  EXPECT_NE(text.out.find("NCCL WARN Error : no algorithm/protocol available for function Broadcast"), std::string::npos);
  EXPECT_NE(text.out.find("  Broadcast            1048576  invalid usage: no algorithm/protocol"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace weft::tune

namespace weft::tune {
namespace {

// `weft tune --cpu`: CPU endpoints' picks (coll::hostPick, the communicator's own rule) and the
// host cost model's times, without a topology; NCCL_ALGO and WEFT_HOST_ALGO as a communicator
// reads them.
std::string cpuTool(const std::string& args, const std::string& env = "") {
  return "env -u NCCL_ALGO -u WEFT_HOST_ALGO -u NCCL_TUNER_PLUGIN -u WEFT_CONFIG " + env + weft() + " tune --cpu " + args;
}

// The row of `coll` at `bytes`: its columns after the size.
std::vector<std::string> cpuRow(const std::string& out, const std::string& coll, size_t bytes) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string c, b, w;
    if (!(words >> c >> b) || c != coll || b != std::to_string(bytes)) continue;
    std::vector<std::string> rest;
    while (words >> w) rest.push_back(w);
    return rest;
  }
  return {};
}

TEST(TuneCli, CpuShowsTheHostModelAndWhatTheCommunicatorRuns) {
  Outcome o = run(cpuTool("--ranks 4 --cpus 8 --coll allreduce,allgather --sizes 8,1M"));
  ASSERT_EQ(o.rc, 0) << o.out;
  EXPECT_NE(o.out.find("4 ranks on 1 host of 8 CPUs;"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("WEFT_HOST_ALGO=auto, NCCL_ALGO=(unset)"), std::string::npos) << o.out;
  const coll::HostAllReduceTimes small = coll::hostAllReduceTimes(8, 4, 1);
  std::vector<std::string> r = cpuRow(o.out, "AllReduce", 8);
  ASSERT_EQ(r.size(), 4u) << o.out;
  EXPECT_EQ(r[0], strprintf("%.3f", small.ring));
  EXPECT_EQ(r[1], "-");  // one host: no tree
  EXPECT_EQ(r[2], strprintf("%.3f", small.doubling));
  EXPECT_EQ(r[3], "RecursiveDoubling");
  EXPECT_EQ(cpuRow(o.out, "AllReduce", 1 << 20).back(), "Ring") << o.out;
  EXPECT_EQ(cpuRow(o.out, "AllGather", 8), (std::vector<std::string>{"-", "-", "-", "Ring"})) << o.out;

  // More ranks than CPUs on a host: the oversubscribed constants, doubling much further up.
  Outcome over = run(cpuTool("--ranks 4 --cpus 2 --coll allreduce --sizes 64K"));
  ASSERT_EQ(over.rc, 0) << over.out;
  EXPECT_NE(over.out.find("4 ranks on 1 host of 2 CPUs (oversubscribed)"), std::string::npos) << over.out;
  const coll::HostAllReduceTimes packed = coll::hostAllReduceTimes(64 << 10, 4, 1, true);
  EXPECT_EQ(cpuRow(over.out, "AllReduce", 64 << 10),
            (std::vector<std::string>{strprintf("%.3f", packed.ring), "-", strprintf("%.3f", packed.doubling),
                                      "RecursiveDoubling"}))
      << over.out;
  EXPECT_EQ(cpuRow(o.out, "AllReduce", 1 << 20).back(), "Ring");

  // Across hosts: the size rule's Tree below 512 KiB where doubling is not considered (>64 KiB).
  Outcome hosts = run(cpuTool("--ranks 4 --nodes 2 --cpus 8 --coll allreduce --sizes 128K --format json"));
  ASSERT_EQ(hosts.rc, 0) << hosts.out;
  EXPECT_NE(hosts.out.find("\"nNodes\":2"), std::string::npos) << hosts.out;
  EXPECT_NE(hosts.out.find("\"bytes\":131072,\"algo\":\"Tree\""), std::string::npos) << hosts.out;

  // NCCL_ALGO set: NCCL's algorithms only, no model; WEFT_HOST_ALGO=doubling: always doubling.
  Outcome ring = run(cpuTool("--ranks 4 --cpus 8 --coll allreduce --sizes 8", "NCCL_ALGO=Ring "));
  ASSERT_EQ(ring.rc, 0) << ring.out;
  EXPECT_EQ(cpuRow(ring.out, "AllReduce", 8), (std::vector<std::string>{"-", "-", "-", "Ring"})) << ring.out;
  Outcome always = run(cpuTool("--ranks 4 --cpus 8 --coll allreduce --sizes 1M", "WEFT_HOST_ALGO=doubling "));
  ASSERT_EQ(always.rc, 0) << always.out;
  EXPECT_EQ(cpuRow(always.out, "AllReduce", 1 << 20).back(), "RecursiveDoubling") << always.out;
  // Nothing left to run: said on the row, as a communicator's call would fail.
  Outcome none = run(cpuTool("--ranks 2 --coll allgather --sizes 8", "NCCL_ALGO=Tree "));
  ASSERT_EQ(none.rc, 0) << none.out;
  EXPECT_NE(none.out.find("error: NCCL_ALGO=Tree leaves no algorithm the host runs for AllGather"), std::string::npos)
      << none.out;

  Outcome nodes = run(cpuTool("--ranks 2 --nodes 3"));
  EXPECT_NE(nodes.rc, 0);
  EXPECT_NE(nodes.out.find("--nodes must be 1 to --ranks (2)"), std::string::npos) << nodes.out;
  Outcome noTopo = run(weft() + " tune");
  EXPECT_NE(noTopo.rc, 0);
  EXPECT_NE(noTopo.out.find("TOPO is required (or --cpu for CPU endpoints)"), std::string::npos) << noTopo.out;
}

}  // namespace
}  // namespace weft::tune
