// Benchmark: what a tuner's getCollInfo costs on NCCL's launch path (target: <= 1 µs per call).
// Rows: a trivial plugin built into this program (it zeroes Ring/Simple, nothing else; loaded
// through NCCL_TUNER_PLUGIN=STATIC_PLUGIN's path) as the baseline, and weft's YAML rule tuner
// (libnccl-tuner-weft.so) with a rule file whose matching rule comes first, last of 64, or not
// at all. Each is timed called directly through its ABI table, and through weft's hook (the
// checks of tuner_hook.cc on every answer). Every call starts from a fresh copy of the same
// cost table. Median of 9 runs of 200000 calls, ns per call, thread CPU time.
//
//   build/bench/weft_bench_tuner
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/plugin/tuner_loader.h"

extern "C" {
static weft_result_t trivialInit(void** ctx, uint64_t, size_t, size_t, weft_debug_logger_t, weft_nvl_domain_info_v5_t*,
                                 weft_tuner_constants_v5_t*) {
  static int context;
  *ctx = &context;
  return weftSuccess;
}
static weft_result_t trivialGet(void*, weft_func_t, size_t, int, float** table, int, int, int, int*) {
  reinterpret_cast<float*>(table)[WEFT_ALGO_RING * WEFT_TUNER_NUM_PROTOCOLS + WEFT_PROTO_SIMPLE] = 0.0f;
  return weftSuccess;
}
static weft_result_t trivialFinalize(void*) { return weftSuccess; }
// Exported from the program (ENABLE_EXPORTS) so the loader finds it with dlopen(NULL).
__attribute__((visibility("default"))) extern const weft_tuner_v5_t ncclTunerPlugin_v5;
const weft_tuner_v5_t ncclTunerPlugin_v5 = {
    .name = "trivial", .init = trivialInit, .getCollInfo = trivialGet, .finalize = trivialFinalize};
}

namespace {

using weft::plugin::TunerInstance;
constexpr int kCalls = 200000;
constexpr int kRuns = 9;

double cpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

struct Model {
  float cells[21];
  Model() {
    for (int i = 0; i < 21; ++i) cells[i] = i < 6 ? 10.0f + static_cast<float>(i) : -1.0f;
  }
};

template <typename Call>
double nsPerCall(Call call) {
  const Model model;
  std::vector<double> runs;
  for (int r = 0; r < kRuns; ++r) {
    double t0 = cpuNs();
    for (int i = 0; i < kCalls; ++i) {
      float table[21];
      std::memcpy(table, model.cells, sizeof(table));
      int ch = 0;
      call(table, &ch, static_cast<size_t>(4096 + (i & 1023)));
      asm volatile("" : : "r"(table) : "memory");  // keep the work
    }
    runs.push_back((cpuNs() - t0) / kCalls);
  }
  std::sort(runs.begin(), runs.end());
  return runs[kRuns / 2];
}

std::unique_ptr<TunerInstance> open(const std::string& file) {
  weft::plugin::TunerLoaderOptions o;
  o.pluginDirs = {};
  auto load = weft::plugin::loadTunerPlugin(file, "environment", o);
  if (!load.tuner) {
    std::fprintf(stderr, "cannot load %s: %s\n", file.c_str(), load.failure.toString().c_str());
    std::exit(1);
  }
  static weft_tuner_constants_v5_t constants{};
  weft::plugin::TunerInitArgs args{.nRanks = 16, .nNodes = 2, .constants = &constants, .maxChannels = 32};
  auto inst = weft::plugin::initTuner(load.tuner, args);
  if (!inst) {
    std::fprintf(stderr, "init %s: %s\n", file.c_str(), inst.status().toString().c_str());
    std::exit(1);
  }
  return std::move(*inst);
}

void row(const char* what, TunerInstance& t) {
  double direct = nsPerCall([&](float* c, int* ch, size_t bytes) {
    t.plugin().api().getCollInfo(t.ctx(), 4, bytes, 1, c, 7, 3, 0, ch);
  });
  double hooked = nsPerCall([&](float* c, int* ch, size_t bytes) {
    (void)t.getCollInfo({.func = 4, .bytes = bytes}, c, ch);
  });
  std::printf("| %-44s | %10.1f | %14.1f |\n", what, direct, hooked);
}

std::string rulesFile(int before, bool match) {
  std::string path = "/tmp/weft-tuner-bench-" + std::to_string(getpid()) + ".yaml";
  std::ofstream out(path);
  out << "TUNER_RULES:\n";
  for (int i = 0; i < before; ++i) out << "  - {coll: broadcast, size: " << i << "-" << i << ", algo: ring}\n";
  if (match) out << "  - {coll: allreduce, size: 0-64K, nodes: 2-, algo: tree, proto: ll, channels: 4}\n";
  return path;
}

}  // namespace

int main() {
  std::printf("getCollInfo, ns per call (thread CPU time, median of %d x %d calls)\n\n", kRuns, kCalls);
  std::printf("| %-44s | %10s | %14s |\n", "tuner", "ABI call", "via weft hook");
  std::printf("|%s|%s|%s|\n", std::string(46, '-').c_str(), std::string(12, '-').c_str(), std::string(16, '-').c_str());
  {
    auto t = open("STATIC_PLUGIN");
    row("trivial (zeroes Ring/Simple; baseline)", *t);
  }
  const std::string yaml = std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-tuner-weft.so";
  struct Case { const char* what; int before; bool match; };
  for (Case c : {Case{"weft YAML: rule 1 of 1 fires", 0, true}, Case{"weft YAML: rule 64 of 64 fires", 63, true},
                 Case{"weft YAML: 64 rules, none fires", 64, false}}) {
    std::string path = rulesFile(c.before, c.match);
    setenv("WEFT_TUNER_RULES_FILE", path.c_str(), 1);
    auto t = open(yaml);
    row(c.what, *t);
    std::remove(path.c_str());
  }
  return 0;
}
