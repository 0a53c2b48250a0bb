#include <gtest/gtest.h>

#include "core/base/log.h"
#include "tests/support/log_capture.h"

namespace weft::log {
namespace {

TEST(Log, ParsesNcclDebugLevels) {
  EXPECT_EQ(parseLevel("INFO"), Level::kInfo);
  EXPECT_EQ(parseLevel("info"), Level::kInfo);
  EXPECT_EQ(parseLevel("WARN"), Level::kWarn);
  EXPECT_EQ(parseLevel("TRACE"), Level::kTrace);
  EXPECT_EQ(parseLevel("VERSION"), Level::kVersion);
  EXPECT_EQ(parseLevel("bogus"), Level::kNone);
}

TEST(Log, ParsesSubsystemMasksWithInversion) {
  EXPECT_EQ(parseSubsysMask("GRAPH"), kGraph);
  EXPECT_EQ(parseSubsysMask("init,graph"), kInit | kGraph);
  EXPECT_EQ(parseSubsysMask("^GRAPH"), ~static_cast<uint64_t>(kGraph));
  EXPECT_EQ(parseSubsysMask("ALL"), kAll);
  EXPECT_EQ(parseSubsysMask("NOPE"), 0u);
}

TEST(Log, FiltersBySubsystemButAlwaysShowsWarnings) {
  Logger logger(Options{Level::kInfo, kGraph, Prefix::kRank, ""});
  EXPECT_TRUE(logger.enabled(Level::kInfo, kGraph));
  EXPECT_FALSE(logger.enabled(Level::kInfo, kNet));
  EXPECT_TRUE(logger.enabled(Level::kWarn, kNet));
  EXPECT_FALSE(logger.enabled(Level::kTrace, kGraph));
}

TEST(Log, RankPrefixMatchesReferenceLogs) {
  Logger logger(Options{Level::kInfo, kAll, Prefix::kRank, ""});
  std::vector<std::string> lines;
  logger.setSink([&](Level, uint64_t, std::string_view l) { lines.emplace_back(l); });
  {
    ScopedDevice dev(8);
    logger.emit(Level::kInfo, kGraph, __FILE__, __LINE__, "Pattern %d, crossNic %d", 4, 0);
  }
  logger.emit(Level::kInfo, kGraph, __FILE__, __LINE__, "x\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "[8] NCCL INFO Pattern 4, crossNic 0");
  EXPECT_EQ(lines[1], "[0] NCCL INFO x");
}

TEST(Log, PreformattedLinesPassThroughWholeAndLongLinesAreNotCut) {
  Logger logger(Options{Level::kInfo, kAll, Prefix::kRank, ""});
  std::vector<std::string> lines;
  logger.setSink([&](Level, uint64_t, std::string_view l) { lines.emplace_back(l); });
  std::string path = "GPU/0-1000 :";
  while (path.size() < 3000) path += " GPU/0-2000 (1/20.0/NVL)";
  logger.emit(Level::kInfo, kGraph, __FILE__, __LINE__, "%s", path.c_str());
  logger.emit(Level::kInfo, kGraph, __FILE__, __LINE__, "%s", "100% taken as is\n");
  logger.emit(Level::kInfo, kGraph, __FILE__, __LINE__, "%s and %d", path.c_str(), 5);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "[0] NCCL INFO " + path);
  EXPECT_EQ(lines[1], "[0] NCCL INFO 100% taken as is");
  EXPECT_EQ(lines[2], "[0] NCCL INFO " + path + " and 5");
}

TEST(Log, NcclPrefixCarriesHostPidTidAndWarnLocation) {
  Logger logger(Options{Level::kInfo, kAll, Prefix::kNccl, ""});
  std::vector<std::string> lines;
  logger.setSink([&](Level, uint64_t, std::string_view l) { lines.emplace_back(l); });
  logger.emit(Level::kWarn, kAll, "/a/b/topo.cc", 42, "oops");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(" [0] topo.cc:42 NCCL WARN oops"), std::string::npos) << lines[0];
}

TEST(Log, NcclPrefixLinesAreCutAt1023BytesLikeNcclsBuffer) {
  const std::string longMessage(2000, 'x');
  std::vector<std::string> lines;
  Logger nccl(Options{Level::kInfo, kAll, Prefix::kNccl, ""});
  nccl.setSink([&](Level, uint64_t, std::string_view l) { lines.emplace_back(l); });
  nccl.emit(Level::kInfo, kGraph, __FILE__, __LINE__, "%s", longMessage.c_str());
  Logger rank(Options{Level::kInfo, kAll, Prefix::kRank, ""});
  rank.setSink([&](Level, uint64_t, std::string_view l) { lines.emplace_back(l); });
  rank.emit(Level::kInfo, kGraph, __FILE__, __LINE__, "%s", longMessage.c_str());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].size(), kNcclLineMax);
  EXPECT_EQ(lines[0].back(), 'x');
  EXPECT_EQ(lines[1], "[0] NCCL INFO " + longMessage);  // the reference logs' format: whole
}

TEST(Log, PluginLoggerForwardsThroughTheProcessLogger) {
  weft::test::LogCapture capture(Level::kInfo, kNet);
  weftPluginLog(static_cast<int>(Level::kInfo), kNet, "plugin.c", 1, "NET/Test : %d devices", 2);
  weftPluginLog(static_cast<int>(Level::kInfo), kGraph, "plugin.c", 1, "filtered");
  auto lines = capture.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("NET/Test : 2 devices"), std::string::npos);
}

TEST(Log, RecorderCopiesOrTakesTheLinesOfItsSubsystems) {
  Logger logger(Options{Level::kInfo, kTuning | kInit, Prefix::kRank, ""});
  std::vector<std::string> written;
  logger.setSink([&](Level, uint64_t, std::string_view l) { written.emplace_back(l); });
  std::vector<std::string> copied, taken;
  {
    ScopedRecorder copy(&copied, kTuning);
    logger.emit(Level::kInfo, kTuning, __FILE__, __LINE__, "rule %d", 1);
  }
  {
    ScopedRecorder take(&taken, kTuning, ScopedRecorder::Mode::kTake);
    logger.emit(Level::kInfo, kTuning, __FILE__, __LINE__, "rule %d", 2);
    logger.emit(Level::kInfo, kInit, __FILE__, __LINE__, "not recorded");
    logger.emit(Level::kWarn, kTuning, __FILE__, __LINE__, "warnings are never taken");
  }
  logger.emit(Level::kInfo, kTuning, __FILE__, __LINE__, "after");
  EXPECT_EQ(copied, std::vector<std::string>{"rule 1"});
  EXPECT_EQ(taken, std::vector<std::string>{"rule 2"});
  EXPECT_EQ(written, (std::vector<std::string>{"[0] NCCL INFO rule 1", "[0] NCCL INFO not recorded",
                                               "[0] NCCL WARN warnings are never taken", "[0] NCCL INFO after"}));
}

}  // namespace
}  // namespace weft::log
