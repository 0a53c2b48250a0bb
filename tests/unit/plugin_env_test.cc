// A YAML policy's plugin settings reach the plugins, which read their own environment.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/config/settings.h"
#include "core/plugin/net_loader.h"

namespace weft::plugin {
namespace {

TEST(PluginEnvironment, PolicyValuesAreExportedWithoutOverwritingTheEnvironment) {
  unsetenv("NCCL_NSOCKS_PERTHREAD");
  setenv("NCCL_SOCKET_NTHREADS", "2", 1);
  config::Settings s;
  ASSERT_TRUE(s.set("NCCL_NSOCKS_PERTHREAD", "3", config::Source::kYaml, "weft.yaml:4").isOk());
  ASSERT_TRUE(s.set("NCCL_SOCKET_NTHREADS", "4", config::Source::kYaml, "weft.yaml:5").isOk());
  exportPluginEnvironment(s);
  ASSERT_NE(std::getenv("NCCL_NSOCKS_PERTHREAD"), nullptr);
  EXPECT_STREQ(std::getenv("NCCL_NSOCKS_PERTHREAD"), "3");
  EXPECT_STREQ(std::getenv("NCCL_SOCKET_NTHREADS"), "2") << "the process environment wins, as in NCCL";
  unsetenv("NCCL_NSOCKS_PERTHREAD");
  unsetenv("NCCL_SOCKET_NTHREADS");
}

}  // namespace
}  // namespace weft::plugin
