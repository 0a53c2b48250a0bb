// weft's socket plugin inside the real NCCL 2.28.9 (nccl_one_rank.h; skips without a CUDA
// driver and GPU): a one-rank communicator with NCCL_NET_PLUGIN pointing at
// libnccl-net-weft-socket.so, and NCCL's log checked for the plugin, the ABI version it took (v11)
// and its use as the network.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "tests/integration/nccl_one_rank.h"

namespace {

TEST(NcclLoadsWeftSocketPlugin, OneRankCommunicatorUsesIt) {
  const std::string plugin = std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-net-weft-socket.so";
  setenv("NCCL_NET_PLUGIN", plugin.c_str(), 1);
  setenv("NCCL_NET", "Socket", 1);
  setenv("NCCL_SOCKET_IFNAME", "=lo", 1);
  weft::test::NcclRun run = weft::test::runOneRankNccl("INIT,NET");
  if (!run.skipped.empty()) GTEST_SKIP() << run.skipped;
  ASSERT_EQ(run.error, "") << run.log;
  EXPECT_NE(run.log.find("Loaded net plugin Socket (v11)"), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("helper threads x"), std::string::npos) << "weft's plugin did not log through NCCL";
  EXPECT_NE(run.log.find("Using network Socket"), std::string::npos) << run.log;
}

}  // namespace
