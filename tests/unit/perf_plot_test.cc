// `weft perf --plot` / `weft perf-plot`: the rows read back from nccl-tests' text (as weft perf
// prints it with the format functions, with NCCL's INFO lines mixed in as in real logs), and
// the chart's lines and markers where the values put them.
#include "tools/weft/perf_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include <pugixml.hpp>

#include "tools/weft/perf_format.h"

namespace weft::tool::perf {
namespace {

std::string row(size_t bytes, const char* type, const char* op, int root, double oopBus, double ipBus) {
  return rowStart(bytes, bytes / 4, type, op, root) + rowResult(12.5, oopBus / 2, oopBus, true, 0) +
         rowResult(13.5, ipBus / 2, ipBus, true, 0) + "\n";
}

std::string table(const std::string& rows) {
  RunParams p;
  p.program = "all_reduce_perf";
  return preamble(p) + "host:1:1 [0] NCCL INFO Channel 00/02 : 0 1\n" + tableHeader(false) + rows +
         "host:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Destroy COMPLETE\n" +
         footer(0, 1.0, std::nullopt, "all_reduce_perf", "");
}

TEST(PerfPlot, ReadsTheRowsOfNcclTestsTextAndSkipsEverythingElse) {
  auto series = parsePerfOutput(table(row(1024, "float", "sum", -1, 0.5, 0.25) + row(1048576, "float", "sum", -1, 40.25, 41)),
                                "run");
  ASSERT_TRUE(series.isOk()) << series.status().toString();
  ASSERT_EQ(series->size(), 1u);
  const PlotSeries& s = series->front();
  EXPECT_EQ(s.label, "run");
  ASSERT_EQ(s.outOfPlace.size(), 2u);
  EXPECT_EQ(s.outOfPlace[0].bytes, 1024);
  EXPECT_DOUBLE_EQ(s.outOfPlace[0].busBw, 0.5);
  EXPECT_DOUBLE_EQ(s.outOfPlace[1].busBw, 40.25);
  ASSERT_EQ(s.inPlace.size(), 2u);
  EXPECT_DOUBLE_EQ(s.inPlace[1].busBw, 41);
}

TEST(PerfPlot, OneSeriesPerTypeAndOpRepeatedSizesAveraged) {
  std::string rows = row(64, "float", "sum", -1, 1, 1) + row(64, "int8", "max", -1, 3, 3) + row(64, "float", "sum", -1, 2, 2);
  auto series = parsePerfOutput(table(rows), "r");
  ASSERT_TRUE(series.isOk());
  ASSERT_EQ(series->size(), 2u);
  EXPECT_EQ((*series)[0].label, "r (float sum root -1)");
  EXPECT_EQ((*series)[1].label, "r (int8 max root -1)");
  ASSERT_EQ((*series)[0].outOfPlace.size(), 1u);
  EXPECT_DOUBLE_EQ((*series)[0].outOfPlace[0].busBw, 1.5);
}

TEST(PerfPlot, OlderLayoutWithoutRootAndNotApplicableInPlace) {
  // nccl-tests before 2.11 had no root column; sendrecv's in-place half says N/A for #wrong.
  auto series = parsePerfOutput("     1048576        262144     float     sum    10.0  104.86  104.86  N/A    9.0  116.51  116.51  N/A\n",
                                "old");
  ASSERT_TRUE(series.isOk()) << series.status().toString();
  EXPECT_EQ(series->front().label, "old");
  EXPECT_DOUBLE_EQ(series->front().outOfPlace.at(0).busBw, 104.86);
  EXPECT_DOUBLE_EQ(series->front().inPlace.at(0).busBw, 116.51);
}

TEST(PerfPlot, TextWithoutRowsIsAnErrorNamingTheRun) {
  auto series = parsePerfOutput(table(""), "empty.txt");
  ASSERT_FALSE(series.isOk());
  EXPECT_NE(series.status().message().find("empty.txt: no result rows"), std::string::npos);
}

// The polyline points of each series, in chart coordinates.
std::vector<std::vector<std::pair<double, double>>> polylines(const std::string& svg) {
  pugi::xml_document doc;
  EXPECT_TRUE(doc.load_string(svg.c_str()));
  std::vector<std::vector<std::pair<double, double>>> out;
  for (const pugi::xpath_node& n : doc.select_nodes("//polyline")) {
    std::vector<std::pair<double, double>> pts;
    std::string text = n.node().attribute("points").value();
    double x, y;
    for (const char* p = text.c_str(); std::sscanf(p, "%lf,%lf", &x, &y) == 2;) {
      pts.emplace_back(x, y);
      p = std::strchr(p, ' ');
      if (p == nullptr) break;
      ++p;
    }
    out.push_back(pts);
  }
  return out;
}

TEST(PerfPlot, ChartPutsPointsOnLogScalesOneLinePerSeries) {
  PlotSeries a{"a", {{1024, 1}, {4096, 10}, {16384, 100}}, {}};
  PlotSeries b{"b", {{1024, 2}, {16384, 20}}, {{1024, 3}}};
  std::string svg = busBwChart({a, b}, "t & t");
  auto lines = polylines(svg);
  ASSERT_EQ(lines.size(), 3u);  // a, b out-of-place, b in-place
  ASSERT_EQ(lines[0].size(), 3u);
  // Sizes x4 apart are evenly spaced; busbw x10 apart too (log scales), and larger is higher.
  EXPECT_NEAR(lines[0][1].first - lines[0][0].first, lines[0][2].first - lines[0][1].first, 0.2);
  EXPECT_NEAR(lines[0][0].second - lines[0][1].second, lines[0][1].second - lines[0][2].second, 0.2);
  EXPECT_GT(lines[0][0].second, lines[0][1].second);
  // b's 2 GB/s sits log10(2) of a decade above a's 1 GB/s.
  double decade = lines[0][0].second - lines[0][1].second;
  EXPECT_NEAR(lines[0][0].second - lines[1][0].second, decade * std::log10(2.0), 0.2);
  EXPECT_NE(svg.find("t &amp; t"), std::string::npos);
  EXPECT_NE(svg.find(">a</text>"), std::string::npos);
  EXPECT_NE(svg.find(">b</text>"), std::string::npos);
}

TEST(PerfPlot, ZeroBandwidthRowsAreNotDrawnOnALogScale) {
  PlotSeries a{"a", {{8, 0}, {1024, 1}, {4096, 2}}, {}};
  auto lines = polylines(busBwChart({a}, "t"));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].size(), 2u);
}


// `weft perf -d all --plot` beside a baseline: 13 lines with long labels. The legend stays inside
// the picture and no two lines share a colour.
TEST(PerfPlot, LegendOfManyLongLabelsFitsInThePictureEachLineItsColour) {
  std::vector<PlotSeries> many;
  for (int i = 0; i < 13; ++i)
    many.push_back({"weft all_reduce, 2 ranks (bfloat16 sum root -1) #" + std::to_string(i), {{1024, 1.0 + i}}, {}});
  std::string svg = busBwChart(many, "t");
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(svg.c_str()));
  double width = doc.child("svg").attribute("width").as_double(), height = doc.child("svg").attribute("height").as_double();
  std::set<std::string> colours;
  for (const pugi::xpath_node& n : doc.select_nodes("//polyline")) colours.insert(n.node().attribute("stroke").value());
  EXPECT_EQ(colours.size(), 13u);
  int legends = 0;
  for (const pugi::xpath_node& n : doc.select_nodes("//text[@class='legend']")) {
    ++legends;
    double x = n.node().attribute("x").as_double(), y = n.node().attribute("y").as_double();
    // 12-pixel Helvetica draws no glyph wider than 7 pixels on average.
    EXPECT_LE(x + 7.0 * std::string(n.node().child_value()).size(), width) << n.node().child_value();
    EXPECT_LE(y, height);
  }
  EXPECT_EQ(legends, 13);
}

}  // namespace
}  // namespace weft::tool::perf
