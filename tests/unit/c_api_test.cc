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

// How far NCCL's rings are from the machine: the bound of both collectives beside the rings,
// and what binds; other collectives are refused.
TEST(CApi, BoundBesideNcclsRings) {
  weft_topo_options_t opts = WEFT_TOPO_OPTIONS_INIT;
  opts.nodes = 2;
  weft_topo_run_t* run = nullptr;
  ASSERT_EQ(weft_topo_run_file(example().c_str(), &opts, &run), weftSuccess) << weft_last_error();
  weft_graph_info_t ring;
  ASSERT_EQ(weft_topo_graph_info(run, WEFT_GRAPH_RING, &ring), weftSuccess);
  for (int coll : {WEFT_COLL_ALLREDUCE, WEFT_COLL_ALLGATHER}) {
    weft_bound_t b;
    ASSERT_EQ(weft_topo_bound(run, coll, &b), weftSuccess) << weft_last_error();
    EXPECT_EQ(b.ring_channels, ring.n_channels);
    EXPECT_FLOAT_EQ(b.rings_gbs, static_cast<float>(b.ring_channels) * b.ring_channel_gbs);
    EXPECT_GT(b.rings_gbs, 0);
    EXPECT_GE(b.bound_gbs, b.rings_gbs);
    EXPECT_GE(b.parts_per_node, 1);
    ASSERT_NE(b.limit, nullptr);
    EXPECT_EQ(std::string(b.limit).rfind("the links into ", 0), 0u) << b.limit;
  }
  weft_bound_t b;
  EXPECT_NE(weft_topo_bound(run, WEFT_COLL_BROADCAST, &b), weftSuccess);
  EXPECT_NE(std::string(weft_last_error()).find("collective 0 has no bound"), std::string::npos) << weft_last_error();
  EXPECT_NE(weft_topo_bound(run, WEFT_COLL_ALLREDUCE, nullptr), weftSuccess);
  weft_topo_run_free(run);
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

namespace {

TEST(CApi, TuneMatchesNcclsChoiceOnTwoNodes) {
  weft_topo_options_t opts = WEFT_TOPO_OPTIONS_INIT;
  opts.nodes = 2;
  weft_topo_run_t* run = nullptr;
  ASSERT_EQ(weft_topo_run_file(example().c_str(), &opts, &run), weftSuccess) << weft_last_error();
  weft_tune_choice_t small, large;
  ASSERT_EQ(weft_topo_tune(run, WEFT_COLL_ALLREDUCE, 8, &small), weftSuccess) << weft_last_error();
  // 16 ranks over NVLink and one NIC per GPU: a tree with LL for tiny sizes (NCCL 2.28's latencies
  // 25.2 µs vs 40.0 for the ring), NVLS trees across the NVSwitches for 1 GiB.
  EXPECT_EQ(small.algo, WEFT_ALGO_TREE);
  EXPECT_EQ(small.proto, WEFT_PROTO_LL);
  EXPECT_STREQ(small.algo_name, "Tree");
  EXPECT_STREQ(small.proto_name, "LL");
  EXPECT_NEAR(small.time_us, 25.2, 0.01);
  EXPECT_EQ(small.channels, 1);
  EXPECT_EQ(small.threads, 640);
  ASSERT_EQ(weft_topo_tune(run, WEFT_COLL_ALLREDUCE, size_t{1} << 30, &large), weftSuccess) << weft_last_error();
  EXPECT_EQ(large.algo, WEFT_ALGO_NVLS_TREE);
  EXPECT_EQ(large.proto, WEFT_PROTO_SIMPLE);
  EXPECT_EQ(large.channels, 16);  // NCCL's NVLS channels on sm90
  EXPECT_GT(large.time_us, small.time_us);
  EXPECT_NE(weft_topo_tune(run, 5, 8, &small), weftSuccess);
  EXPECT_NE(std::string(weft_last_error()).find("collective 5"), std::string::npos);
  EXPECT_NE(weft_topo_tune(run, WEFT_COLL_ALLREDUCE, 8, nullptr), weftSuccess);
  weft_topo_run_free(run);
}

TEST(CApi, TuneGoesThroughTheTunerPluginOfTheRunsSettings) {
  // weft's YAML tuner (build tree) with tests/data/tuner/rules.yaml: line 3 sends AllReduce of
  // 8K-64K to Ring/Simple on 2 channels; other sizes keep NCCL's choice.
  const std::string rules = "WEFT_TUNER_RULES_FILE=" WEFT_SOURCE_DIR "/tests/data/tuner/rules.yaml";
  const char* settings[] = {"NCCL_TUNER_PLUGIN=weft", rules.c_str(), nullptr};
  weft_topo_options_t opts = WEFT_TOPO_OPTIONS_INIT;
  opts.nodes = 2;
  opts.settings = settings;
  weft_topo_run_t* run = nullptr;
  ASSERT_EQ(weft_topo_run_file(example().c_str(), &opts, &run), weftSuccess) << weft_last_error();
  weft_tune_choice_t ruled, kept;
  ASSERT_EQ(weft_topo_tune(run, WEFT_COLL_ALLREDUCE, 16384, &ruled), weftSuccess) << weft_last_error();
  EXPECT_EQ(ruled.algo, WEFT_ALGO_RING);
  EXPECT_EQ(ruled.proto, WEFT_PROTO_SIMPLE);
  EXPECT_EQ(ruled.channels, 2);
  ASSERT_EQ(weft_topo_tune(run, WEFT_COLL_ALLREDUCE, 8, &kept), weftSuccess) << weft_last_error();
  EXPECT_EQ(kept.algo, WEFT_ALGO_TREE);  // as in TuneMatchesNcclsChoiceOnTwoNodes
  EXPECT_EQ(kept.proto, WEFT_PROTO_LL);
  EXPECT_EQ(kept.channels, 1);
  weft_topo_run_free(run);
}

TEST(CApi, TuneFollowsTheRunsSettings) {
  const char* settings[] = {"NCCL_ALGO=ring", "NCCL_PROTO=simple", nullptr};
  weft_topo_options_t opts = WEFT_TOPO_OPTIONS_INIT;
  opts.settings = settings;
  weft_topo_run_t* run = nullptr;
  ASSERT_EQ(weft_topo_run_file(example().c_str(), &opts, &run), weftSuccess) << weft_last_error();
  weft_tune_choice_t c;
  ASSERT_EQ(weft_topo_tune(run, WEFT_COLL_ALLGATHER, 8, &c), weftSuccess) << weft_last_error();
  EXPECT_EQ(c.algo, WEFT_ALGO_RING);
  EXPECT_EQ(c.proto, WEFT_PROTO_SIMPLE);
  weft_topo_run_free(run);
}

}  // namespace
