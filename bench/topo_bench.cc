// Topology loading: wall time of load + build System for every 8-GPU corpus topology (median
// and p99 over many runs; target <= 2 ms median), and the peak memory of a `weft topo show`
// process on the largest corpus topology (target < 20 MB; NCCL's fixed-size structures take
// about 70 MB for the same file).
//
//   bench/weft_topo_bench [--weft PATH] [--corpus DIR] [--runs N]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/topo/system_build.h"
#include "core/topo/xml.h"

namespace fs = std::filesystem;

namespace {

constexpr double kTargetMedianMs = 2.0;
constexpr double kTargetPeakMb = 20.0;

struct Args {
  std::string weft;
  fs::path corpus;
  int runs = 1000;
};

Args parseArgs(int argc, char** argv) {
  Args a;
  a.weft = fs::path(argv[0]).parent_path().parent_path() / "tools/weft/weft";
  const char* env = std::getenv("WEFT_CORPUS_DIR");
  a.corpus = env != nullptr && *env != '\0' ? fs::path(env) : fs::path(WEFT_DEFAULT_CORPUS_DIR);
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--weft") a.weft = argv[i + 1];
    else if (k == "--corpus") a.corpus = argv[i + 1];
    else if (k == "--runs") a.runs = std::max(1, std::atoi(argv[i + 1]));
  }
  return a;
}

// What `weft topo show` does before printing: load the file and build the System.
std::optional<int> loadAndBuild(const fs::path& file) {
  auto xml = weft::topo::TopoXml::load(file.string());
  if (!xml.isOk()) return std::nullopt;
  auto system = weft::topo::buildSystem(*xml);
  if (!system.isOk()) return std::nullopt;
  return system->count(weft::topo::NodeType::kGpu);
}

struct Timing {
  double medianMs = 0;
  double p99Ms = 0;
};

Timing percentiles(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  size_t p99 = std::min(ms.size() - 1, static_cast<size_t>(static_cast<double>(ms.size()) * 0.99));
  return {ms[ms.size() / 2], ms[p99]};
}

double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// Wall time, and the thread's CPU time, which leaves out the time other processes took the CPU.
std::pair<Timing, Timing> measure(const fs::path& file, int runs) {
  for (int w = 0; w < 10; ++w) (void)loadAndBuild(file);  // page cache, allocator
  std::vector<double> wall, cpu;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    double cpuStart = threadCpuMs();
    (void)loadAndBuild(file);
    cpu.push_back(threadCpuMs() - cpuStart);
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return {percentiles(wall), percentiles(cpu)};
}

// Peak resident memory (MB) of `weft topo show FILE` run as a child process, from wait4.
double peakMb(const std::string& weft, const fs::path& file) {
  std::fflush(stdout);  // the child must not inherit (and print again) unflushed rows
  pid_t pid = fork();
  if (pid == 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr || std::freopen("/dev/null", "w", stderr) == nullptr) _exit(126);
    execl(weft.c_str(), weft.c_str(), "topo", "show", file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

std::vector<fs::path> topologies(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".xml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Rows for every 8-GPU topology; returns the worst median.
double timeEightGpuTopologies(const std::vector<fs::path>& files, const fs::path& dir, int runs) {
  std::printf("load + build System, 8-GPU corpus topologies (%d runs each, wall time)\n", runs);
  std::printf("%-46s %9s %9s %9s %9s  %s\n", "topology", "median ms", "p99 ms", "cpu med", "cpu p99",
              "target (median <= 2 ms)");
  Timing worst, worstCpu;
  int count = 0;
  for (const fs::path& f : files) {
    if (loadAndBuild(f) != 8) continue;  // not an 8-GPU system weft can build
    auto [wall, cpu] = measure(f, runs);
    worst = {std::max(worst.medianMs, wall.medianMs), std::max(worst.p99Ms, wall.p99Ms)};
    worstCpu = {std::max(worstCpu.medianMs, cpu.medianMs), std::max(worstCpu.p99Ms, cpu.p99Ms)};
    ++count;
    std::printf("%-46s %9.3f %9.3f %9.3f %9.3f  %s\n", fs::relative(f, dir).c_str(), wall.medianMs, wall.p99Ms,
                cpu.medianMs, cpu.p99Ms, wall.medianMs <= kTargetMedianMs ? "ok" : "MISSED");
  }
  std::printf("%-46s %9.3f %9.3f %9.3f %9.3f  %s\n", ("worst of " + std::to_string(count)).c_str(), worst.medianMs,
              worst.p99Ms, worstCpu.medianMs, worstCpu.p99Ms, worst.medianMs <= kTargetMedianMs ? "ok" : "MISSED");
  return worst.medianMs;
}

void peakOfLargest(const std::vector<fs::path>& files, const fs::path& dir, const std::string& weft) {
  std::optional<fs::path> largest;
  for (const fs::path& f : files)
    if (loadAndBuild(f) && (!largest || fs::file_size(f) > fs::file_size(*largest))) largest = f;
  if (!largest) return;
  double mb = peakMb(weft, *largest);
  std::printf("\npeak RSS of `weft topo show` on the largest corpus topology\n");
  std::printf("%-46s %9s %9s  %s\n", "topology", "bytes", "peak MB", "target (< 20 MB)");
  if (mb < 0) {
    std::printf("%-46s could not run %s\n", fs::relative(*largest, dir).c_str(), weft.c_str());
    return;
  }
  std::printf("%-46s %9ju %9.1f  %s\n", fs::relative(*largest, dir).c_str(), static_cast<uintmax_t>(fs::file_size(*largest)), mb,
              mb < kTargetPeakMb ? "ok" : "MISSED");
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parseArgs(argc, argv);
  fs::path dir = a.corpus / "topologies";
  if (!fs::is_directory(dir)) {
    std::printf("corpus not found at %s (set WEFT_CORPUS_DIR or pass --corpus DIR): nothing to measure\n", a.corpus.c_str());
    return 0;
  }
  std::vector<fs::path> files = topologies(dir);
  timeEightGpuTopologies(files, dir, a.runs);
  peakOfLargest(files, dir, a.weft);
  return 0;
}
