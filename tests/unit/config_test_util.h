// Helpers for the settings tests: a temporary folder standing in for $HOME and /etc, so that
// no test reads the real environment, home directory or /etc.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/config/loader.h"

namespace weft::config::test {

class TempTree {
 public:
  TempTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "weft-config-XXXXXX").string();
    root_ = mkdtemp(pattern.data());
    std::filesystem::create_directories(home() + "/.config/weft");
    std::filesystem::create_directories(etc());
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  std::string home() const { return root_ + "/home"; }
  std::string etc() const { return root_ + "/etc"; }
  std::string path(const std::string& rel) const { return root_ + "/" + rel; }

  // Writes `text` to `rel` (relative to the root) and returns the full path.
  std::string write(const std::string& rel, const std::string& text) const {
    std::string p = path(rel);
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  // Inputs that read only this tree and `env`.
  Inputs inputs(EnvMap env = {}) const {
    Inputs in;
    in.env = std::move(env);
    in.homeDir = home();
    in.etcDir = etc();
    return in;
  }

 private:
  std::string root_;
};

// The message of a failed load, or "" (and a test failure) when it succeeded.
inline std::string loadError(const Inputs& in) {
  auto p = Policy::load(in);
  EXPECT_FALSE(p.isOk()) << "expected the load to fail";
  return p.isOk() ? std::string() : p.status().message();
}

}  // namespace weft::config::test
