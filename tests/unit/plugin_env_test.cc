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

// Every setting a weft plugin reads is in the table under the name the plugin reads, so a YAML
// key reaches it: the OFI provider list and registration mode, the IB address family.
TEST(PluginEnvironment, WeftPluginSettingsFromThePolicyReachTheirPlugins) {
  const std::pair<const char*, const char*> values[] = {
      {"WEFT_OFI_PROVIDER", "efa,tcp"}, {"WEFT_OFI_MR", "always"}, {"WEFT_OFI_CONNECT_TIMEOUT", "5"},
      {"NCCL_IB_ADDR_FAMILY", "AF_INET6"}};
  config::Settings s;
  for (const auto& [name, value] : values) {
    unsetenv(name);
    ASSERT_TRUE(s.set(name, value, config::Source::kYaml, "weft.yaml:1").isOk()) << name;
  }
  exportPluginEnvironment(s);
  for (const auto& [name, value] : values) {
    ASSERT_NE(std::getenv(name), nullptr) << name;
    EXPECT_STREQ(std::getenv(name), value) << name;
    unsetenv(name);
  }
}

}  // namespace
}  // namespace weft::plugin
