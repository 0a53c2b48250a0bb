// Shared pieces of the loader and adapter tests: where the fake plugins are, and a fixture that
// captures INFO lines and fails on any WARN it was not told to expect.
#pragma once

#include <string>
#include <vector>

#include "core/plugin/net_loader.h"
#include "tests/support/log_capture.h"

namespace weft::test {

// A fake plugin built from tests/plugins, by file name ("libnccl-net-fakev8.so").
inline std::string fakePlugin(const std::string& file) { return std::string(WEFT_TEST_PLUGIN_DIR) + "/" + file; }

// Loader options that see only the fake plugins: no weft builtins unless a test adds some.
inline plugin::NetLoaderOptions fakeOnlyOptions() {
  plugin::NetLoaderOptions o;
  o.pluginDirs = {WEFT_TEST_PLUGIN_DIR};
  o.builtins = {};
  return o;
}

class PluginLogTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const std::string& w : logs_.warnings()) {
      bool allowed = false;
      for (const std::string& a : allowed_) allowed = allowed || w.find(a) != std::string::npos;
      EXPECT_TRUE(allowed) << "unexpected WARN: " << w;
    }
  }
  void expectWarn(std::string fragment) { allowed_.push_back(std::move(fragment)); }
  // The captured lines that contain `fragment`.
  std::vector<std::string> linesWith(const std::string& fragment) const {
    std::vector<std::string> out;
    for (const std::string& l : logs_.lines())
      if (l.find(fragment) != std::string::npos) out.push_back(l);
    return out;
  }

  LogCapture logs_{log::Level::kInfo};
  std::vector<std::string> allowed_;
};

}  // namespace weft::test
