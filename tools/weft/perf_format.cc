#include "tools/weft/perf_format.h"

#include <cstdarg>
#include <cstdio>

namespace weft::tool::perf {
namespace {

[[gnu::format(printf, 1, 2)]] std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, again);
  va_end(again);
  return out;
}

}  // namespace

std::string floatStr(double value, int width) {
  // util.cu counts the integer digits with a uint64_t power of ten; 20 digits is where it would
  // wrap, and far beyond any width used here.
  int power = 0;
  double val = 1;
  for (; value >= val && power < 20; val *= 10) power++;
  if (power < width - 2) return format("%*.2f", width, value);
  if (power < width - 1) return format("%*.1f", width, value);
  if (power < width + 1) return format("%*.0f", width, value);
  if (width >= 7) return format("%*.1e", width, value);
  return format("%*.0e", width, value);
}

std::string preamble(const RunParams& p) {
  std::string out;
  out += format("# nccl-tests version %s nccl-headers=%d nccl-library=%d\n", kNcclTestsVersion, p.headersVersion,
                p.libraryVersion);
  out += format("# Collective test starting: %s\n", p.program.c_str());
  bool factor = p.stepFactor > 1;
  out += format(
      "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d agg iters: %d "
      "validation: %d graph: %d\n",
      1, 1, static_cast<long>(p.minBytes), static_cast<long>(p.maxBytes),
      static_cast<long>(factor ? p.stepFactor : p.stepBytes), factor ? "factor" : "bytes", p.warmupIters, p.iters,
      p.aggIters, p.check, 0);
  if (p.blocking) out += "# Blocking Enabled: wait for completion and barrier after each collective \n";
  out += "#\n";
  out += "# Using devices\n";
  return out;
}

std::string deviceLine(int rank, int group, int pid, std::string_view host, int device, std::string_view name) {
  std::string h(host), n(name);
  return format("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", rank, group, pid, h.c_str(),
                device, 0, 0, 0, n.c_str());
}

std::string tableHeader(bool cputime) {
  const char* time = cputime ? "cputime" : "time";
  std::string out = "#\n";
  out += format("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "",
                "", "", "");
  out += format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %20s\n", "size", "count", "type",
                "redop", "root", time, "algbw", "busbw", "#wrong", time, "algbw", "busbw", "#wrong", "");
  out += format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %20s\n", "(B)", "(elements)", "",
                "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "");
  return out;
}

std::string rowStart(size_t bytes, size_t count, std::string_view type, std::string_view op, int root) {
  std::string t(type), o(op);
  std::string rootName = format("%6i", root);
  return format("%12li  %12li  %8s  %6s  %6s", static_cast<long>(bytes), static_cast<long>(count), t.c_str(), o.c_str(),
                rootName.c_str());
}

std::string rowResult(double timeUs, double algBw, double busBw, bool reportErrors, int64_t wrong) {
  std::string t = floatStr(timeUs, 7), a = floatStr(algBw, 6), b = floatStr(busBw, 6);
  if (!reportErrors) return format("  %7s  %6s  %6s    N/A", t.c_str(), a.c_str(), b.c_str());
  return format("  %7s  %6s  %6s  %6g", t.c_str(), a.c_str(), b.c_str(), static_cast<double>(wrong));
}

bool belowMinBandwidth(double avgBusBw, std::optional<double> minBw) {
  return minBw.has_value() && avgBusBw < *minBw * 0.9;
}

std::string footer(int64_t errors, double avgBusBw, std::optional<double> minBw, std::string_view program,
                   std::string_view lastError) {
  std::string prog(program), err(lastError);
  std::string out = format("# Out of bounds values : %d %s\n", static_cast<int>(errors), errors ? "FAILED" : "OK");
  const char* verdict = !minBw ? "" : belowMinBandwidth(avgBusBw, minBw) ? "FAILED" : "OK";
  out += format("# Avg bus bandwidth    : %g %s\n", avgBusBw, verdict);
  out += "#\n";
  out += format("# Collective test concluded: %s\n", prog.c_str());
  out += err.empty() ? std::string("\n") : format("# error: %s\n", err.c_str());
  return out;
}

}  // namespace weft::tool::perf
