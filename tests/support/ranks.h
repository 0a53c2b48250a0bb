// Multi-process tests: every rank a forked process with its own output file, the whole job
// under one deadline (then every process is killed and the test fails, never hangs).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdio>
#include <cstdint>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft::testing {

struct RankOutcome {
  int exitCode = -1;   // the child's exit status, or -1 when killed by a signal
  int signal = 0;      // the signal that ended it
  bool timedOut = false;
  std::string output;  // stdout and stderr
  pid_t pid = 0;
};

struct JobSpec {
  int nranks = 2;
  std::chrono::seconds deadline{60};
  // Environment set in each child before it runs (rank -> NAME -> value); applies to all ranks
  // when the key is -1.
  std::map<int, std::map<std::string, std::string>> env;
  // When false, ranks get no shared id: fn creates its own (NCCL_COMM_ID tests).
  bool shareId = true;
  int parentThreads = 1;  // set by runJob
};

// Runs fn(rank, id) in nranks children. Rank 0 makes the id with weft_get_unique_id and hands it
// to the others through shared memory. fn returns the child's exit code (0: pass).
std::vector<RankOutcome> runJob(const JobSpec& spec, const std::function<int(int rank, const weft_unique_id_t& id)>& fn);

// Several jobs side by side, each with its own id and deadline: all are forked from the calling
// thread (never run runJob on two threads at once: a child forked while another thread holds a
// lock inherits it locked), then waited for together. One outcome list per job, in order.
struct Job {
  JobSpec spec;
  std::function<int(int rank, const weft_unique_id_t& id)> fn;
};
std::vector<std::vector<RankOutcome>> runJobs(const std::vector<Job>& jobs);

// Counters the forked ranks share (anonymous shared memory made before runJob forks them), for
// barriers with a deadline: "every rank has seen its error before anyone aborts".
class SharedCounters {
 public:
  explicit SharedCounters(int n = 4);
  ~SharedCounters();
  SharedCounters(const SharedCounters&) = delete;
  SharedCounters& operator=(const SharedCounters&) = delete;
  int64_t add(int i, int64_t v = 1) const;
  int64_t get(int i) const;
  void set(int i, int64_t v) const;
  // Adds one to counter i and waits until it reaches `n`; false after `limit`.
  bool arriveAndWait(int i, int64_t n, std::chrono::seconds limit) const;
  // Waits until counter i is at least `n`; false after `limit`.
  bool waitFor(int i, int64_t n, std::chrono::seconds limit) const;

 private:
  void* mem_;
  int n_;
};

// "rank 1: exit 3\n<output>" for every rank that did not exit with 0, or "" when all passed.
std::string failures(const std::vector<RankOutcome>& out);

// /dev/shm entries whose name weft gave them for process `pid` ("weft-<pid>-…").
std::vector<std::string> shmLeftovers(pid_t pid);
// Fails the current test for every rank process that left an entry in /dev/shm.
void expectNoLeftovers(const std::vector<RankOutcome>& out);

// The byte at offset i of what `rank` sends in message `msg`: every rank and message differ.
inline uint8_t pattern(int rank, int msg, size_t i) {
  return static_cast<uint8_t>((i * 131u) ^ (static_cast<unsigned>(rank) * 29u) ^ (static_cast<unsigned>(msg) * 7u) ^
                              (i >> 12));
}
inline void fill(uint8_t* b, size_t n, int rank, int msg) {
  for (size_t i = 0; i < n; ++i) b[i] = pattern(rank, msg, i);
}
// Index of the first byte that is not pattern(rank, msg, i), or -1.
inline long firstWrong(const uint8_t* b, size_t n, int rank, int msg) {
  for (size_t i = 0; i < n; ++i)
    if (b[i] != pattern(rank, msg, i)) return static_cast<long>(i);
  return -1;
}

}  // namespace weft::testing

// For use inside a rank: prints what failed and returns from fn with 1.
#define RANK_CHECK(cond, ...)                                                                   \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);            \
      std::fprintf(stderr, __VA_ARGS__);                                                        \
      std::fprintf(stderr, "\n");                                                               \
      return 1;                                                                                 \
    }                                                                                           \
  } while (0)

#define RANK_OK(call)                                                                           \
  do {                                                                                          \
    weft_result_t rank_ok_rc_ = (call);                                                         \
    RANK_CHECK(rank_ok_rc_ == weftSuccess, "%s returned %d: %s", #call, static_cast<int>(rank_ok_rc_), \
               weft_last_error());                                                              \
  } while (0)

namespace weft::testing {

// Inside a rank: checks that the communicator saw no error, then finalizes and destroys it.
inline int closeComm(weft_comm_t* comm) {
  weft_result_t async = weftInternalError;
  RANK_OK(weft_comm_get_async_error(comm, &async));
  RANK_CHECK(async == weftSuccess, "async error %d", static_cast<int>(async));
  RANK_OK(weft_comm_finalize(comm));
  RANK_OK(weft_comm_destroy(comm));
  return 0;
}

}  // namespace weft::testing
