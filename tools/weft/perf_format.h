// `weft perf`: the text nccl-tests prints (v2.17.6, src/util.cu), character for character, so
// that scripts written for nccl-tests' output read weft's. Pure functions returning the lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weft::tool::perf {

// The nccl-tests release whose output format these functions reproduce.
inline constexpr const char* kNcclTestsVersion = "2.17.6";

// getFloatStr: `value` in `width` characters, with 2, 1 or 0 decimals (fewer as the integer part
// grows), or an exponent when even 0 decimals do not fit.
std::string floatStr(double value, int width);

// The run's parameters as the preamble shows them.
struct RunParams {
  std::string program;  // "sendrecv_perf"
  int headersVersion = 0;
  int libraryVersion = 0;
  size_t minBytes = 0, maxBytes = 0, stepBytes = 0, stepFactor = 1;
  int warmupIters = 0, iters = 0, aggIters = 0, check = 0;
  bool blocking = false;
};
// From "# nccl-tests version" to "# Using devices", each line ending in '\n'.
std::string preamble(const RunParams& p);
// One "#  Rank ..." line under "# Using devices".
std::string deviceLine(int rank, int group, int pid, std::string_view host, int device, std::string_view name);

// "#", then the out-of-place/in-place line and the two column header lines.
std::string tableHeader(bool cputime);
// A row's first columns: size, count, type, redop, root.
std::string rowStart(size_t bytes, size_t count, std::string_view type, std::string_view op, int root);
// One half of a row (out-of-place, then in-place): time (us), algbw, busbw, #wrong ("N/A" when
// the test does not report errors).
std::string rowResult(double timeUs, double algBw, double busBw, bool reportErrors, int64_t wrong);

// The average that NCCL_TESTS_MIN_BW must reach: 0.9 x its value.
bool belowMinBandwidth(double avgBusBw, std::optional<double> minBw);
// "# Out of bounds values", "# Avg bus bandwidth" (with OK/FAILED when NCCL_TESTS_MIN_BW is set),
// "#", "# Collective test concluded", then "# error: <lastError>" or an empty line.
std::string footer(int64_t errors, double avgBusBw, std::optional<double> minBw, std::string_view program,
                   std::string_view lastError);

}  // namespace weft::tool::perf
