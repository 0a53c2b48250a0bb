// `weft perf`: nccl-tests' benchmark loop (common.cu: TimeTest, BenchTime, startColl) over one
// communicator, through libweft's C API only. Rank 0 prints nccl-tests' text on stdout.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "tools/weft/perf_coll.h"
#include "weft/weft.h"

namespace weft::tool::perf {

// nccl-tests' flags, with its defaults.
struct Options {
  Coll coll = Coll::kAllReduce;
  size_t minBytes = size_t{32} << 20;             // -b
  size_t maxBytes = size_t{32} << 20;             // -e
  size_t stepBytes = size_t{1} << 20;             // -i
  size_t stepFactor = 1;                          // -f (1: step by -i)
  int iters = 20;                                 // -n
  int warmupIters = 1;                            // -w
  int aggIters = 1;                               // -m: operations per timed iteration, in one group
  int runCycles = 1;                              // -N (0: forever)
  int check = 1;                                  // -c: checked iterations per size
  std::vector<DataType> types{DataType::kFloat};  // -d
  std::vector<RedOp> ops{RedOp::kSum};            // -o
  int root = 0;                                   // -r (-1: every root in turn)
  bool blocking = false;                          // -z: a barrier after each operation
  int average = 1;                                // -a: 0 rank 0's time, 1 mean, 2 min, 3 max over ranks
  bool cputime = false;                           // -C: the header says "cputime" (the calls block: same value)
  std::optional<double> minBusBw;                 // NCCL_TESTS_MIN_BW
  bool keepText = false;                          // return rank 0's output in Outcome::text (--plot)
};

struct Outcome {
  int64_t errors = 0;   // checks that found wrong elements, summed over ranks
  double avgBusBw = 0;  // mean busbw over every row, out-of-place and in-place
  bool failed = false;  // errors, or the average below NCCL_TESTS_MIN_BW's 0.9x
  std::string text;     // rank 0, with Options::keepText: everything it printed
};

// Runs the whole test as rank `rank` of `comm` (every rank calls it with the same options). Rank 0
// prints the preamble, the table and the footer; every rank returns the outcome, or the first
// failed call (named, with weft_last_error()).
Result<Outcome> runBenchmark(const Options& options, weft_comm_t* comm, int rank, int nranks);

}  // namespace weft::tool::perf
