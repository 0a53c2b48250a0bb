#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/comm/comm_bench.h"

namespace weft::bench::comm {
namespace {

// Buffers from malloc, touched before any timing, as the MPI baseline allocates its own.
struct Buffer {
  explicit Buffer(size_t n) : data(static_cast<char*>(std::malloc(n == 0 ? 1 : n))), size(n) {
    if (data != nullptr) std::memset(data, 0x5a, size);
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* data;
  size_t size;
};

bool ok(weft_result_t rc, const char* what, int rank) {
  if (rc == weftSuccess) return true;
  std::fprintf(stderr, "rank %d: %s: %s\n", rank, what, weft_last_error());
  return false;
}

bool send(const Buffer& b, weft_comm_t* comm, int rank) {
  return ok(weft_send(b.data, b.size, weftUint8, 1 - rank, comm, nullptr), "weft_send", rank);
}

bool recv(Buffer& b, weft_comm_t* comm, int rank) {
  return ok(weft_recv(b.data, b.size, weftUint8, 1 - rank, comm, nullptr), "weft_recv", rank);
}

// One-way streaming: rank 0 sends `iters` messages back to back, rank 1 receives them and
// answers with 8 bytes; rank 0's clock runs from the first send to that answer.
bool streamOnce(weft_comm_t* comm, int rank, Buffer& msg, Buffer& ack, int iters, double* seconds) {
  long long t0 = nowNs();
  for (int i = 0; i < iters; ++i)
    if (!(rank == 0 ? send(msg, comm, rank) : recv(msg, comm, rank))) return false;
  if (!(rank == 0 ? recv(ack, comm, rank) : send(ack, comm, rank))) return false;
  *seconds = static_cast<double>(nowNs() - t0) / 1e9;
  return true;
}

bool bandwidth(const P2pOptions& o, weft_comm_t* comm, int rank, size_t bytes) {
  Buffer msg(bytes), ack(8);
  if (msg.data == nullptr) return false;
  int iters = std::max(o.minIters, static_cast<int>(o.bytesPerRep / bytes));
  double sec = 0;
  if (!streamOnce(comm, rank, msg, ack, 1, &sec)) return false;  // warm-up: connections, pages
  for (int rep = 0; rep < o.reps; ++rep) {
    if (!streamOnce(comm, rank, msg, ack, iters, &sec)) return false;
    if (rank == 0)
      std::printf("RESULT test=bw impl=%s bytes=%zu rep=%d iters=%d sec=%.6f gbps=%.4f\n", o.label.c_str(), bytes,
                  rep, iters, sec, static_cast<double>(bytes) * iters / sec / 1e9);
    std::fflush(stdout);
  }
  return true;
}

// Ping-pong of 8 bytes: rank 0 sends and waits for the answer; half the round trip.
bool pingPong(weft_comm_t* comm, int rank, Buffer& b, int iters) {
  for (int i = 0; i < iters; ++i) {
    bool good = rank == 0 ? send(b, comm, rank) && recv(b, comm, rank) : recv(b, comm, rank) && send(b, comm, rank);
    if (!good) return false;
  }
  return true;
}

bool latency(const P2pOptions& o, weft_comm_t* comm, int rank) {
  Buffer b(8);
  if (!pingPong(comm, rank, b, o.latWarmup)) return false;
  for (int rep = 0; rep < o.reps; ++rep) {
    long long t0 = nowNs();
    if (!pingPong(comm, rank, b, o.latIters)) return false;
    double us = static_cast<double>(nowNs() - t0) / 1e3 / o.latIters / 2;
    if (rank == 0)
      std::printf("RESULT test=lat impl=%s bytes=8 rep=%d iters=%d us=%.3f\n", o.label.c_str(), rep, o.latIters, us);
    std::fflush(stdout);
  }
  return true;
}

}  // namespace

int p2pRank(const P2pOptions& o, int rank, const weft_unique_id_t& id) {
  weft_comm_t* comm = nullptr;
  if (!ok(weft_comm_init_rank(&comm, 2, id, rank), "weft_comm_init_rank", rank)) {
    if (comm != nullptr) weft_comm_abort(comm);
    return 1;
  }
  bool good = latency(o, comm, rank);
  for (size_t i = 0; good && i < o.sizes.size(); ++i) good = bandwidth(o, comm, rank, o.sizes[i]);
  if (!good) {
    weft_comm_abort(comm);
    return 1;
  }
  return ok(weft_comm_finalize(comm), "weft_comm_finalize", rank) && ok(weft_comm_destroy(comm), "weft_comm_destroy", rank)
             ? 0
             : 1;
}

}  // namespace weft::bench::comm
