#include "tests/support/log_capture.h"

namespace weft::test {

LogCapture::LogCapture(log::Level level, uint64_t mask, log::Prefix prefix) {
  log::Logger& logger = log::processLogger();
  saved_ = logger.options();
  log::Options o = saved_;
  o.level = level;
  o.mask = mask;
  o.file.clear();
  o.prefix = prefix;
  logger.setOptions(o);
  logger.setSink([this](log::Level lvl, uint64_t, std::string_view line) {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.emplace_back(lvl, std::string(line));
  });
}

LogCapture::~LogCapture() {
  log::Logger& logger = log::processLogger();
  logger.setSink(nullptr);
  logger.setOptions(saved_);
}

std::vector<std::string> LogCapture::lines() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& l : lines_) out.push_back(l.second);
  return out;
}

std::vector<std::string> LogCapture::warnings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& l : lines_)
    if (l.first == log::Level::kWarn) out.push_back(l.second);
  return out;
}

void LogCapture::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  lines_.clear();
}

void WeftTest::SetUp() { capture_ = std::make_unique<LogCapture>(log::Level::kWarn); }

void WeftTest::TearDown() {
  for (const std::string& w : capture_->warnings()) {
    bool ok = false;
    for (const std::string& a : allowed_)
      if (w.find(a) != std::string::npos) ok = true;
    EXPECT_TRUE(ok) << "unexpected WARN: " << w;
  }
  capture_.reset();
}

std::vector<std::string> linesOfRank(const std::vector<std::string>& captured, int rank) {
  std::string prefix = "[" + std::to_string(rank) + "] NCCL INFO ";
  std::vector<std::string> out;
  for (const std::string& l : captured)
    if (l.rfind(prefix, 0) == 0) out.push_back(l.substr(prefix.size()));
  return out;
}

}  // namespace weft::test
