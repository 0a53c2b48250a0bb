// `weft tune`'s cost beyond the search: NCCL's cost model plus the choice for all five
// collectives x 28 sizes (8 B - 1 GiB) on 16 nodes of an 8-GPU H100 topology (target: <= 20 ms
// of CPU beyond the search), measured in process (median CPU time of many runs) and as whole
// processes (`weft search --quiet` vs `weft tune`, CPU from wait4), plus one choice per call.
//
//   bench/weft_bench_tune [--weft PATH] [--topo FILE] [--nodes N] [--runs N]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "core/tune/offline.h"
#include "core/tune/select.h"

namespace fs = std::filesystem;

namespace {

constexpr double kTargetMs = 20.0;
constexpr int kSizes = 28;  // 2^3 .. 2^30

struct Args {
  std::string weft;
  std::string topo;
  int nodes = 16;
  int runs = 50;
};

Args parseArgs(int argc, char** argv) {
  Args a;
  fs::path bin = fs::path(argv[0]).parent_path().parent_path();
  a.weft = bin / "tools/weft/weft";
  a.topo = fs::path(WEFT_SOURCE_DIR) / "examples/topologies/hgx-h100-8gpu.xml";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--weft") a.weft = argv[i + 1];
    else if (k == "--topo") a.topo = argv[i + 1];
    else if (k == "--nodes") a.nodes = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--runs") a.runs = std::max(1, std::atoi(argv[i + 1]));
  }
  return a;
}

double cpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Every collective at every size: the work `weft tune` does after the model.
int chooseAll(const weft::tune::Tuned& t) {
  int n = 0;
  for (int f = 0; f < weft::tune::kNumFuncs; ++f) {
    for (int k = 3; k < 3 + kSizes; ++k) {
      weft::tune::Operation op;
      op.func = f;
      op.bytes = std::size_t{1} << k;
      auto c = weft::tune::choose(t.comm, t.model, t.settings, op, nullptr);
      if (!c.isOk()) std::exit(1);
      n += c->nMaxChannels;
    }
  }
  return n;
}

// CPU ms (user + system) of a child process running `argv`, output to /dev/null.
double processCpuMs(const std::vector<std::string>& argv) {
  std::fflush(stdout);  // the child must not write this process's buffered table again
  pid_t pid = fork();
  if (pid == 0) {
    FILE* null = std::freopen("/dev/null", "w", stdout);
    (void)null;
    std::vector<char*> args;
    for (const std::string& s : argv) args.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) * 1e-3; };
  return ms(ru.ru_utime) + ms(ru.ru_stime);
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parseArgs(argc, argv);
  // Measure the computation, not the formatting of lines nobody reads.
  weft::log::Options quiet = weft::log::processLogger().options();
  quiet.level = weft::log::Level::kWarn;
  weft::log::processLogger().setOptions(quiet);
  auto topo = weft::topo::TopoXml::load(a.topo);
  if (!topo.isOk()) {
    std::fprintf(stderr, "%s\n", topo.status().toString().c_str());
    return 1;
  }
  weft::config::Settings settings;
  weft::topo::OfflineOptions o = weft::tune::tuneSearchOptions(a.nodes, settings);

  std::vector<double> search, model, choices, perCall;
  int ranks = 0;
  for (int r = 0; r < a.runs; ++r) {
    double t0 = cpuMs();
    auto comm = weft::tune::simulateComm(*topo, o);
    double t1 = cpuMs();
    if (!comm.isOk()) return 1;
    auto tuned = weft::tune::tuneComm(*comm, settings);
    double t2 = cpuMs();
    if (!tuned.isOk()) return 1;
    chooseAll(*tuned);
    double t3 = cpuMs();
    search.push_back(t1 - t0);
    model.push_back(t2 - t1);
    choices.push_back(t3 - t2);
    perCall.push_back((t3 - t2) * 1e3 / (weft::tune::kNumFuncs * kSizes));
    ranks = tuned->comm.nRanks;
  }
  double beyond = median(model) + median(choices);
  std::printf("weft tune on %s, %d nodes (%d ranks), 5 collectives x %d sizes, median of %d runs (CPU time)\n\n",
              a.topo.c_str(), a.nodes, ranks, kSizes, a.runs);
  auto row = [](const std::string& label, double ms, const char* note) {
    std::printf("| %-42s | %8.3f |%s\n", label.c_str(), ms, note);
  };
  std::printf("| %-42s | %8s |\n|:%s|---------:|\n", "phase (in process)", "cpu ms", std::string(43, '-').c_str());
  row("search + connect (simulateComm)", median(search), "");
  row("model (ncclTopoTuneModel)", median(model), "");
  row(std::to_string(weft::tune::kNumFuncs * kSizes) + " choices (cost table + topoGetAlgoInfo)", median(choices), "");
  row("beyond the search (model + choices)", beyond, beyond <= kTargetMs ? "  target <= 20 ms: met" : "  target <= 20 ms: MISSED");
  row("one choice, in us", median(perCall), "");
  std::printf("\n");

  std::string n = std::to_string(a.nodes);
  std::vector<double> procSearch, procTune;
  for (int r = 0; r < std::min(a.runs, 11); ++r) {
    procSearch.push_back(processCpuMs({a.weft, "search", a.topo, "--nodes", n, "--patterns", "ring,tree,nvls", "--quiet"}));
    procTune.push_back(processCpuMs({a.weft, "tune", a.topo, "--nodes", n}));
  }
  double s = median(procSearch), t = median(procTune);
  if (s < 0 || t < 0) {
    std::printf("(processes: %s did not run)\n", a.weft.c_str());
    return 0;
  }
  std::printf("| process (median of %2zu)                                   |   cpu ms |\n", procSearch.size());
  std::printf("|:----------------------------------------------------------|---------:|\n");
  std::printf("| weft search TOPO --nodes %-3s --patterns ring,tree,nvls -q | %8.2f |\n", n.c_str(), s);
  std::printf("| weft tune TOPO --nodes %-3s (table + 140 choices, text)    | %8.2f |\n", n.c_str(), t);
  std::printf("| difference                                                | %8.2f |  target <= %.0f ms: %s\n", t - s,
              kTargetMs, t - s <= kTargetMs ? "met" : "MISSED");
  return 0;
}
