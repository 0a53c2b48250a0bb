// `weft info --config`, run as a process with an empty environment and a temporary $HOME and
// /etc, so that neither the real environment nor the real files are read.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/config/render.h"
#include "tests/support/log_capture.h"
#include "tests/unit/config_test_util.h"

namespace weft::config {
namespace {

using test::TempTree;

struct ToolRun {
  int code = -1;
  std::string out;
  std::string err;
};

class InfoToolTest : public weft::test::WeftTest {
 protected:
  // Runs `env -i ENV weft info ARGS` with this tree as $HOME and /etc.
  ToolRun run(const std::string& env, const std::string& args) {
    std::string errFile = tree_.path("stderr.txt");
    std::string cmd = "env -i " + env + " " WEFT_BINARY_DIR "/tools/weft/weft info " + args + " --home " +
                      tree_.home() + " --etc " + tree_.etc() + " 2>" + errFile;
    ToolRun r;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream e(errFile);
    std::stringstream ss;
    ss << e.rdbuf();
    r.err = ss.str();
    return r;
  }

  // The output line of one setting.
  static std::string row(const std::string& out, const std::string& name) {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind(name + " ", 0) == 0) return line;
    return "";
  }

  TempTree tree_;
};

constexpr const char* kPolicy = R"(# test policy
ALGO: Ring
MAX_NCHANNELS: 8
profiles:
  - match: {nodes: 1-2}
    settings: {MAX_NCHANNELS: 32}
  - match: {nodes: 4+, arch: sm90}
    settings: {MAX_NCHANNELS: 16}
)";

TEST_F(InfoToolTest, ListsEverySettingWithValueAndSource) {
  std::string yaml = tree_.write("p.yaml", kPolicy);
  tree_.write("etc/nccl.conf", "NCCL_PROTO=Simple\n");
  ToolRun r = run("NCCL_CROSS_NIC=1", "--config --yaml " + yaml + " --nodes 4 --arch sm90");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const SettingDef& d : table()) EXPECT_NE(row(r.out, std::string(d.name)), "") << d.name;
  EXPECT_NE(row(r.out, "NCCL_CROSS_NIC").find(" 1 "), std::string::npos);
  EXPECT_NE(row(r.out, "NCCL_CROSS_NIC").find(" env "), std::string::npos);
  EXPECT_NE(row(r.out, "NCCL_ALGO").find(yaml + ":2"), std::string::npos) << row(r.out, "NCCL_ALGO");
  EXPECT_NE(row(r.out, "NCCL_MAX_NCHANNELS").find("profile[1] " + yaml + ":8"), std::string::npos);
  EXPECT_NE(row(r.out, "NCCL_PROTO").find(tree_.etc() + "/nccl.conf:1"), std::string::npos);
  EXPECT_NE(row(r.out, "NCCL_NET_GDR_READ").find("-2"), std::string::npos);
  EXPECT_NE(r.out.find("profile[0] " + yaml + ":5 (nodes=1-2): does not apply: nodes is 4, not 1-2"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("profile[1] " + yaml + ":7 (nodes=4+, arch=sm90): applies"), std::string::npos) << r.out;
}

TEST_F(InfoToolTest, ExplainShowsEverySourceAndTheWinner) {
  std::string yaml = tree_.write("p.yaml", kPolicy);
  tree_.write("home/.nccl.conf", "NCCL_MAX_NRINGS=4\n");
  ToolRun r = run("", "--config --yaml " + yaml + " --nodes 4 --explain NCCL_MAX_NCHANNELS");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("NCCL_MAX_NCHANNELS = 8\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  * 8                " + yaml + ":3   <- wins"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    4                " + tree_.home() + "/.nccl.conf:1 as NCCL_MAX_NRINGS"), std::string::npos);
  EXPECT_NE(r.out.find("    -2               default"), std::string::npos);
  // Neither profile applies: one tests the wrong node count, the other an unknown arch.
  EXPECT_NE(r.out.find("32               profile[0] " + yaml + ":6: nodes is 4, not 1-2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16               profile[1] " + yaml + ":8: arch is unknown (match wants sm90)"),
            std::string::npos) << r.out;
}

TEST_F(InfoToolTest, JsonForTools) {
  std::string yaml = tree_.write("p.yaml", kPolicy);
  ToolRun r = run("NCCL_BOGUS=1", "--config --yaml " + yaml + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_NE(r.out.find("{\"name\":\"NCCL_ALGO\",\"value\":\"Ring\",\"source\":\"" + yaml + ":2\""), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"ignored\":[{\"name\":\"NCCL_BOGUS\",\"where\":\"env\",\"suggestion\":null}]"),
            std::string::npos);
  EXPECT_NE(r.out.find("\"facts\":{\"host\":null,\"nodes\":null,"), std::string::npos);
  int depth = 0;
  for (char c : r.out) depth += c == '{' || c == '[' ? 1 : c == '}' || c == ']' ? -1 : 0;
  EXPECT_EQ(depth, 0);
  ToolRun e = run("", "--config --yaml " + yaml + " --format json --explain ALGO");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("\"history\":[{\"value\":\"Ring\",\"source\":\"yaml\""), std::string::npos) << e.out;
}

TEST_F(InfoToolTest, MarkdownIsTheReference) {
  ToolRun r = run("", "--config --format markdown");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, renderReference());
}

TEST_F(InfoToolTest, LoadErrorsExitOneWithTheMessageOnStderr) {
  std::string yaml = tree_.write("bad.yaml", "MAX_NCHANNELS: 0\n");
  ToolRun r = run("", "--config --yaml " + yaml);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "weft info: " + yaml +
                       ":1:16: MAX_NCHANNELS: bad value \"0\": out of range; expected an integer >= 1 or -2 (auto)\n");
  ToolRun env = run("NCCL_P2P_LEVEL=far", "--config");
  EXPECT_EQ(env.code, 1);
  EXPECT_NE(env.err.find("env: NCCL_P2P_LEVEL: bad value \"far\": not a path type"), std::string::npos) << env.err;
}

TEST_F(InfoToolTest, UsageErrorsExitTwo) {
  EXPECT_EQ(run("", "").code, 2);
  ToolRun explain = run("", "--config --explain MAX_NCHANELS");
  EXPECT_EQ(explain.code, 2);
  EXPECT_EQ(explain.err, "weft info: --explain: unknown setting MAX_NCHANELS (did you mean MAX_NCHANNELS?)\n");
  ToolRun arch = run("", "--config --arch hopper");
  EXPECT_EQ(arch.code, 2);
  EXPECT_EQ(arch.err, "weft info: --arch: bad GPU architecture \"hopper\" (expected smXX, as in sm90)\n");
  EXPECT_EQ(run("", "--config --format yaml").code, 2);
  EXPECT_EQ(run("", "--config --nodes zero").code, 2);
  EXPECT_EQ(run("", "--config --bogus").code, 2);
}

TEST_F(InfoToolTest, HelpTeachesTheSourcesAndExitCodes) {
  ToolRun r = run("", "--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--explain TEXT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Sources, highest precedence first: the environment"), std::string::npos);
  EXPECT_NE(r.out.find("Exit status: 0 ok, 1 a settings file or value is wrong"), std::string::npos);
}

TEST_F(InfoToolTest, ExamplePolicyLoads) {
  ToolRun r = run("", std::string("--config --yaml ") + WEFT_EXAMPLES_DIR "/weft.yaml --host gpu-a17 --nodes 16 --gpus 8 "
                  "--arch sm90 --net IB");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("does not apply"), std::string::npos) << "every profile of the example applies here:\n" << r.out;
}

}  // namespace
}  // namespace weft::config
