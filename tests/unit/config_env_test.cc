// The real process environment, read once. This executable holds one test so that the test's
// setenv calls come before the first (and only) snapshot; the variables are restored after.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "core/config/loader.h"
#include "tests/support/log_capture.h"
#include "tests/support/scoped_env.h"

namespace weft::config {
namespace {

using test::ScopedEnv;

using ProcessEnvironmentTest = weft::test::WeftTest;

TEST_F(ProcessEnvironmentTest, SnapshotIsTakenOnceAndKeepsOnlyNcclAndWeftVariables) {
  ScopedEnv crossNic("NCCL_CROSS_NIC", "1");
  ScopedEnv fallback("WEFT_NET_FALLBACK", "deny");
  ScopedEnv other("WEFT_SETTINGS_TEST_UNRELATED", "x");
  ScopedEnv foreign("SETTINGS_TEST_NOT_OURS", "y");

  const EnvMap& env = processEnvironment();
  EXPECT_EQ(env.at("NCCL_CROSS_NIC"), "1");
  EXPECT_EQ(env.at("WEFT_NET_FALLBACK"), "deny");
  EXPECT_EQ(env.at("WEFT_SETTINGS_TEST_UNRELATED"), "x");
  EXPECT_EQ(env.count("SETTINGS_TEST_NOT_OURS"), 0u);

  setenv("NCCL_CROSS_NIC", "0", 1);  // after the snapshot: not seen
  EXPECT_EQ(processEnvironment().at("NCCL_CROSS_NIC"), "1");
  EXPECT_EQ(&processEnvironment(), &env);

  Settings s = Settings::fromEnvironment();
  EXPECT_EQ(s.integer("NCCL_CROSS_NIC"), 1);
  EXPECT_EQ(s.netFallback(), NetFallback::kDeny);
  EXPECT_EQ(s.lookup("NCCL_CROSS_NIC")->where, "env");

  Inputs in = Inputs::fromProcess();
  EXPECT_EQ(in.env, env);
  EXPECT_EQ(in.etcDir, "/etc");
  EXPECT_TRUE(in.yamlPath.empty());
  const passwd* pw = getpwuid(getuid());
  EXPECT_EQ(in.homeDir, pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "");
}

}  // namespace
}  // namespace weft::config
