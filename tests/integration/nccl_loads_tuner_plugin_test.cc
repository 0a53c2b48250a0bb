// weft's YAML rule tuner inside the real NCCL 2.28.9 (nccl_one_rank.h; skips without a CUDA
// driver and GPU): a one-rank communicator with NCCL_TUNER_PLUGIN pointing at
// libnccl-tuner-weft.so and a rule file, and NCCL's log checked for the plugin, the ABI version
// it took (v5) and the plugin's own line about the rules it read (logged through NCCL's logger).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "tests/integration/nccl_one_rank.h"

namespace {

TEST(NcclLoadsWeftTunerPlugin, OneRankCommunicatorLoadsItsRules) {
  const std::string plugin = std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-tuner-weft.so";
  char rulesPath[] = "/tmp/weft-tuner-rules-XXXXXX";
  int fd = mkstemp(rulesPath);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(rulesPath) << "TUNER_RULES:\n  - {coll: allreduce, size: 0-1M, algo: ring, proto: simple}\n";
  setenv("NCCL_TUNER_PLUGIN", plugin.c_str(), 1);
  setenv("WEFT_TUNER_RULES_FILE", rulesPath, 1);
  weft::test::NcclRun run = weft::test::runOneRankNccl("INIT,TUNING");
  unlink(rulesPath);
  if (!run.skipped.empty()) GTEST_SKIP() << run.skipped;
  ASSERT_EQ(run.error, "") << run.log;
  EXPECT_NE(run.log.find("TUNER/Plugin: Using weft-yaml (v5)"), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("Successfully loaded external tuner plugin"), std::string::npos) << run.log;
  EXPECT_NE(run.log.find(std::string("TUNER/weft: 1 rule from ") + rulesPath), std::string::npos)
      << "weft's tuner did not read its rules or did not log through NCCL:\n"
      << run.log;
}

}  // namespace
