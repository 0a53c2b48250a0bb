// `weft perf --plot` and `weft perf-plot`: bus bandwidth against size, read from nccl-tests'
// output text (weft perf's own, or saved runs of nccl-tests), drawn as an SVG line chart.
//
// The chart is written here, not by Graphviz: dot lays out graphs of nodes and edges and has no
// notion of axes, scales or data points, and a line chart is only a few coordinates to compute.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace weft::tool::perf {

struct PlotPoint {
  double bytes = 0;
  double busBw = 0;  // GB/s
};

// One line of the chart (and its in-place twin).
struct PlotSeries {
  std::string label;
  std::vector<PlotPoint> outOfPlace, inPlace;  // by increasing size; a size measured again is averaged
};

// The result rows of nccl-tests' output (size count type redop root, then time algbw busbw
// #wrong twice; also the older layout without root), one series per type/redop/root
// combination, labelled `name` (plus the combination when there are several). Comment lines
// and anything else (NCCL's INFO lines mixed in) are skipped. Fails when there is no row.
Result<std::vector<PlotSeries>> parsePerfOutput(std::string_view text, const std::string& name);

// busbw (GB/s, log scale) against size (bytes, log scale): a line per series, solid for
// out-of-place, dotted for in-place, a marker per measurement, a legend on the right.
std::string busBwChart(const std::vector<PlotSeries>& series, const std::string& title);

}  // namespace weft::tool::perf
