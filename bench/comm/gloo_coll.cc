// weft_bench_comm_gloo: the Gloo baseline of `weft_bench_comm coll` (issue 21): allreduce and
// reducescatter (float sum), allgather and broadcast (bytes) of N forked processes on this host, Gloo's TCP transport over the
// loopback interface, rendezvous through a FileStore in a fresh temporary directory per job. The
// same method, flags and `RESULT` lines as weft_bench_comm coll and weft_bench_comm_mpi coll, so
// bench/comm/run.sh puts the three in one table. Every Gloo algorithm timed gets its own label:
//   LABEL       gloo::allreduce / gloo::allgather (the options API, default algorithm; send and
//               receive buffers apart, as weft and MPI)
//   LABEL-ring  gloo::AllreduceRing (in place) / gloo::AllgatherRing (apart)
//   LABEL-hd    gloo::AllreduceHalvingDoubling (in place; allreduce only)
// The in-place algorithms reduce into the receive buffer itself: that is their only API.
#include <gloo/allgather.h>
#include <gloo/allgather_ring.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/reduce_scatter.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/comm/util.h"
#include "bench/comm/vm_hwm.h"

namespace {

using weft::bench::comm::Buffer;
using weft::bench::comm::busFactor;
using weft::bench::comm::floatOp;
using weft::bench::comm::perRankOp;
using weft::bench::comm::sizeQuantum;
using weft::bench::comm::parseSize;
using weft::bench::comm::splitCommas;

constexpr const char* kUsage =
    "usage: weft_bench_comm_gloo coll [--op allreduce|allgather|reducescatter|broadcast] [--ranks 2,4] [--sizes 8,64K,1M,16M,64M]\n"
    "                                 [--reps 3] [--bytes-per-rep 128M] [--min-iters 5] [--max-iters 1000]\n"
    "                                 [--algos default,ring,hd] [--label gloo] [--iface lo] [--hwm 0|1]\n"
    "                                 [--rep-seconds 1] [--timeout S]\n"
    "The Gloo baseline of `weft_bench_comm coll`: N forked ranks on this host, Gloo's TCP transport on\n"
    "--iface, rendezvous through a FileStore in a new temporary directory. Algorithms (--algos):\n"
    "  default  gloo::allreduce / gloo::allgather, default algorithm, separate send and receive buffers\n"
    "  ring     gloo::AllreduceRing (in place) / gloo::AllgatherRing\n"
    "  hd       gloo::AllreduceHalvingDoubling (in place; allreduce only, skipped for allgather)\n"
    "reducescatter: gloo::ReduceScatterHalvingDoubling (in place, Gloo's only one) under \"hd\";\n"
    "broadcast: gloo::broadcast (root 0, separate buffers) under \"default\". Other algorithms are skipped.\n"
    "Method as weft_bench_comm coll: per size, buffers malloc'd and touched once, max(3, iters/5) warm-up\n"
    "calls (the first one's result checked), then --reps timed runs of iters = clamp(bytes-per-rep / size,\n"
    "min-iters, max-iters) calls between barriers, but iters cut so that a rep takes about --rep-seconds\n"
    "(from the slowest rank's time of warm-up calls 2-3; at least min-iters). Rank 0 prints, per rep\n"
    "(us: time per call, max over ranks):\n"
    "  RESULT test=coll op=OP impl=LABEL[-ring|-hd] ranks=N bytes=B rep=I iters=K us=... algbw=... busbw=...\n"
    "--hwm 1: at the end every rank prints its peak resident memory (VmHWM) beside its largest buffers:\n"
    "  RESULT test=hwm op=OP impl=LABEL ranks=N rank=R bytes=B hwm_kib=... buffers_kib=...\n";

using Clock = std::chrono::steady_clock;

struct Options {
  std::string op = "allreduce";
  std::vector<int> ranks{2, 4};
  std::vector<size_t> sizes{8, size_t{64} << 10, size_t{1} << 20, size_t{16} << 20, size_t{64} << 20};
  int reps = 3;
  size_t bytesPerRep = size_t{128} << 20;
  int minIters = 5;
  int maxIters = 1000;
  std::vector<std::string> algos{"default", "ring", "hd"};
  std::string label = "gloo";
  std::string iface = "lo";
  bool hwm = false;
  double repSeconds = 1.0;
  int timeoutSec = 120;
};

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 2; i < argc; i += 2) {
    if (std::strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc)
      throw std::invalid_argument(std::string("bad argument: ") + argv[i]);
    std::string k = argv[i] + 2, v = argv[i + 1];
    if (k == "op") o.op = v;
    else if (k == "ranks") {
      o.ranks.clear();
      for (const std::string& r : splitCommas(v)) o.ranks.push_back(std::stoi(r));
    } else if (k == "sizes") {
      o.sizes.clear();
      for (const std::string& s : splitCommas(v)) o.sizes.push_back(parseSize(s));
    } else if (k == "reps") o.reps = std::stoi(v);
    else if (k == "bytes-per-rep") o.bytesPerRep = parseSize(v);
    else if (k == "min-iters") o.minIters = std::stoi(v);
    else if (k == "max-iters") o.maxIters = std::stoi(v);
    else if (k == "algos") o.algos = splitCommas(v);
    else if (k == "label") o.label = v;
    else if (k == "iface") o.iface = v;
    else if (k == "hwm") o.hwm = std::stoi(v) != 0;
    else if (k == "rep-seconds") o.repSeconds = std::stod(v);
    else if (k == "timeout") o.timeoutSec = std::stoi(v);
    else throw std::invalid_argument("unknown flag --" + k);
  }
  if (o.op != "allreduce" && o.op != "allgather" && o.op != "reducescatter" && o.op != "broadcast")
    throw std::invalid_argument("--op must be allreduce, allgather, reducescatter or broadcast");
  for (const std::string& a : o.algos)
    if (a != "default" && a != "ring" && a != "hd") throw std::invalid_argument("unknown algorithm: " + a);
  for (int n : o.ranks)
    for (size_t b : o.sizes)
      if (n < 1 || b == 0 || b % sizeQuantum(o.op, n) != 0 || b / sizeof(float) > 0x7fffffff)
        throw std::invalid_argument("sizes must be multiples of 4 (allreduce), of the ranks (allgather), of 4 x the "
                                    "ranks (reducescatter), < 8 GiB");
  return o;
}

// The same iteration rule as weft_bench_comm coll (bench/comm/p2p_bench.cc, collIters).
int collIters(const Options& o, size_t bytes) {
  size_t n = o.bytesPerRep / std::max<size_t>(bytes, 1);
  return static_cast<int>(std::clamp<size_t>(n, static_cast<size_t>(o.minIters), static_cast<size_t>(o.maxIters)));
}

long long nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

// One collective of one algorithm, set up once per size (Gloo's buffers registered, its
// algorithm objects and their scratch allocated) and called many times.
class Coll {
 public:
  virtual ~Coll() = default;
  virtual void run() = 0;
  virtual bool inPlace() const = 0;
};

class GlooAllreduce : public Coll {
 public:
  GlooAllreduce(const std::shared_ptr<gloo::Context>& ctx, Buffer& send, Buffer& recv) : opts_(ctx) {
    size_t n = send.size / sizeof(float);
    opts_.setInput(reinterpret_cast<float*>(send.data), n);
    opts_.setOutput(reinterpret_cast<float*>(recv.data), n);
    opts_.setReduceFunction(static_cast<ReduceFn>(&gloo::sum<float>));
  }
  void run() override { gloo::allreduce(opts_); }
  bool inPlace() const override { return false; }

 private:
  gloo::AllreduceOptions opts_;
};

class GlooAllgather : public Coll {
 public:
  GlooAllgather(const std::shared_ptr<gloo::Context>& ctx, Buffer& send, Buffer& recv) : opts_(ctx) {
    opts_.setInput(reinterpret_cast<uint8_t*>(send.data), send.size);
    opts_.setOutput(reinterpret_cast<uint8_t*>(recv.data), recv.size);
  }
  void run() override { gloo::allgather(opts_); }
  bool inPlace() const override { return false; }

 private:
  gloo::AllgatherOptions opts_;
};

// gloo::Algorithm subclasses (AllreduceRing, AllreduceHalvingDoubling, AllgatherRing).
template <typename A>
class GlooAlgorithm : public Coll {
 public:
  GlooAlgorithm(std::unique_ptr<A> algo, bool inPlace) : algo_(std::move(algo)), inPlace_(inPlace) {}
  void run() override { algo_->run(); }
  bool inPlace() const override { return inPlace_; }

 private:
  std::unique_ptr<A> algo_;
  bool inPlace_;
};

class GlooBroadcast : public Coll {
 public:
  GlooBroadcast(const std::shared_ptr<gloo::Context>& ctx, Buffer& send, Buffer& recv) : opts_(ctx) {
    opts_.setRoot(0);
    if (ctx->rank == 0) opts_.setInput(reinterpret_cast<uint8_t*>(send.data), send.size);
    opts_.setOutput(reinterpret_cast<uint8_t*>(recv.data), recv.size);
  }
  void run() override { gloo::broadcast(opts_); }
  bool inPlace() const override { return false; }

 private:
  gloo::BroadcastOptions opts_;
};

// Which algorithms Gloo has for `op` (see kUsage).
bool glooHas(const std::string& op, const std::string& algo) {
  if (op == "reducescatter") return algo == "hd";
  if (op == "broadcast") return algo == "default";
  return algo != "hd" || op == "allreduce";
}

std::unique_ptr<Coll> makeColl(const Options& o, const std::string& algo, const std::shared_ptr<gloo::Context>& ctx,
                               Buffer& send, Buffer& recv) {
  if (!glooHas(o.op, algo)) return nullptr;
  if (o.op == "broadcast") return std::make_unique<GlooBroadcast>(ctx, send, recv);
  if (o.op == "reducescatter") {
    // In place in the whole buffer (the receive buffer here); this rank's sums end at its start.
    const int n = static_cast<int>(recv.size / sizeof(float));
    std::vector<float*> ptrs{reinterpret_cast<float*>(recv.data)};
    std::vector<int> parts(static_cast<size_t>(ctx->size), n / ctx->size);
    return std::make_unique<GlooAlgorithm<gloo::ReduceScatterHalvingDoubling<float>>>(
        std::make_unique<gloo::ReduceScatterHalvingDoubling<float>>(ctx, ptrs, n, parts), true);
  }
  if (o.op == "allreduce") {
    int n = static_cast<int>(recv.size / sizeof(float));
    std::vector<float*> ptrs{reinterpret_cast<float*>(recv.data)};
    if (algo == "default") return std::make_unique<GlooAllreduce>(ctx, send, recv);
    if (algo == "ring")
      return std::make_unique<GlooAlgorithm<gloo::AllreduceRing<float>>>(
          std::make_unique<gloo::AllreduceRing<float>>(ctx, ptrs, n), true);
    return std::make_unique<GlooAlgorithm<gloo::AllreduceHalvingDoubling<float>>>(
        std::make_unique<gloo::AllreduceHalvingDoubling<float>>(ctx, ptrs, n), true);
  }
  if (algo == "default") return std::make_unique<GlooAllgather>(ctx, send, recv);
  if (algo == "ring") {
    std::vector<const uint8_t*> in{reinterpret_cast<const uint8_t*>(send.data)};
    return std::make_unique<GlooAlgorithm<gloo::AllgatherRing<uint8_t>>>(
        std::make_unique<gloo::AllgatherRing<uint8_t>>(ctx, in, reinterpret_cast<uint8_t*>(recv.data),
                                                       static_cast<int>(send.size)),
        false);
  }
  return nullptr;  // no halving-doubling allgather in Gloo
}

void barrier(const std::shared_ptr<gloo::Context>& ctx) {
  gloo::BarrierOptions b(ctx);
  gloo::barrier(b);
}

double maxOverRanks(const std::shared_ptr<gloo::Context>& ctx, double v) {
  double out = 0;
  gloo::AllreduceOptions m(ctx);
  m.setInput(&v, 1);
  m.setOutput(&out, 1);
  m.setReduceFunction(static_cast<ReduceFn>(&gloo::max<double>));
  gloo::allreduce(m);
  return out;
}

void fillInput(const Options& o, Buffer& send, Buffer& recv, int rank, bool inPlace) {
  if (floatOp(o.op)) {
    Buffer& in = inPlace ? recv : send;
    std::fill_n(reinterpret_cast<float*>(in.data), in.size / sizeof(float), 1.0f);
  } else {
    std::memset(send.data, rank + 1, send.size);
  }
}

// The result of one call, checked at its ends: every rank's contribution arrived.
bool rightResult(const Options& o, const Buffer& send, const Buffer& recv, int nranks) {
  if (floatOp(o.op)) {
    const float* r = reinterpret_cast<const float*>(recv.data);
    size_t n = recv.size / sizeof(float);
    if (o.op == "reducescatter") n /= static_cast<size_t>(nranks);  // Gloo leaves this rank's sums first
    return r[0] == static_cast<float>(nranks) && r[n - 1] == static_cast<float>(nranks);
  }
  if (o.op == "broadcast") return recv.data[0] == 1 && recv.data[recv.size - 1] == 1;  // root 0's bytes
  for (int p = 0; p < nranks; ++p)
    if (recv.data[p * send.size] != p + 1 || recv.data[(p + 1) * send.size - 1] != p + 1) return false;
  return true;
}

std::string implName(const Options& o, const std::string& algo) {
  return algo == "default" ? o.label : o.label + "-" + algo;
}

bool collSize(const Options& o, const std::string& algo, const std::shared_ptr<gloo::Context>& ctx, int nranks,
              int rank, size_t bytes) {
  // size is the whole buffer; reducescatter runs in place in it (the receive buffer here).
  size_t sendBytes = o.op == "allgather" ? bytes / nranks : o.op == "reducescatter" ? 0 : bytes;
  Buffer send(std::max<size_t>(sendBytes, 1)), recv(bytes);
  if (send.data == nullptr || recv.data == nullptr) throw std::bad_alloc();
  int fullIters = collIters(o, bytes);
  std::unique_ptr<Coll> coll = makeColl(o, algo, ctx, send, recv);
  if (!coll) return true;
  fillInput(o, send, recv, rank, coll->inPlace());
  coll->run();
  if (!rightResult(o, send, recv, nranks)) {
    std::fprintf(stderr, "rank %d: gloo %s (%s) of %zu bytes: wrong result\n", rank, o.op.c_str(), algo.c_str(), bytes);
    return false;
  }
  // In place, every call would multiply the values by the rank count (to inf within ~100
  // calls); zeros keep them finite, at the same cost per element.
  if (coll->inPlace()) std::memset(recv.data, 0, recv.size);
  // Two more warm-up calls, timed: Gloo over loopback TCP can take tens of ms per call where
  // weft and MPI take microseconds, so a rep is cut to about --rep-seconds (all ranks agree on
  // the slowest rank's estimate; at least --min-iters calls).
  long long w0 = nowNs();
  coll->run();
  coll->run();
  double estUs = maxOverRanks(ctx, static_cast<double>(nowNs() - w0) / 2e3);
  double cap = o.repSeconds * 1e6 / std::max(estUs, 1e-3);
  int iters = std::max(o.minIters, std::min(fullIters, static_cast<int>(std::min(cap, 1e9))));
  for (int i = 3; i < std::max(2, iters / 5); ++i) coll->run();
  for (int rep = 0; rep < o.reps; ++rep) {
    barrier(ctx);
    long long t0 = nowNs();
    for (int i = 0; i < iters; ++i) coll->run();
    double us = static_cast<double>(nowNs() - t0) / 1e3 / iters;
    double maxUs = maxOverRanks(ctx, us);
    if (rank == 0) {
      double algbw = static_cast<double>(bytes) / maxUs / 1e3;
      std::printf("RESULT test=coll op=%s impl=%s ranks=%d bytes=%zu rep=%d iters=%d us=%.3f algbw=%.4f busbw=%.4f\n",
                  o.op.c_str(), implName(o, algo).c_str(), nranks, bytes, rep, iters, maxUs, algbw,
                  algbw * busFactor(o.op, nranks));
      std::fflush(stdout);
    }
  }
  return true;
}

// One job's rank: a context of its own for one algorithm (a context shared by Gloo's algorithm
// classes and its options API made later calls slow by 100x and more in a trial run).
int rankMain(const Options& o, const std::string& algo, int nranks, int rank, const std::string& storeDir) {
  try {
    gloo::transport::tcp::attr attr;
    attr.iface = o.iface;
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(storeDir);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, nranks);
    ctx->setTimeout(std::chrono::seconds(o.timeoutSec));
    ctx->connectFullMesh(store, dev);
    size_t largest = 0;
    for (size_t b : o.sizes) {
      if (!collSize(o, algo, ctx, nranks, rank, b)) return 1;
      largest = std::max(largest, b);
    }
    if (o.hwm) {
      size_t buffers = largest + (perRankOp(o.op) ? largest / nranks : largest);
      std::printf("RESULT test=hwm op=%s impl=%s ranks=%d rank=%d bytes=%zu hwm_kib=%ld buffers_kib=%zu\n",
                  o.op.c_str(), implName(o, algo).c_str(), nranks, rank,
                  largest, weft_bench_vm_hwm_kib(), buffers / 1024);
      std::fflush(stdout);
    }
    barrier(ctx);  // nobody closes its connections while a peer still reads
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    return 1;
  }
}

// Forks the ranks of one job, each with the same store directory; kills them all at the
// deadline. Returns "" or what failed.
std::string runJob(const Options& o, const std::string& algo, int nranks) {
  char tmpl[] = "/tmp/weft-gloo.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return std::string("mkdtemp: ") + std::strerror(errno);
  std::string dir = tmpl;
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids;
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(static_cast<unsigned>(o.timeoutSec) + 5);  // a backstop if the parent is gone
      int rc = rankMain(o, algo, nranks, r, dir);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(rc);
    }
    if (pid < 0) break;
    pids.push_back(pid);
  }
  std::string failed = pids.size() == static_cast<size_t>(nranks) ? "" : "fork failed; ";
  auto until = Clock::now() + std::chrono::seconds(o.timeoutSec);
  size_t left = pids.size();
  std::vector<bool> done(pids.size(), false);
  while (left > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      if (done[i] || waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      done[i] = true;
      --left;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        failed += "rank " + std::to_string(i) +
                  (WIFEXITED(status) ? " exited " + std::to_string(WEXITSTATUS(status))
                                     : " killed by signal " + std::to_string(WTERMSIG(status))) +
                  "; ";
    }
    if (left > 0 && Clock::now() > until) {
      for (size_t i = 0; i < pids.size(); ++i)
        if (!done[i]) kill(pids[i], SIGKILL);
      failed += "deadline of " + std::to_string(o.timeoutSec) + " s passed; ";
      for (size_t i = 0; i < pids.size(); ++i)
        if (!done[i]) waitpid(pids[i], nullptr, 0);
      break;
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  Options o;
  try {
    if (std::strcmp(argv[1], "coll") != 0) throw std::invalid_argument(std::string("unknown mode: ") + argv[1]);
    o = parseArgs(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft_bench_comm_gloo: %s\n%s", e.what(), kUsage);
    return 2;
  }
  int rc = 0;
  for (int n : o.ranks)
    for (const std::string& algo : o.algos) {
      if (!glooHas(o.op, algo)) continue;
      std::string failed = runJob(o, algo, n);
      if (!failed.empty()) {
        std::fprintf(stderr, "gloo coll job (%s %s, %d ranks) failed: %s\n", o.op.c_str(), algo.c_str(), n,
                     failed.c_str());
        rc = 1;
      }
    }
  return rc;
}
