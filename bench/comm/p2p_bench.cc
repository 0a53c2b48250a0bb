#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/comm/comm_bench.h"
#include "bench/comm/util.h"
#include "bench/comm/vm_hwm.h"

namespace weft::bench::comm {
namespace {

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

// ---- Collectives (weft_bench_comm coll) -------------------------------------------------------
namespace weft::bench::comm {
namespace {

bool barrier(weft_comm_t* comm, int rank) {
  float x = 1.0f, y = 0.0f;
  return ok(weft_allreduce(&x, &y, 1, weftFloat, weftSum, comm, nullptr), "weft_allreduce (barrier)", rank);
}

bool collOnce(const CollOptions& o, weft_comm_t* comm, int nranks, int rank, const Buffer& send, Buffer& recv,
              size_t bytes) {
  if (o.op == "allreduce")
    return ok(weft_allreduce(send.data, recv.data, bytes / sizeof(float), weftFloat, weftSum, comm, nullptr),
              "weft_allreduce", rank);
  if (o.op == "reducescatter")
    return ok(weft_reduce_scatter(send.data, recv.data, bytes / sizeof(float) / nranks, weftFloat, weftSum, comm, nullptr),
              "weft_reduce_scatter", rank);
  if (o.op == "broadcast")
    return ok(weft_broadcast(send.data, recv.data, bytes, weftUint8, 0, comm, nullptr), "weft_broadcast", rank);
  return ok(weft_allgather(send.data, recv.data, bytes / nranks, weftUint8, comm, nullptr), "weft_allgather", rank);
}

bool collSize(const CollOptions& o, weft_comm_t* comm, int nranks, int rank, size_t bytes) {
  const bool floats = floatOp(o.op);
  // size is the whole buffer: allgather's output, reducescatter's input.
  const size_t sendBytes = o.op == "allgather" ? bytes / nranks : bytes;
  const size_t recvBytes = o.op == "reducescatter" ? bytes / nranks : bytes;
  Buffer send(sendBytes), recv(recvBytes);
  if (send.data == nullptr || recv.data == nullptr) return false;
  if (floats)
    for (size_t i = 0; i < sendBytes / sizeof(float); ++i) reinterpret_cast<float*>(send.data)[i] = 1.0f;
  else
    std::memset(send.data, rank + 1, sendBytes);
  int iters = collIters(o, bytes);
  int warmup = std::max(2, iters / 5);
  for (int i = 0; i < warmup; ++i)
    if (!collOnce(o, comm, nranks, rank, send, recv, bytes)) return false;
  // The result of the last call, checked at its ends: every rank's contribution arrived.
  bool right = true;
  if (floats) {
    const float* r = reinterpret_cast<const float*>(recv.data);
    size_t n = recvBytes / sizeof(float);
    right = r[0] == static_cast<float>(nranks) && r[n - 1] == static_cast<float>(nranks);
  } else if (o.op == "broadcast") {
    right = recv.data[0] == 1 && recv.data[bytes - 1] == 1;  // root 0's bytes
  } else {
    for (int p = 0; p < nranks; ++p)
      right = right && recv.data[p * sendBytes] == p + 1 && recv.data[(p + 1) * sendBytes - 1] == p + 1;
  }
  if (!right) {
    std::fprintf(stderr, "rank %d: %s of %zu bytes: wrong result\n", rank, o.op.c_str(), bytes);
    return false;
  }
  for (int rep = 0; rep < o.reps; ++rep) {
    if (!barrier(comm, rank)) return false;
    long long t0 = nowNs();
    for (int i = 0; i < iters; ++i)
      if (!collOnce(o, comm, nranks, rank, send, recv, bytes)) return false;
    double us = static_cast<double>(nowNs() - t0) / 1e3 / iters, maxUs = 0;
    if (!ok(weft_allreduce(&us, &maxUs, 1, weftDouble, weftMax, comm, nullptr), "weft_allreduce (max)", rank))
      return false;
    if (rank == 0) {
      double algbw = static_cast<double>(bytes) / maxUs / 1e3;
      std::printf("RESULT test=coll op=%s impl=%s ranks=%d bytes=%zu rep=%d iters=%d us=%.3f algbw=%.4f busbw=%.4f\n",
                  o.op.c_str(), o.label.c_str(), nranks, bytes, rep, iters, maxUs, algbw,
                  algbw * busFactor(o.op, nranks));
      std::fflush(stdout);
    }
  }
  return true;
}

}  // namespace

int collIters(const CollOptions& o, size_t bytes) {
  size_t n = o.bytesPerRep / std::max<size_t>(bytes, 1);
  return static_cast<int>(std::clamp<size_t>(n, static_cast<size_t>(o.minIters), static_cast<size_t>(o.maxIters)));
}

int collRank(const CollOptions& o, int nranks, int rank, const weft_unique_id_t& id) {
  weft_comm_t* comm = nullptr;
  if (!ok(weft_comm_init_rank(&comm, nranks, id, rank), "weft_comm_init_rank", rank)) {
    if (comm != nullptr) weft_comm_abort(comm);
    return 1;
  }
  bool good = true;
  for (size_t i = 0; good && i < o.sizes.size(); ++i) good = collSize(o, comm, nranks, rank, o.sizes[i]);
  if (!good) {
    weft_comm_abort(comm);
    return 1;
  }
  if (o.hwm) {
    size_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
    size_t buffers = largest + (perRankOp(o.op) ? largest / nranks : largest);
    std::printf("RESULT test=hwm op=%s impl=%s ranks=%d rank=%d bytes=%zu hwm_kib=%ld buffers_kib=%zu\n", o.op.c_str(),
                o.label.c_str(), nranks, rank, largest, weft_bench_vm_hwm_kib(), buffers / 1024);
    std::fflush(stdout);
    if (!barrier(comm, rank)) {
      weft_comm_abort(comm);
      return 1;
    }
  }
  return ok(weft_comm_finalize(comm), "weft_comm_finalize", rank) && ok(weft_comm_destroy(comm), "weft_comm_destroy", rank)
             ? 0
             : 1;
}

void memcpyBandwidth(const CollOptions& o) {
  for (size_t bytes : o.sizes) {
    Buffer a(bytes), b(bytes);
    if (a.data == nullptr || b.data == nullptr) return;
    int iters = collIters(o, bytes);
    for (int i = 0; i < std::max(2, iters / 5); ++i) std::memcpy(b.data, a.data, bytes);
    for (int rep = 0; rep < o.reps; ++rep) {
      long long t0 = nowNs();
      for (int i = 0; i < iters; ++i) {
        std::memcpy(b.data, a.data, bytes);
        asm volatile("" ::"r"(b.data) : "memory");  // keep every copy
      }
      double us = static_cast<double>(nowNs() - t0) / 1e3 / iters;
      std::printf("RESULT test=memcpy impl=memcpy bytes=%zu rep=%d iters=%d us=%.3f gbps=%.4f\n", bytes, rep, iters, us,
                  static_cast<double>(bytes) / us / 1e3);
    }
  }
  std::fflush(stdout);
}

}  // namespace weft::bench::comm
