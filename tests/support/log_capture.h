// Captures the process logger's output during a test. A test that logs a WARN it did not
// announce with expectWarn() fails in TearDown.
#pragma once

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/base/log.h"

namespace weft::test {

class LogCapture {
 public:
  explicit LogCapture(log::Level level = log::Level::kInfo, uint64_t mask = log::kAll,
                      log::Prefix prefix = log::Prefix::kNccl);
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> lines() const;
  std::vector<std::string> warnings() const;
  void clear();

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<log::Level, std::string>> lines_;
  log::Options saved_;
};

// The lines of `captured` that start with rank `rank`'s "[N] NCCL INFO " prefix, without it.
std::vector<std::string> linesOfRank(const std::vector<std::string>& captured, int rank);

// Base fixture: captures WARN lines and fails the test on any that were not expected.
class WeftTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Allows WARN lines containing `fragment` for the rest of the test.
  void expectWarn(std::string fragment) { allowed_.push_back(std::move(fragment)); }

 private:
  std::unique_ptr<LogCapture> capture_;
  std::vector<std::string> allowed_;
};

}  // namespace weft::test
