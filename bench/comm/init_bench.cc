#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "bench/comm/comm_bench.h"

namespace weft::bench::comm {
namespace {

// Where a rank is, so that a job killed at its deadline says which call hung.
enum Phase : int { kForked, kInInit, kAtBarrier, kInFinalize, kInDestroy, kDone };
constexpr const char* kPhaseNames[] = {"before init", "in weft_comm_init_rank", "waiting for the other ranks' init",
                                       "in weft_comm_finalize", "in weft_comm_destroy", "done"};

// One rank's init, in the shared page the parent reads after the job.
struct RankTimes {
  long long startNs;
  long long endNs;
  std::atomic<int> phase;
};

// A shared mapping: the count of ranks past init (none destroys its communicator before all
// are), then one RankTimes per rank at kTimesOffset.
struct InitShared {
  std::atomic<int> arrived;
  RankTimes* times() { return reinterpret_cast<RankTimes*>(reinterpret_cast<char*>(this) + kTimesOffset); }
  static constexpr size_t kTimesOffset = 64;  // a cache line: the counter is not beside the times
};

// Waits (bounded) for every rank to be past init, so that no rank tears down connections another
// is still setting up.
void barrier(std::atomic<int>& arrived, int n, std::chrono::seconds timeout) {
  arrived.fetch_add(1);
  auto until = std::chrono::steady_clock::now() + timeout;
  while (arrived.load() < n && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

int initRank(InitShared* s, int n, int rank, const weft_unique_id_t& id, std::chrono::seconds timeout) {
  weft_comm_t* comm = nullptr;
  RankTimes& me = s->times()[rank];
  me.phase.store(kInInit);
  long long t0 = nowNs();
  weft_result_t rc = weft_comm_init_rank(&comm, n, id, rank);
  long long t1 = nowNs();
  me.startNs = t0;
  me.endNs = t1;
  if (rc != weftSuccess) {
    std::fprintf(stderr, "rank %d of %d: weft_comm_init_rank: %s\n", rank, n, weft_last_error());
    if (comm != nullptr) weft_comm_abort(comm);
    return 1;
  }
  me.phase.store(kAtBarrier);
  barrier(s->arrived, n, timeout);
  me.phase.store(kInFinalize);
  bool good = weft_comm_finalize(comm) == weftSuccess;
  me.phase.store(kInDestroy);
  good = weft_comm_destroy(comm) == weftSuccess && good;
  me.phase.store(kDone);
  if (!good) std::fprintf(stderr, "rank %d of %d: finalize/destroy: %s\n", rank, n, weft_last_error());
  return good ? 0 : 1;
}

// One job of n ranks; false (having said why) if it failed.
bool initJob(int n, int rep, const InitOptions& o, bool print) {
  size_t bytes = InitShared::kTimesOffset + sizeof(RankTimes) * static_cast<size_t>(n);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return false;
  auto* s = new (mem) InitShared{};
  std::string failed = runRanks(n, o.timeout, [&](int rank, const weft_unique_id_t& id) {
    return initRank(s, n, rank, id, o.timeout);
  });
  if (!failed.empty()) {
    std::string where;
    for (int r = 0; r < n; ++r)
      where += " rank " + std::to_string(r) + ": " + kPhaseNames[s->times()[r].phase.load()] + ";";
    std::fprintf(stderr, "init job of %d ranks failed: %s\n  where the ranks were:%s\n", n, failed.c_str(), where.c_str());
  } else if (print) {
    const RankTimes* t = s->times();
    long long maxNs = 0, minNs = -1, first = t[0].startNs, last = t[0].endNs;
    for (int r = 0; r < n; ++r) {
      long long d = t[r].endNs - t[r].startNs;
      maxNs = std::max(maxNs, d);
      minNs = minNs < 0 ? d : std::min(minNs, d);
      first = std::min(first, t[r].startNs);
      last = std::max(last, t[r].endNs);
    }
    std::printf("RESULT test=init impl=weft ranks=%d rep=%d max_ms=%.3f span_ms=%.3f min_ms=%.3f\n", n, rep,
                static_cast<double>(maxNs) / 1e6, static_cast<double>(last - first) / 1e6,
                static_cast<double>(minNs) / 1e6);
    std::fflush(stdout);
  }
  munmap(mem, bytes);
  return failed.empty();
}

}  // namespace

int runInit(const InitOptions& o) {
  for (int n : o.ranks) {
    // A failed job is counted (a RESULT test=init-failed line) and run again, up to
    // o.maxFailures times per rank count: how often init fails is part of the result.
    int failures = 0;
    for (int job = 0, rep = 0; rep < o.reps;) {
      bool timed = job++ >= o.warmup;
      if (initJob(n, timed ? rep : -1, o, timed)) {
        rep += timed ? 1 : 0;
        continue;
      }
      std::printf("RESULT test=init-failed impl=weft ranks=%d job=%d\n", n, job - 1);
      std::fflush(stdout);
      if (++failures > o.maxFailures) return 1;
    }
  }
  return 0;
}

}  // namespace weft::bench::comm
