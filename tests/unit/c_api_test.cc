// The C ABI of libweft, used as an embedding runtime would: through include/weft/*.h only.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "weft/topo.h"
#include "weft/weft.h"

extern "C" int weftCHeadersCompile(void);

namespace {

std::string example() { return std::string(WEFT_SOURCE_DIR) + "/examples/topologies/hgx-h100-8gpu.xml"; }

TEST(CApi, VersionAndResultStrings) {
  EXPECT_STREQ(weft_version_string(), "0.1.0");
  EXPECT_EQ(weft_version_code(), 100);
  EXPECT_STREQ(weft_result_string(weftInvalidArgument), "invalid argument");
  EXPECT_EQ(weftCHeadersCompile(), 1);
}

TEST(CApi, RunsTheExampleOnTwoNodes) {
  weft_topo_options_t opts = WEFT_TOPO_OPTIONS_INIT;
  opts.nodes = 2;
  weft_topo_run_t* run = nullptr;
  ASSERT_EQ(weft_topo_run_file(example().c_str(), &opts, &run), weftSuccess) << weft_last_error();
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(weft_topo_gpus_per_node(run), 8);
  weft_graph_info_t ring;
  ASSERT_EQ(weft_topo_graph_info(run, WEFT_GRAPH_RING, &ring), weftSuccess);
  EXPECT_EQ(ring.pattern, 4);
  ASSERT_GT(ring.n_channels, 0);
  int ranks[8];
  int64_t in = -1, out = -1;
  ASSERT_EQ(weft_topo_graph_channel(run, WEFT_GRAPH_RING, 0, ranks, &in, &out), weftSuccess);
  bool seen[8] = {};
  for (int r : ranks) {
    ASSERT_GE(r, 0);
    ASSERT_LT(r, 8);
    seen[r] = true;
  }
  for (bool s : seen) EXPECT_TRUE(s) << "a ring channel visits every rank of the node";
  EXPECT_NE(weft_topo_graph_channel(run, WEFT_GRAPH_RING, ring.n_channels, ranks, nullptr, nullptr), weftSuccess);
  EXPECT_NE(std::string(weft_last_error()).find("channel"), std::string::npos);

  char* xml = nullptr;
  ASSERT_EQ(weft_topo_graphs_xml(run, &xml), weftSuccess);
  EXPECT_EQ(std::strncmp(xml, "<graphs version=\"1\">", 20), 0);
  weft_free(xml);
  char* log = nullptr;
  ASSERT_EQ(weft_topo_log(run, &log), weftSuccess);
  EXPECT_NE(std::string(log).find("[0] NCCL INFO === System : maxBw"), std::string::npos);
  EXPECT_NE(std::string(log).find("[0] NCCL INFO Pattern 4"), std::string::npos);
  weft_free(log);
  weft_topo_run_free(run);
}

TEST(CApi, SettingsApplyAndBadOnesAreErrors) {
  const char* settings[] = {"NCCL_CROSS_NIC=1", nullptr};
  weft_topo_options_t opts = WEFT_TOPO_OPTIONS_INIT;
  opts.nodes = 2;
  opts.settings = settings;
  weft_topo_run_t* run = nullptr;
  ASSERT_EQ(weft_topo_run_file(example().c_str(), &opts, &run), weftSuccess) << weft_last_error();
  weft_graph_info_t ring;
  ASSERT_EQ(weft_topo_graph_info(run, WEFT_GRAPH_RING, &ring), weftSuccess);
  EXPECT_EQ(ring.cross_nic, 1);
  weft_topo_run_free(run);

  const char* bad[] = {"NCCL_CROSS_NIC", nullptr};
  opts.settings = bad;
  EXPECT_EQ(weft_topo_run_file(example().c_str(), &opts, &run), weftInvalidArgument);
  EXPECT_EQ(run, nullptr);
  EXPECT_NE(std::string(weft_last_error()).find("expected NAME=VALUE"), std::string::npos);
}

TEST(CApi, MalformedXmlSaysWhere) {
  const char* text = "<system version=\"1\">\n  <cpu numaid=\"0\"\n</system>\n";
  weft_topo_run_t* run = nullptr;
  EXPECT_EQ(weft_topo_run_xml(text, std::strlen(text), "mine.xml", nullptr, &run), weftInvalidArgument);
  EXPECT_EQ(run, nullptr);
  EXPECT_NE(std::string(weft_last_error()).find("mine.xml:"), std::string::npos) << weft_last_error();
  EXPECT_EQ(weft_topo_run_file("/nonexistent/topo.xml", nullptr, &run), weftSystemError);
}

}  // namespace
