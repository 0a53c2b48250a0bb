// weft_bench_comm: communicator init time and send/recv bandwidth and latency between
// processes, printed as `RESULT key=value ...` lines that bench/comm/run.sh gathers into tables
// beside its baselines (Open MPI's MPI_Send/MPI_Recv, iperf3). See bench/README.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft::bench::comm {

// Runs fn(rank, id) in n forked processes. Rank 0 makes the id with weft_get_unique_id and
// hands it to the others through shared memory; then all are released at once (one pipe
// write), so that fn starts at the same moment in every rank. Every process still running after
// `timeout` is killed, with its /dev/shm entries. Returns "" or what failed.
std::string runRanks(int n, std::chrono::seconds timeout,
                     const std::function<int(int rank, const weft_unique_id_t& id)>& fn);

// A CLOCK_MONOTONIC reading in nanoseconds: comparable across the processes of one host.
long long nowNs();

struct InitOptions {
  std::vector<int> ranks{2, 4, 8};
  int reps = 7;
  int warmup = 1;  // untimed jobs first (page cache, the plugin's first dlopen)
  int maxFailures = 10;  // failed jobs per rank count before giving up
  std::chrono::seconds timeout{60};
};

// For every rank count, `reps` jobs; prints one line per job:
// RESULT test=init impl=weft ranks=N rep=I max_ms=… span_ms=… min_ms=…
// and, for a job that failed (then run again), RESULT test=init-failed impl=weft ranks=N job=J
int runInit(const InitOptions& o);

struct P2pOptions {
  std::vector<size_t> sizes{size_t{4} << 20, size_t{16} << 20, size_t{64} << 20, size_t{256} << 20};
  int reps = 3;
  size_t bytesPerRep = size_t{1} << 30;  // messages per rep: bytesPerRep / size, at least minIters
  int minIters = 4;
  int latIters = 10000;
  int latWarmup = 1000;
  std::string label = "weft";
  std::chrono::seconds timeout{120};
};

// The body of one rank of the send/recv benchmark (rank 0 sends and prints, rank 1 receives):
// RESULT test=bw impl=LABEL bytes=N rep=I iters=K sec=… gbps=…
// RESULT test=lat impl=LABEL bytes=8 rep=I iters=K us=…
int p2pRank(const P2pOptions& o, int rank, const weft_unique_id_t& id);

struct CollOptions {
  std::string op = "allreduce";  // allreduce, reducescatter (float sum), allgather, broadcast (bytes, root 0)
  std::vector<size_t> sizes{8, size_t{64} << 10, size_t{1} << 20, size_t{16} << 20, size_t{64} << 20};
  int reps = 3;
  size_t bytesPerRep = size_t{128} << 20;  // calls per rep: bytesPerRep / size, in [minIters, maxIters]
  int minIters = 5;
  int maxIters = 1000;
  std::string label = "weft";
  bool hwm = false;  // at the end, every rank prints its peak resident memory (RESULT test=hwm)
  std::chrono::seconds timeout{60};
};

// Calls per timed rep (and warm-up calls: a fifth of them, at least 2) for one size; the same
// rule in weft_bench_comm_mpi.
int collIters(const CollOptions& o, size_t bytes);

// The body of one rank of the collective benchmark, nccl-tests' method: buffers allocated and
// touched once per size, warm-up calls, then `reps` timed runs of `iters` calls between two
// barriers; rank 0 prints the time per call, max over ranks (size: allreduce's buffer, allgather's
// whole output):
// RESULT test=coll op=OP impl=LABEL ranks=N bytes=B rep=I iters=K us=… algbw=… busbw=…
// With o.hwm, then every rank, its VmHWM beside its buffers of the largest size (sendbuf + recvbuf):
// RESULT test=hwm op=OP impl=LABEL ranks=N rank=R bytes=B hwm_kib=… buffers_kib=…
int collRank(const CollOptions& o, int nranks, int rank, const weft_unique_id_t& id);

// Single-thread memcpy of each size between two touched buffers (same iteration rule):
// RESULT test=memcpy bytes=B rep=I iters=K us=… gbps=…
void memcpyBandwidth(const CollOptions& o);

}  // namespace weft::bench::comm
