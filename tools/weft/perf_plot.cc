#include "tools/weft/perf_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "core/base/strings.h"

namespace weft::tool::perf {
namespace {

std::optional<double> number(const std::string& token) {
  char* end = nullptr;
  double v = std::strtod(token.c_str(), &end);
  if (token.empty() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The columns of one result row, or nothing when the line is not one.
struct Row {
  double bytes = 0;
  std::string key;  // "float sum -1"
  double oop = 0, ip = 0;
  bool hasIp = false;
};

std::optional<Row> parseRow(const std::string& line) {
  if (line.empty() || line[0] == '#') return std::nullopt;
  std::istringstream in(line);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  // 13 columns: size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong;
  // 12 without root (nccl-tests before 2.11).
  size_t rootCols = t.size() == 13 ? 1 : 0;
  if (t.size() != 12 + rootCols) return std::nullopt;
  auto size = number(t[0]), count = number(t[1]), oop = number(t[6 + rootCols]);
  if (!size || !count || !oop) return std::nullopt;
  Row r;
  r.bytes = *size;
  r.key = t[2] + " " + t[3] + (rootCols ? " root " + t[4] : "");
  r.oop = *oop;
  if (auto ip = number(t[10 + rootCols])) {
    r.ip = *ip;
    r.hasIp = true;
  }
  return r;
}

// Points by size, a size seen again averaged (nccl-tests' -N repeats the table).
std::vector<PlotPoint> averaged(const std::map<double, std::pair<double, int>>& sums) {
  std::vector<PlotPoint> out;
  for (const auto& [bytes, s] : sums) out.push_back({bytes, s.first / s.second});
  return out;
}

struct Axis {
  double lo = 0, hi = 1;  // in log units
  double from = 0, to = 1;  // pixels
  double map(double logValue) const { return from + (logValue - lo) / (hi - lo) * (to - from); }
};

std::string sizeLabel(double bytes) {
  static const char* const kUnits[] = {"B", "K", "M", "G", "T"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return strprintf("%g", bytes) + kUnits[u];
}

std::string bwLabel(double gbs) { return strprintf("%g", gbs); }

// A colour-blind-safe palette (Okabe-Ito), then darker and paler ones: 16, so that `-d all`
// (12 types) beside a few baselines draws no two lines alike.
const char* colour(size_t i) {
  static const char* const kColours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
                                         "#000000", "#8c564b", "#7f7f7f", "#bcbd22", "#1f3a93", "#a6761d",
                                         "#66a61e", "#e7298a", "#17becf", "#9467bd"};
  return kColours[i % (sizeof(kColours) / sizeof(kColours[0]))];
}

// About how wide 12-pixel Helvetica draws `text` (its average glyph is 0.55 em wide; 7 pixels
// a character leaves room for wide ones), so that the legend fits in the picture.
double textWidth(const std::string& text) { return 7.0 * static_cast<double>(text.size()); }

std::string polyline(const std::vector<PlotPoint>& pts, const Axis& x, const Axis& y, const char* colour,
                     const char* dash, double width) {
  std::string out;
  std::string points;
  for (const PlotPoint& p : pts) {
    if (p.bytes <= 0 || p.busBw <= 0) continue;
    points += strprintf("%.1f,%.1f ", x.map(std::log2(p.bytes)), y.map(std::log10(p.busBw)));
    out += strprintf("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"", x.map(std::log2(p.bytes)), y.map(std::log10(p.busBw)), width + 1) +
           " fill=\"" + colour + "\"><title>" + sizeLabel(p.bytes) + ": " + strprintf("%g", p.busBw) + " GB/s</title></circle>\n";
  }
  if (points.empty()) return "";
  return "<polyline fill=\"none\" stroke=\"" + std::string(colour) + "\" stroke-width=\"" + strprintf("%g", width) + "\"" +
         (*dash ? std::string(" stroke-dasharray=\"") + dash + "\"" : "") + " points=\"" + points + "\"/>\n" + out;
}

}  // namespace

Result<std::vector<PlotSeries>> parsePerfOutput(std::string_view text, const std::string& name) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::map<double, std::pair<double, int>>, std::map<double, std::pair<double, int>>>> byKey;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    std::optional<Row> r = parseRow(line);
    if (!r) continue;
    if (!byKey.count(r->key)) order.push_back(r->key);
    auto& [oop, ip] = byKey[r->key];
    oop[r->bytes].first += r->oop;
    ++oop[r->bytes].second;
    if (r->hasIp) {
      ip[r->bytes].first += r->ip;
      ++ip[r->bytes].second;
    }
  }
  if (order.empty()) {
    return invalidArgument(name + ": no result rows (nccl-tests' lines of size, count, type, redop, root, "
                                  "then time, algbw, busbw, #wrong out-of-place and in-place)");
  }
  std::vector<PlotSeries> out;
  for (const std::string& key : order) {
    PlotSeries s;
    s.label = order.size() == 1 ? name : name + " (" + key + ")";
    s.outOfPlace = averaged(byKey[key].first);
    s.inPlace = averaged(byKey[key].second);
    out.push_back(std::move(s));
  }
  return out;
}

std::string busBwChart(const std::vector<PlotSeries>& series, const std::string& title) {
  const double left = 80, right = 700, top = 60, bottom = 490, legendRow = 20;
  // The picture grows to hold the legend: its longest label to the right, its rows downwards.
  double legendWidth = textWidth("solid: out-of-place, dotted: in-place");
  for (const PlotSeries& s : series) legendWidth = std::max(legendWidth, 30 + textWidth(s.label));
  const double width = std::max(980.0, right + 20 + legendWidth + 20);
  const double height = std::max(560.0, top + legendRow * static_cast<double>(series.size() + 1) + 30);
  double minB = INFINITY, maxB = 0, minBw = INFINITY, maxBw = 0;
  for (const PlotSeries& s : series) {
    for (const auto* pts : {&s.outOfPlace, &s.inPlace}) {
      for (const PlotPoint& p : *pts) {
        if (p.bytes <= 0 || p.busBw <= 0) continue;
        minB = std::min(minB, p.bytes);
        maxB = std::max(maxB, p.bytes);
        minBw = std::min(minBw, p.busBw);
        maxBw = std::max(maxBw, p.busBw);
      }
    }
  }
  if (maxB == 0) minB = 1, maxB = 1 << 20, minBw = 0.1, maxBw = 10;  // nothing positive: empty axes
  Axis x{std::floor(std::log2(minB)), std::ceil(std::log2(maxB)), left, right};
  if (x.hi <= x.lo) x.lo -= 1, x.hi += 1;
  Axis y{std::floor(std::log10(minBw)), std::ceil(std::log10(maxBw)), bottom, top};
  if (y.hi <= y.lo) y.lo -= 1, y.hi += 1;

  std::string out = strprintf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" ", width,
                        height, width, height) +
                    "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += strprintf("<text x=\"%g\" y=\"30\" font-size=\"16\" font-weight=\"bold\">", left) + xmlEscaped(title) + "</text>\n";
  // Grid and ticks: every power of two along x (fewer when the range is wide), decades and
  // their 2x and 5x along y.
  int step = std::max(1, static_cast<int>(std::ceil((x.hi - x.lo) / 14)));
  for (double e = x.lo; e <= x.hi; e += step) {
    double px = x.map(e);
    out += strprintf("<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"#dddddd\"/>\n", px, top, px, bottom);
    out += strprintf("<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">", px, bottom + 18) + sizeLabel(std::exp2(e)) + "</text>\n";
  }
  for (double d = y.lo; d <= y.hi; ++d) {
    for (double m : {1.0, 2.0, 5.0}) {
      double v = d + std::log10(m);
      if (v > y.hi) break;
      double py = y.map(v);
      out += strprintf("<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" ", left, py, right, py) +
             (m == 1 ? "stroke=\"#cccccc\"/>\n" : "stroke=\"#eeeeee\"/>\n");
      out += strprintf("<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">", left - 6, py + 4) + bwLabel(std::pow(10.0, v)) + "</text>\n";
    }
  }
  out += strprintf("<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#333333\"/>\n", left, top, right - left,
             bottom - top);
  out += strprintf("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">size (bytes, log scale)</text>\n", (left + right) / 2, bottom + 42);
  out += strprintf("<text x=\"20\" y=\"%g\" text-anchor=\"middle\" transform=\"rotate(-90 20 %g)\">busbw (GB/s, log scale)</text>\n",
             (top + bottom) / 2, (top + bottom) / 2);
  // Lines, then the legend.
  for (size_t i = 0; i < series.size(); ++i) {
    out += "<g class=\"series\"><title>" + xmlEscaped(series[i].label) + "</title>\n";
    out += polyline(series[i].outOfPlace, x, y, colour(i), "", 2);
    out += polyline(series[i].inPlace, x, y, colour(i), "2,3", 1);
    out += "</g>\n";
  }
  double ly = top + 6;
  for (size_t i = 0; i < series.size(); ++i, ly += legendRow) {
    out += strprintf("<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke-width=\"2\" ", right + 20, ly, right + 44, ly) + "stroke=\"" +
           colour(i) + "\"/>\n";
    out += strprintf("<text class=\"legend\" x=\"%g\" y=\"%g\">", right + 50, ly + 4) + xmlEscaped(series[i].label) + "</text>\n";
  }
  out += strprintf("<text x=\"%g\" y=\"%g\" fill=\"#555555\">solid: out-of-place, dotted: in-place</text>\n", right + 20, ly + 8);
  out += "</svg>\n";
  return out;
}

}  // namespace weft::tool::perf
