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

// The weft plugins' own settings are in the table under the names the plugins read, so a
// policy's value is exported under that name (that the OFI plugin then reads
// WEFT_OFI_PROVIDER is checked in net_ofi_abi_test.cc).
TEST(PluginEnvironment, WeftPluginSettingsFromThePolicyAreExportedUnderTheNamesPluginsRead) {
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
