// weft_bench_hop: the floor under a small collective on this machine. N forked processes pass a
// token around a ring through one shared cache line per link, each waiting with weft's own
// Waiter (core/runtime/waiter.h: spin, then yield; yield at once when the ranks outnumber the
// CPUs), which is what one step of an 8-byte ring allreduce costs when nothing else is done. NCCL's
// ring allreduce of one chunk is 2(N-1) such dependent hops, so 2(N-1) x hop is the least an
// 8-byte allreduce can take with NCCL's schedule; bench/README.md ("Small collectives") compares
// it with weft's and Open MPI's measured latency.
//
// usage: weft_bench_hop [--ranks 2,4,8] [--hops 400000] [--reps 3] [--timeout 60]
// prints: RESULT test=hop ranks=N rep=I hops=H us_per_hop=X ring_allreduce_floor_us=Y
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/comm/util.h"
#include "core/runtime/waiter.h"

namespace {

struct alignas(64) Line {
  std::atomic<long> round{-1};
};

// Rank i waits until its upstream neighbour has passed the token in `round`, then passes it on.
// Rank 0 starts each round, so it waits for the previous round of rank n-1.
int rankBody(Line* lines, int n, int i, long rounds) {
  weft::runtime::Waiter waiter(n);
  const int prev = (i + n - 1) % n;
  for (long r = 0; r < rounds; ++r) {
    long want = i == 0 ? r - 1 : r;
    if (!(i == 0 && r == 0)) {
      while (lines[prev].round.load(std::memory_order_acquire) != want) {
        auto ok = [] { return weft::Status::ok(); };
        auto idle = [] { return true; };
        (void)waiter.idle(nullptr, ok, idle);
      }
      waiter.moved();
    }
    lines[i].round.store(r, std::memory_order_release);
  }
  return 0;
}

// One timed run of `hops` hops among n processes; returns us per hop, or a negative value when a
// rank failed or the deadline passed.
double runOnce(int n, long hops, int timeoutSeconds) {
  void* mem = mmap(nullptr, sizeof(Line) * static_cast<size_t>(n), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
  auto* lines = static_cast<Line*>(mem);
  for (int i = 0; i < n; ++i) new (&lines[i]) Line();
  const long rounds = std::max(1L, hops / n);
  std::vector<pid_t> pids;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(static_cast<unsigned>(timeoutSeconds));  // a lost token ends the rank, not the machine
      _exit(rankBody(lines, n, i, rounds));
    }
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    pids.push_back(pid);
  }
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ok = false;
  }
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  munmap(mem, sizeof(Line) * static_cast<size_t>(n));
  return ok ? us / static_cast<double>(rounds * n) : -1.0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace weft::bench::comm;
  std::vector<int> ranks{2, 4, 8};
  long hops = 400000;
  int reps = 3;
  int timeout = 60;
  try {
    for (int i = 1; i < argc; i += 2) {
      std::string k = argv[i];
      if (k == "--help" || k == "-h") {
        std::puts("usage: weft_bench_hop [--ranks 2,4,8] [--hops 400000] [--reps 3] [--timeout 60]\n"
                  "N processes pass a token around a ring (one shared cache line per link, weft's Waiter);\n"
                  "prints us per hop and 2(N-1) hops, the least NCCL's ring allreduce of one chunk can take.");
        return 0;
      }
      if (i + 1 >= argc) throw std::invalid_argument("flag without a value: " + k);
      std::string v = argv[i + 1];
      if (k == "--ranks") {
        ranks.clear();
        for (const std::string& r : splitCommas(v)) ranks.push_back(std::stoi(r));
      } else if (k == "--hops") hops = std::stol(v);
      else if (k == "--reps") reps = std::stoi(v);
      else if (k == "--timeout") timeout = std::stoi(v);
      else throw std::invalid_argument("unknown flag " + k);
    }
    for (int n : ranks)
      if (n < 2) throw std::invalid_argument("--ranks: each count must be at least 2");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft_bench_hop: %s (see --help)\n", e.what());
    return 2;
  }
  int rc = 0;
  for (int n : ranks) {
    runOnce(n, hops / 10, timeout);  // warm-up
    for (int rep = 0; rep < reps; ++rep) {
      double us = runOnce(n, hops, timeout);
      if (us < 0) {
        std::fprintf(stderr, "weft_bench_hop: a rank of the %d-process ring failed or timed out\n", n);
        rc = 1;
        continue;
      }
      std::printf("RESULT test=hop ranks=%d rep=%d hops=%ld us_per_hop=%.3f ring_allreduce_floor_us=%.3f\n", n, rep, hops, us,
                  us * 2.0 * (n - 1));
    }
  }
  return rc;
}
