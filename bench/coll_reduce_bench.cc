// Host reduction kernels (core/coll) against memcpy: throughput of reduceInto on 64 MiB arrays
// for float sum, bf16 sum and int32 max, out of place and in place (dst == local, as a ring
// step does), next to a memcpy of the same 64 MiB. Best of several runs, one thread.
//
//   bench/weft_bench_coll_reduce [--mib N] [--runs N]
//
// "GB/s" is the array size over the time (what a collective's bus bandwidth counts); "memory
// GB/s" adds every byte read and written (memcpy: 2x the array, a reduction: 3x), which is the
// number to hold against the machine's memory bandwidth.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/coll/numeric.h"
#include "core/coll/reduce.h"

namespace {

using weft::coll::RedOp;

struct Args {
  size_t mib = 64;
  int runs = 10;
};

Args parseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--mib") a.mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--runs") a.runs = std::atoi(argv[i + 1]);
  }
  return a;
}

// Seconds of the fastest of `runs` calls (after one warm-up call that also faults pages in).
double bestSeconds(int runs, const std::function<void()>& fn) {
  fn();
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

RedOp opOf(int userOp, weft_datatype_t type) {
  auto op = weft::coll::deviceOp(userOp, type, 8);
  if (!op.isOk()) {
    std::fprintf(stderr, "%s\n", op.status().toString().c_str());
    std::exit(1);
  }
  return *op;
}

// Values that keep each type's arithmetic on ordinary numbers (no NaN/Inf fast paths).
void fill(std::vector<uint8_t>& buf, weft_datatype_t type, uint32_t seed) {
  const size_t size = weft::coll::typeSize(type);
  uint32_t x = seed;
  for (size_t i = 0; i < buf.size() / size; ++i) {
    x = x * 1664525u + 1013904223u;
    const double v = double(x >> 8) / double(1u << 24) * 100.0 - 50.0;
    const uint64_t bits = type == weftInt32 ? uint64_t(uint32_t(x)) : weft::coll::elementFromDouble(type, v);
    std::memcpy(buf.data() + i * size, &bits, size);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parseArgs(argc, argv);
  const size_t bytes = args.mib << 20;
  std::vector<uint8_t> local(bytes), remote(bytes), dst(bytes);

  std::printf("coll reduce bench: %zu MiB arrays, best of %d runs, 1 thread\n\n", args.mib, args.runs);
  std::printf("%-28s %10s %10s %14s %10s\n", "case", "ms", "GB/s", "memory GB/s", "vs memcpy");

  const double memcpySec = bestSeconds(args.runs, [&] { std::memcpy(dst.data(), local.data(), bytes); });
  auto row = [&](const char* name, double sec, int streams) {
    std::printf("%-28s %10.2f %10.2f %14.2f %9.0f%%\n", name, sec * 1e3, double(bytes) / sec / 1e9,
                double(bytes) * streams / sec / 1e9, 100.0 * memcpySec / sec);
  };
  row("memcpy", memcpySec, 2);

  struct Case {
    const char* name;
    int userOp;
    weft_datatype_t type;
  };
  const Case cases[] = {
      {"float32 sum", weftSum, weftFloat32},
      {"bfloat16 sum", weftSum, weftBfloat16},
      {"int32 max", weftMax, weftInt32},
  };
  for (const Case& c : cases) {
    const RedOp op = opOf(c.userOp, c.type);
    const size_t n = bytes / weft::coll::typeSize(c.type);
    fill(local, c.type, 1);
    fill(remote, c.type, 2);
    const double outOfPlace = bestSeconds(args.runs, [&] {
      weft::coll::reduceInto(op, dst.data(), local.data(), remote.data(), n, true, true);
    });
    row((std::string(c.name) + " (dst new)").c_str(), outOfPlace, 3);
    // In place the values change every run; Sum and Max stay finite over a few runs.
    const double inPlace = bestSeconds(args.runs, [&] {
      weft::coll::reduceInto(op, local.data(), local.data(), remote.data(), n, true, true);
    });
    row((std::string(c.name) + " (dst = local)").c_str(), inPlace, 3);
  }
  return 0;
}
