// `weft tune` and `weft search --tune` as a user runs them: on every case of the tuning corpus,
// the "[0] NCCL INFO" lines of `weft tune` equal NCCL's, in order, and every TUNE line equals
// the JSON choice (algorithm, protocol, time to 0.001 µs).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/strings.h"
#include "tests/support/corpus.h"
#include "tests/support/tool.h"

namespace weft::tune {
namespace {

namespace fs = std::filesystem;

using Outcome = test::ToolOutcome;
Outcome run(const std::string& command) { return test::runCommand(command); }
std::string weft() { return test::weftTool(); }

// The tool with NCCL's logging of the tuning subsystems and no other settings of this shell.
std::string tool(const std::string& args) {
  return "env -u NCCL_ALGO -u NCCL_PROTO -u WEFT_CONFIG NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,INIT,ENV " + weft() +
         " " + args;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct CorpusCase {
  std::string name;
  std::string topology;
  int nodes = 1;
  std::vector<std::string> info;  // whole "[0] NCCL INFO ..." lines
  std::map<std::string, std::string> tune;  // "AllReduce 8" -> "Tree LL 25.200"
};

std::vector<CorpusCase> corpusCases() {
  std::vector<CorpusCase> out;
  fs::path dir = test::corpusDir() / "reference-nccl-2.28.9-tuning";
  if (!fs::exists(dir)) return out;
  static const std::map<std::string, std::string> kNames = {{"allreduce", "AllReduce"},
                                                            {"allgather", "AllGather"},
                                                            {"reducescatter", "ReduceScatter"},
                                                            {"broadcast", "Broadcast"},
                                                            {"reduce", "Reduce"}};
  static const std::regex kHeader(R"((\d+) identical node\(s\) built from (\S+), env: -$)");
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".log") continue;
    CorpusCase c;
    c.name = e.path().filename().string();
    for (const std::string& l : lines(test::readFile(e.path()))) {
      std::smatch m;
      if (l.rfind("# oracle:", 0) == 0 && std::regex_search(l, m, kHeader)) {
        c.nodes = std::stoi(m[1]);
        c.topology = (test::corpusDir() / m[2].str()).string();
      } else if (l.rfind("[0] NCCL INFO ", 0) == 0) {
        c.info.push_back(l);
      } else if (l.rfind("TUNE ", 0) == 0) {
        std::istringstream w(l);
        std::string tag, coll, bytes, algo, proto, time;
        w >> tag >> coll >> bytes >> algo >> proto >> time;
        c.tune[kNames.at(coll) + " " + bytes] = algo + " " + proto + " " + time;
      }
    }
    if (!c.topology.empty()) out.push_back(std::move(c));
  }
  return out;
}

TEST(TuneCli, InfoLinesAndJsonChoicesEqualNcclOnEveryCorpusCase) {
  WEFT_REQUIRE_CORPUS();
  std::vector<CorpusCase> cases = corpusCases();
  ASSERT_GE(cases.size(), 10u);
  static const std::regex kChoice(
      R"re(\{"coll":"(\w+)","bytes":(\d+),"algo":"(\w+)","proto":"(\w+)","channels":\d+,"threads":\d+,"time_us":([0-9.eE+-]+)\})re");
  for (const CorpusCase& c : cases) {
    SCOPED_TRACE(c.name);
    Outcome text = run(tool("tune " + c.topology + " --nodes " + std::to_string(c.nodes)));
    ASSERT_EQ(text.rc, 0) << text.out;
    std::vector<std::string> info;
    for (const std::string& l : lines(text.out))
      if (l.rfind("[0] NCCL INFO ", 0) == 0) info.push_back(l);
    EXPECT_EQ(info, c.info);

    Outcome json = run(tool("tune " + c.topology + " --nodes " + std::to_string(c.nodes) + " --format json"));
    ASSERT_EQ(json.rc, 0) << json.out;
    size_t seen = 0;
    for (std::sregex_iterator it(json.out.begin(), json.out.end(), kChoice), end; it != end; ++it) {
      const std::smatch& m = *it;
      std::string key = m[1].str() + " " + m[2].str();
      auto want = c.tune.find(key);
      ASSERT_NE(want, c.tune.end()) << key;
      std::string got = m[3].str() + " " + m[4].str() + " " + strprintf("%.3f", std::stod(m[5].str()));
      EXPECT_EQ(got, want->second) << key;
      ++seen;
    }
    EXPECT_EQ(seen, c.tune.size());
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
