// `weft perf`: nccl-tests' text and tables. The expected strings are nccl-tests' own
// (shared/reference/nccl-runtime-facts.md §7 and the format strings of nccl-tests 2.17.6
// src/util.cu), written out column by column.
#include "tools/weft/perf_format.h"

#include <gtest/gtest.h>

#include <string>

#include "tools/weft/perf_coll.h"

namespace weft::tool::perf {
namespace {

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(text.substr(start, nl - start));
  EXPECT_EQ(start, text.size()) << "text must end with a newline";
  return out;
}

TEST(PerfFormat, RowMatchesNcclTestsExampleRow) {
  // The facts file's illustrative all_reduce row, out-of-place then in-place.
  std::string row = rowStart(33554432, 8388608, "float", "sum", -1) + rowResult(195.40, 171.72, 300.51, true, 0) +
                    rowResult(195.40, 171.73, 300.52, true, 0);
  EXPECT_EQ(row,
            "    33554432       8388608     float     sum      -1   195.40  171.72  300.51       0   195.40  171.73  "
            "300.52       0");
}

TEST(PerfFormat, RowStartKeepsColumnWidths) {
  EXPECT_EQ(rowStart(8, 2, "float", "none", 0), "           8             2     float    none       0");
  EXPECT_EQ(rowStart(0, 0, "bfloat16", "mulsum", 12), "           0             0  bfloat16  mulsum      12");
}

TEST(PerfFormat, WrongColumnIsNotApplicableWithoutChecks) {
  EXPECT_EQ(rowResult(22.95, 0.0, 0.0, false, 0), "    22.95    0.00    0.00    N/A");
  EXPECT_EQ(rowResult(22.95, 0.0, 0.0, true, 12345), "    22.95    0.00    0.00   12345");
  // %6g: a count of a million or more switches to an exponent.
  EXPECT_EQ(rowResult(1.0, 0.0, 0.0, true, 1234567), "     1.00    0.00    0.00  1.23457e+06");
}

TEST(PerfFormat, FloatStrDropsDecimalsAsTheIntegerPartGrows) {
  // Time column, width 7.
  EXPECT_EQ(floatStr(0.5, 7), "   0.50");
  EXPECT_EQ(floatStr(9999.994, 7), "9999.99");
  EXPECT_EQ(floatStr(22032.1, 7), "22032.1");
  EXPECT_EQ(floatStr(123456.7, 7), " 123457");
  EXPECT_EQ(floatStr(1234567.0, 7), "1234567");
  EXPECT_EQ(floatStr(12345678.0, 7), "1.2e+07");
  // Bandwidth columns, width 6.
  EXPECT_EQ(floatStr(0.0, 6), "  0.00");
  EXPECT_EQ(floatStr(171.72, 6), "171.72");
  EXPECT_EQ(floatStr(1234.5, 6), "1234.5");
  EXPECT_EQ(floatStr(12345.6, 6), " 12346");
  EXPECT_EQ(floatStr(123456.0, 6), "123456");
  EXPECT_EQ(floatStr(1234567.0, 6), " 1e+06");
}

TEST(PerfFormat, HeaderMatchesNcclTests) {
  auto l = lines(tableHeader(false));
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0], "#");
  EXPECT_EQ(
      rstrip(l[1]),
      "#                                                              out-of-place                       in-place");
  EXPECT_EQ(l[2],
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   "
            "busbw  #wrong" +
                std::string(21, ' '));  // " %20s" of ""
  EXPECT_EQ(l[3],
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  "
            "(GB/s)" +
                std::string(8 + 21, ' '));
  // "out-of-place                       in-place          ": the trailing spaces are nccl-tests'.
  EXPECT_EQ(l[1].size(), rstrip(l[1]).size() + 10);
  EXPECT_NE(tableHeader(true).find("cputime   algbw"), std::string::npos);
}

TEST(PerfFormat, FooterSaysOkFailedAndMinimumBandwidth) {
  EXPECT_EQ(footer(0, 300.515, std::nullopt, "all_reduce_perf", ""),
            "# Out of bounds values : 0 OK\n"
            "# Avg bus bandwidth    : 300.515 \n"
            "#\n"
            "# Collective test concluded: all_reduce_perf\n"
            "\n");
  EXPECT_EQ(footer(2, 4.0, 5.0, "sendrecv_perf", "boom"),
            "# Out of bounds values : 2 FAILED\n"
            "# Avg bus bandwidth    : 4 FAILED\n"
            "#\n"
            "# Collective test concluded: sendrecv_perf\n"
            "# error: boom\n");
  EXPECT_NE(footer(0, 4.5, 5.0, "x", "").find("# Avg bus bandwidth    : 4.5 OK\n"), std::string::npos);  // 0.9 x 5
  EXPECT_TRUE(belowMinBandwidth(4.49, 5.0));
  EXPECT_FALSE(belowMinBandwidth(4.5, 5.0));
  EXPECT_FALSE(belowMinBandwidth(0.0, std::nullopt));
}

TEST(PerfFormat, PreambleAndDeviceLines) {
  RunParams p;
  p.program = "sendrecv_perf";
  p.headersVersion = p.libraryVersion = 100;
  p.minBytes = 8;
  p.maxBytes = 67108864;
  p.stepFactor = 4;
  p.warmupIters = 1;
  p.iters = 20;
  p.aggIters = 1;
  p.check = 1;
  EXPECT_EQ(preamble(p),
            "# nccl-tests version 2.17.6 nccl-headers=100 nccl-library=100\n"
            "# Collective test starting: sendrecv_perf\n"
            "# nThread 1 nGpus 1 minBytes 8 maxBytes 67108864 step: 4(factor) warmup iters: 1 iters: 20 agg iters: 1 "
            "validation: 1 graph: 0\n"
            "#\n"
            "# Using devices\n");
  p.stepFactor = 1;
  p.stepBytes = 1048576;
  p.blocking = true;
  EXPECT_NE(preamble(p).find("step: 1048576(bytes)"), std::string::npos);
  EXPECT_NE(preamble(p).find("\n# Blocking Enabled: wait for completion and barrier after each collective \n#\n"),
            std::string::npos);
  EXPECT_EQ(deviceLine(1, 0, 4242, "node7", 3, "host memory (weft)"),
            "#  Rank  1 Group  0 Pid   4242 on      node7 device  3 [0000:00:00] host memory (weft)\n");
}

TEST(PerfColl, CountsFollowNcclTests) {
  // all_gather: blocks of count/n rounded down to 16 bytes; in place at rank * block.
  Counts ag = collCounts(Coll::kAllGather, 1000, 4, 3);
  EXPECT_EQ(ag.param, 332u);
  EXPECT_EQ(ag.send, 332u);
  EXPECT_EQ(ag.recv, 996u);
  EXPECT_EQ(ag.sendInplaceOffset, 332u);
  Counts rs = collCounts(Coll::kReduceScatter, 1000, 4, 3);
  EXPECT_EQ(rs.send, 996u);
  EXPECT_EQ(rs.recv, 332u);
  EXPECT_EQ(rs.recvInplaceOffset, 332u);
  Counts a2a = collCounts(Coll::kAllToAll, 2, 4, 2);  // 8 bytes: nothing left after rounding
  EXPECT_EQ(a2a.param, 0u);
  EXPECT_EQ(a2a.send, 0u);
  Counts ar = collCounts(Coll::kAllReduce, 8388608, 4, 8);
  EXPECT_EQ(ar.send, 8388608u);
  EXPECT_EQ(ar.recv, 8388608u);
}

TEST(PerfColl, BusBandwidthFactors) {
  // 1 GB in 1 s on 4 ranks.
  EXPECT_DOUBLE_EQ(bandwidth(Coll::kAllReduce, 250000000, 4, 1.0, 4).alg, 1.0);
  EXPECT_DOUBLE_EQ(bandwidth(Coll::kAllReduce, 250000000, 4, 1.0, 4).bus, 1.5);
  EXPECT_DOUBLE_EQ(bandwidth(Coll::kAllGather, 62500000, 4, 1.0, 4).alg, 1.0);  // counts all n blocks
  EXPECT_DOUBLE_EQ(bandwidth(Coll::kAllGather, 62500000, 4, 1.0, 4).bus, 0.75);
  EXPECT_DOUBLE_EQ(bandwidth(Coll::kReduceScatter, 62500000, 4, 1.0, 4).bus, 0.75);
  EXPECT_DOUBLE_EQ(bandwidth(Coll::kAllToAll, 62500000, 4, 1.0, 4).bus, 0.75);
  EXPECT_DOUBLE_EQ(bandwidth(Coll::kBroadcast, 250000000, 4, 1.0, 4).bus, 1.0);
  EXPECT_DOUBLE_EQ(bandwidth(Coll::kReduce, 250000000, 4, 1.0, 4).bus, 1.0);
  EXPECT_DOUBLE_EQ(bandwidth(Coll::kSendRecv, 250000000, 4, 0.5, 4).bus, 2.0);
}

TEST(PerfColl, SizesAndSchedules) {
  EXPECT_EQ(parseSize("32M"), size_t{32} << 20);
  EXPECT_EQ(parseSize("1g"), size_t{1} << 30);
  EXPECT_EQ(parseSize("1.5K"), 1536u);
  EXPECT_EQ(parseSize("8"), 8u);
  EXPECT_FALSE(parseSize("8X"));
  EXPECT_FALSE(parseSize("-1"));
  EXPECT_FALSE(parseSize(""));
  EXPECT_EQ(sizeSchedule(8, 67108864, 0, 4).size(), 12u);  // 8 * 4^11 = 32M; 128M is past the end
  EXPECT_EQ(sizeSchedule(8, 67108864, 0, 4).back(), 33554432u);
  EXPECT_EQ(sizeSchedule(1024, 4096, 1024, 1), (std::vector<size_t>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(sizeSchedule(0, 0, 0, 2), (std::vector<size_t>{0}));
  EXPECT_EQ(warmupSchedule(3, 7), (std::vector<size_t>{3, 6}));
  EXPECT_EQ(warmupSchedule(0, 4), (std::vector<size_t>{0, 1, 2, 4}));
}

TEST(PerfColl, NamesRoundTrip) {
  EXPECT_EQ(parseColl("all_reduce"), Coll::kAllReduce);
  EXPECT_STREQ(collInfo(Coll::kSendRecv).program, "sendrecv_perf");
  EXPECT_FALSE(parseColl("allreduce"));
  EXPECT_EQ(allTypes().size(), 12u);
  EXPECT_STREQ(typeName(DataType::kF8e5m2), "f8e5m2");
  EXPECT_EQ(parseType("bfloat16"), DataType::kBfloat16);
  EXPECT_EQ(static_cast<int>(*parseOp("min")), 3);  // ncclMin
  EXPECT_STREQ(opName(RedOp::kMulSum), "mulsum");
}

}  // namespace
}  // namespace weft::tool::perf
