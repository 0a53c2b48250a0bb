// `weft perf COLL`: nccl-tests for weft. Times a collective over a communicator of local ranks
// (--np) or of a launcher's ranks (mpirun, srun, torchrun) and prints nccl-tests' table.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/files.h"
#include "core/base/strings.h"
#include "tools/weft/commands.h"
#include "tools/weft/output.h"
#include "tools/weft/perf_bench.h"
#include "tools/weft/perf_coll.h"
#include "tools/weft/perf_launch.h"
#include "tools/weft/perf_plot.h"

namespace weft::tool {
namespace {

// The flags as typed; nccl-tests' spellings and defaults.
struct PerfArgs {
  std::string coll;
  std::string minBytes = "32M", maxBytes = "32M", stepBytes = "1M";
  size_t stepFactor = 1;
  int iters = 20, warmupIters = 1, aggIters = 1, runCycles = 1, check = 1;
  std::string op = "sum", type = "float", root = "0";
  int blocking = 0, average = 1, cputime = 0;
  int np = 0;
  std::string plot;                    // --plot FILE.svg
  std::vector<std::string> baselines;  // --baseline FILE (saved nccl-tests output), drawn beside the run
};

[[noreturn]] void usage(const std::string& message) {
  std::fprintf(stderr, "weft perf: %s\n", message.c_str());
  throw CLI::RuntimeError(kExitUsage);
}

size_t sizeArg(const char* flag, const std::string& text) {
  auto v = perf::parseSize(text);
  if (!v) usage(std::string(flag) + " " + text + ": not a size (bytes, or a number with K, M or G)");
  return *v;
}

perf::Options optionsFrom(const PerfArgs& a) {
  perf::Options o;
  o.coll = *perf::parseColl(a.coll);
  o.minBytes = sizeArg("-b", a.minBytes);
  o.maxBytes = sizeArg("-e", a.maxBytes);
  o.stepBytes = sizeArg("-i", a.stepBytes);
  o.stepFactor = a.stepFactor;
  if (o.minBytes > o.maxBytes) {
    usage("invalid sizes for 'minbytes' and 'maxbytes': " + std::to_string(o.minBytes) + " > " +
          std::to_string(o.maxBytes));
  }
  if (o.minBytes < o.maxBytes && (o.stepFactor > 1 ? o.minBytes == 0 : o.stepBytes == 0)) {
    usage(o.stepFactor > 1 ? "-b 0 with -f never grows: start at -b 1 or more" : "-i 0 never grows: give -i or -f");
  }
  o.iters = a.iters;
  o.warmupIters = a.warmupIters;
  o.aggIters = a.aggIters;
  o.runCycles = a.runCycles;
  o.check = a.check;
  o.blocking = a.blocking != 0;
  o.average = a.average;
  o.cputime = a.cputime != 0;
  if (o.blocking && o.aggIters > 1) usage("-z 1 waits after each operation, -m > 1 groups them: choose one");
  if (a.type != "all")
    o.types = {*perf::parseType(a.type)};
  else
    o.types = perf::allTypes();
  if (a.op != "all")
    o.ops = {*perf::parseOp(a.op)};
  else
    o.ops = perf::allOps();
  if (a.root == "all") {
    o.root = -1;
  } else {
    char* end = nullptr;
    long r = std::strtol(a.root.c_str(), &end, 10);
    if (a.root.empty() || *end != '\0' || r < -1 || r > 1 << 30)
      usage("-r " + a.root + ": a rank, or -1 (all) for every rank");
    o.root = static_cast<int>(r);
  }
  if (const char* minBw = std::getenv("NCCL_TESTS_MIN_BW")) {
    double v = std::atof(minBw);
    if (v != -1) o.minBusBw = v;  // nccl-tests: -1 means unset
  }
  return o;
}

// The ranks of this job; in the --np parent, also the children to wait for.
perf::Ranks ranksOf(const PerfArgs& a) {
  Result<perf::Ranks> ranks = [&]() -> Result<perf::Ranks> {
    if (a.np > 1) {
      if (auto job = perf::launcherJob()) {
        usage("--np starts the ranks itself, but this process is already one of a launcher's (" + *job +
              "): leave --np out under mpirun, srun or torchrun");
      }
      return perf::forkLocalRanks(a.np);
    }
    if (a.np == 1) {
      perf::Ranks one;
      one.source = "--np";
      weft_result_t r = weft_get_unique_id(&one.id);
      if (r != weftSuccess) return perf::weftError("weft_get_unique_id", r);
      return one;
    }
    return perf::ranksFromEnvironment();
  }();
  if (!ranks.isOk()) {
    std::fprintf(stderr, "weft perf: %s\n", ranks.status().message().c_str());
    throw CLI::RuntimeError(ranks.status().code() == Code::kInvalidUsage ? kExitUsage : kExitFailure);
  }
  return std::move(ranks).value();
}

// A saved nccl-tests (or weft perf) output file as chart lines, labelled by the file's name.
Result<std::vector<perf::PlotSeries>> loadRuns(const std::string& file) {
  WEFT_ASSIGN_OR_RETURN(std::string text, readWholeFile(file));
  return perf::parsePerfOutput(text, std::filesystem::path(file).filename().string());
}

// --baseline files, read before any rank starts: a bad file is said once, and costs no run.
std::vector<perf::PlotSeries> loadBaselines(const PerfArgs& a) {
  std::vector<perf::PlotSeries> out;
  for (const std::string& file : a.baselines) {
    auto runs = loadRuns(file);
    if (!runs.isOk()) usage("--baseline: " + runs.status().message());
    out.insert(out.end(), runs->begin(), runs->end());
  }
  return out;
}

// Rank 0 after its run: the run's rows (and the baselines) to the --plot file.
int writePlot(const PerfArgs& a, const perf::Outcome& outcome, int nranks, std::vector<perf::PlotSeries> lines) {
  std::string program = perf::collInfo(*perf::parseColl(a.coll)).program;
  auto mine = perf::parsePerfOutput(outcome.text, strprintf("weft %s, %d ranks", a.coll.c_str(), nranks));
  Status s = mine.status();
  if (s.isOk()) {
    lines.insert(lines.begin(), mine->begin(), mine->end());
    s = writeFileAtomic(a.plot, perf::busBwChart(lines, program + ": bus bandwidth"));
  }
  if (s.isOk()) return kExitOk;
  std::fprintf(stderr, "weft perf: --plot %s: %s\n", a.plot.c_str(), s.message().c_str());
  return kExitFailure;
}

// One rank's whole run: init, the benchmark, teardown. Returns the exit status.
int runRank(const PerfArgs& a, const perf::Options& o, const perf::Ranks& ranks,
            const std::vector<perf::PlotSeries>& baselines) {
  weft_comm_t* comm = nullptr;
  weft_result_t r = weft_comm_init_rank(&comm, ranks.nranks, ranks.id, ranks.rank);
  if (r != weftSuccess) {
    Status s = perf::weftError("weft_comm_init_rank", r);
    std::fprintf(stderr, "weft perf: rank %d of %d (%s): %s\n", ranks.rank, ranks.nranks, ranks.source.c_str(),
                 s.message().c_str());
    if (comm != nullptr) weft_comm_abort(comm);
    return kExitFailure;
  }
  auto outcome = perf::runBenchmark(o, comm, ranks.rank, ranks.nranks);
  if (!outcome.isOk()) {
    std::fprintf(stderr, "weft perf: %s\n", outcome.status().message().c_str());
    weft_comm_abort(comm);  // the other ranks see a remote error at once instead of waiting
    return kExitFailure;
  }
  r = weft_comm_destroy(comm);
  if (r != weftSuccess) {
    std::fprintf(stderr, "weft perf: rank %d: %s\n", ranks.rank,
                 perf::weftError("weft_comm_destroy", r).message().c_str());
    return kExitFailure;
  }
  int plotted = ranks.rank == 0 && !a.plot.empty() ? writePlot(a, *outcome, ranks.nranks, baselines) : kExitOk;
  return outcome->failed ? kExitFailure : plotted;
}

int runPerf(const PerfArgs& a) {
  perf::Options o = optionsFrom(a);  // before any fork: usage errors are said once
  o.keepText = !a.plot.empty();
  const std::vector<perf::PlotSeries> baselines = loadBaselines(a);
  if (!a.baselines.empty() && a.plot.empty()) usage("--baseline is drawn with --plot FILE.svg: give --plot");
  const bool hasRoot = perf::collInfo(o.coll).hasRoot;
  auto rootMissing = [&](int nranks) {
    return "-r " + std::to_string(o.root) + ": no such rank (ranks 0 to " + std::to_string(nranks - 1) + ")";
  };
  if (hasRoot && a.np > 0 && o.root >= a.np) usage(rootMissing(a.np));
  const perf::Ranks ranks = ranksOf(a);
  int rc = kExitUsage;
  if (hasRoot && o.root >= ranks.nranks) {  // a launcher's ranks: known only now
    if (ranks.rank == 0) std::fprintf(stderr, "weft perf: %s\n", rootMissing(ranks.nranks).c_str());
  } else {
    rc = runRank(a, o, ranks, baselines);
  }
  if (!ranks.children.empty()) {
    // After a failure here the others may wait for this rank: give them 10 s to notice.
    bool childrenOk = perf::waitForChildren(ranks.children, rc == kExitOk ? -1 : 10);
    if (!childrenOk && rc == kExitOk) rc = kExitFailure;
  }
  return rc;
}

constexpr const char* kPerfHelp = R"(
Times COLL on host memory and prints nccl-tests' output (v2.17.6) character for character: the
preamble, one row per size with out-of-place then in-place results, and the footer, so that
scripts written for all_reduce_perf & co. read it as is. Rows are flushed as they complete;
when stdout is a file and the run passes 2 s, stderr says how far it got.

Columns: size (bytes moved per rank, the larger of send and receive), count (the call's count
argument), type, redop ("none" where nothing is reduced), root (-1 where there is none); then,
twice: time per operation (us; -a says how ranks combine), algbw = size / time (GB/s; for
all_gather, reduce_scatter and alltoall, all n blocks), busbw = algbw x factor, #wrong (elements
that differ from the expected result; N/A with -c 0, and for in-place alltoall and sendrecv, as
nccl-tests). busbw factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n;
broadcast, reduce, sendrecv 1: busbw compares with a link's bandwidth whatever n is.

Checks (-c N): every rank fills its input with a deterministic pattern of (seed, rank, index) and
computes the expected result itself, on the host: integers exact (wrapping), floating point bit
for bit (values whose every partial sum or product is exact in the type, in any order), avg of
floating point within 2 ulps, as nccl-tests.

Footer: "# Out of bounds values : N OK|FAILED" counts the checks, over all ranks, that found wrong
elements; "# Avg bus bandwidth    : X" is the mean busbw of every row, out-of-place and in-place.
With NCCL_TESTS_MIN_BW=Y set, the run fails when X < 0.9 Y.

Ranks:
  --np N     this process forks N-1 more; rank 0 (this process) makes the id and prints.
  otherwise  one rank, or one of a launcher's: rank and size from OMPI_COMM_WORLD_RANK/SIZE
             (mpirun), PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS (srun) or RANK/WORLD_SIZE
             (torchrun). The ranks meet at NCCL_COMM_ID=host:port (rank 0's host, a free port),
             else at MASTER_ADDR:MASTER_PORT (MASTER_PORT+1 under torchrun, whose agent holds
             MASTER_PORT). Every NCCL_*/WEFT_* setting applies as in any weft program.

all_reduce, all_gather, broadcast, reduce, reduce_scatter and alltoall call weft's collectives;
where the library does not have one yet, the run stops at the first call with its error and
weft_last_error(), and exits 1.

Examples:
  weft perf sendrecv --np 2 -b 8 -e 64M -f 4            # 8 B to 64 MiB, x4, checked
  weft perf all_reduce --np 4 -b 8 -e 256M -f 2 -d all  # every type
  weft perf reduce --np 4 -o all -r all -b 1M -e 1M     # every op and root, 1 MiB
  NCCL_TESTS_MIN_BW=5 weft perf sendrecv --np 2 -c 0    # fail below 4.5 GB/s
  mpirun -np 16 -x NCCL_COMM_ID=node0:29500 weft perf all_reduce -b 8 -e 1G -f 2
  srun -n 16 --export=ALL,NCCL_COMM_ID=node0:29500 weft perf alltoall -b 1M -e 1G -f 2
  torchrun --nproc-per-node 8 --no-python weft perf all_gather -b 8 -e 128M -f 2
  weft perf all_reduce --np 4 -b 8 -e 64M -f 2 --plot ar.svg --baseline nccl-a100.txt

Plot: --plot FILE.svg draws busbw against size (log scales) of this run, one line per type and
op, beside the --baseline files (saved output of nccl-tests or weft perf, one line each).
`weft perf-plot A.txt B.txt -o cmp.svg` draws saved outputs alone.

Exit status: 0 every check passed (and NCCL_TESTS_MIN_BW was met), 1 wrong results, bandwidth
below NCCL_TESTS_MIN_BW, or a failed weft call (named on stderr), 2 bad usage.)";

}  // namespace

void addPerfCommand(CLI::App& app) {
  static PerfArgs args;
  std::vector<std::string> colls, types{"all"}, ops{"all"};
  for (const auto& c : perf::collectives()) colls.push_back(c.command);
  for (perf::DataType t : perf::allTypes()) types.push_back(perf::typeName(t));
  for (perf::RedOp o : perf::allOps()) ops.push_back(perf::opName(o));

  auto* cmd =
      app.add_subcommand("perf", "nccl-tests for weft: time a collective over N ranks, print nccl-tests' table");
  cmd->footer(kPerfHelp);
  cmd->add_option("COLL", args.coll, "all_reduce, all_gather, broadcast, reduce, reduce_scatter, alltoall or sendrecv")
      ->required()
      ->check(CLI::IsMember(colls));
  cmd->add_option("--np", args.np, "fork N local ranks (default: 1, or the launcher's ranks)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-b,--minbytes", args.minBytes, "smallest size in bytes, K/M/G suffixes (default 32M)");
  cmd->add_option("-e,--maxbytes", args.maxBytes, "largest size (default 32M)");
  cmd->add_option("-i,--stepbytes", args.stepBytes, "add this to the size each row (default 1M; without -f)");
  cmd->add_option("-f,--stepfactor", args.stepFactor, "multiply the size by this each row (default: off, use -i)");
  cmd->add_option("-n,--iters", args.iters, "timed iterations per size (default 20)")->check(CLI::PositiveNumber);
  cmd->add_option("-w,--warmup_iters", args.warmupIters, "untimed iterations per size before the rows (default 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-m,--agg_iters", args.aggIters, "operations per timed iteration, in one group (default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-N,--run_cycles", args.runCycles, "print the rows this many times (default 1; 0 forever)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-c,--check", args.check, "checked iterations per size (default 1; 0: no check, #wrong N/A)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--op", args.op, "reduction: sum, prod, min, max, avg, mulsum or all (default sum)")
      ->check(CLI::IsMember(ops));
  cmd->add_option(
         "-d,--datatype", args.type,
         "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2 or all (default float)")
      ->check(CLI::IsMember(types));
  cmd->add_option("-r,--root", args.root, "root of broadcast and reduce (default 0; -1 or all: each rank in turn)");
  cmd->add_option("-z,--blocking", args.blocking, "1: a barrier after every operation (default 0)")
      ->check(CLI::Range(0, 1));
  cmd->add_option("-a,--average", args.average, "time across ranks: 0 rank 0's, 1 mean, 2 min, 3 max (default 1)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("-C,--report_cputime", args.cputime, "1: label the time column cputime (default 0)")
      ->check(CLI::Range(0, 1));
  cmd->add_option("--plot", args.plot, "draw busbw against size to this SVG file (rank 0)");
  cmd->add_option("--baseline", args.baselines, "saved nccl-tests output to draw beside the run (repeatable)")
      ->check(CLI::ExistingFile);
  cmd->callback([] {
    int rc = runPerf(args);
    if (rc != kExitOk) throw CLI::RuntimeError(rc);
  });
}

void addPerfPlotCommand(CLI::App& app) {
  static std::vector<std::string> files;
  static std::string out, title = "bus bandwidth";
  auto* cmd = app.add_subcommand("perf-plot", "Draw busbw against size from saved nccl-tests / weft perf outputs");
  cmd->footer(
      "Reads the result rows of each FILE (the text nccl-tests' *_perf or weft perf printed; NCCL's\n"
      "INFO lines mixed in are skipped) and draws one line per file (per type and op when a file\n"
      "has several): busbw in GB/s against size in bytes, both on log scales, out-of-place solid,\n"
      "in-place dotted. The chart is an SVG weft writes itself (Graphviz lays out graphs, not axes).\n\n"
      "Example:\n"
      "  weft perf all_reduce --np 4 -b 8 -e 64M -f 2 > weft.txt\n"
      "  weft perf-plot weft.txt nccl-all_reduce.txt -o allreduce.svg --title \"all_reduce, 4 ranks\"");
  cmd->add_option("FILES", files, "saved outputs, one line of the chart each")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", out, "the SVG file to write")->required();
  cmd->add_option("--title", title, "the chart's title");
  cmd->callback([] {
    std::vector<perf::PlotSeries> lines;
    for (const std::string& file : files) {
      auto runs = loadRuns(file);
      if (!runs.isOk()) throw CLI::RuntimeError(fail("weft perf-plot", runs.status()));
      lines.insert(lines.end(), runs->begin(), runs->end());
    }
    if (Status s = writeFileAtomic(out, perf::busBwChart(lines, title)); !s.isOk())
      throw CLI::RuntimeError(fail("weft perf-plot", s));
  });
}

}  // namespace weft::tool
