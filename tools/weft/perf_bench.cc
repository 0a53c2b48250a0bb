#include "tools/weft/perf_bench.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "tools/weft/perf_data.h"
#include "tools/weft/perf_format.h"
#include "tools/weft/perf_launch.h"
#include "weft/config.h"

namespace weft::tool::perf {
namespace {

using Clock = std::chrono::steady_clock;

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, FreeDeleter>;

// Page-aligned and touched, so that no page fault lands in a timed iteration.
Result<Buffer> allocate(size_t bytes, const char* what) {
  constexpr size_t kPage = 4096;
  size_t size = (std::max<size_t>(bytes, 1) + kPage - 1) / kPage * kPage;
  auto* p = static_cast<char*>(std::aligned_alloc(kPage, size));
  if (p == nullptr)
    return systemError("allocating the " + std::string(what) + " buffer (" + std::to_string(size) + " bytes) failed");
  std::memset(p, 0, size);
  return Buffer(p);
}

weft_datatype_t toWeft(DataType t) { return static_cast<weft_datatype_t>(t); }

// How per-rank values combine (-a; kSum for the error counts). nccl-tests: Allreduce().
enum class Combine { kRank0 = 0, kAvg = 1, kMin = 2, kMax = 3, kSum = 4 };

// The device every rank shows under "# Using devices": host memory, no PCI function.
constexpr const char* kDeviceName = "host memory (weft)";

class Bench {
 public:
  Bench(const Options& o, weft_comm_t* comm, int rank, int nranks)
      : o_(o), info_(collInfo(o.coll)), comm_(comm), rank_(rank), n_(nranks) {
    progress_ = rank == 0 && !::isatty(STDOUT_FILENO) && ::isatty(STDERR_FILENO);
    reportErrors_ = o.check > 0;
  }

  Result<Outcome> run() {
    WEFT_TRY(printPreamble());
    WEFT_ASSIGN_OR_RETURN(send_, allocate(o_.maxBytes, "send"));
    WEFT_ASSIGN_OR_RETURN(recv_, allocate(o_.maxBytes, "receive"));
    if (o_.check > 0) {
      WEFT_ASSIGN_OR_RETURN(expected_, allocate(o_.maxBytes, "expected-result"));
    }
    print(tableHeader(o_.cputime));
    start_ = Clock::now();
    for (DataType type : o_.types) WEFT_TRY(runType(type));

    Outcome out;
    WEFT_ASSIGN_OR_RETURN(out.errors, combine<int64_t>(errors_, Combine::kSum));
    out.avgBusBw = bwSum_ / bwCount_;
    out.failed = out.errors != 0 || belowMinBandwidth(out.avgBusBw, o_.minBusBw);
    print(footer(out.errors, out.avgBusBw, o_.minBusBw, info_.program, weft_last_error()));
    out.text = std::move(printed_);
    return out;
  }

 private:
  // nccl-tests' RunTest of each collective: which (op, root) pairs a type runs.
  Status runType(DataType type) {
    std::vector<int> roots;
    if (o_.root >= 0) roots.push_back(o_.root);
    for (int r = 0; o_.root < 0 && r < n_; ++r) roots.push_back(r);
    switch (o_.coll) {
      case Coll::kAllGather:
      case Coll::kAllToAll:
        return timeTest(type, RedOp::kSum, "none", -1);
      case Coll::kBroadcast:
        for (int root : roots) WEFT_TRY(timeTest(type, RedOp::kSum, "none", root));
        return Status::ok();
      case Coll::kReduce:
        for (RedOp op : o_.ops) {
          for (int root : roots) WEFT_TRY(timeTest(type, op, opName(op), root));
        }
        return Status::ok();
      case Coll::kAllReduce:
      case Coll::kReduceScatter:
      case Coll::kSendRecv:
        for (RedOp op : o_.ops) WEFT_TRY(timeTest(type, op, opName(op), -1));
        return Status::ok();
    }
    return Status::ok();
  }

  Status timeTest(DataType type, RedOp op, const char* opLabel, int root) {
    WEFT_TRY(barrier());
    for (size_t size : warmupSchedule(o_.minBytes, o_.maxBytes)) {
      setup(size, type);
      for (int iter = 0; iter < o_.warmupIters; ++iter) {
        WEFT_TRY_CTX(startColl(type, op, root, false, iter), context(type, opLabel, size, "warm-up"));
      }
    }
    for (int cycle = 0; o_.runCycles == 0 || cycle < o_.runCycles; ++cycle) {
      for (size_t size : sizeSchedule(o_.minBytes, o_.maxBytes, o_.stepBytes, o_.stepFactor)) {
        setup(size, type);
        const size_t ws = typeSize(type);
        std::string row = rowStart(std::max(sendBytes_, expectedBytes_), nbytes_ / ws, typeName(type), opLabel, root);
        for (bool inPlace : {false, true}) {
          auto half = benchTime(type, op, root, inPlace);
          if (!half.isOk()) {
            return std::move(half).takeStatus().withContext(
                context(type, opLabel, size, inPlace ? "in-place" : "out-of-place"));
          }
          row += *half;
        }
        print(row + "\n");
        showProgress(type, opLabel, size);
      }
    }
    return Status::ok();
  }

  // One half of a row: timed iterations, then the checked ones.
  Result<std::string> benchTime(DataType type, RedOp op, int root, bool inPlace) {
    const size_t ws = typeSize(type);
    const size_t count = nbytes_ / ws;
    if (o_.check > 0) initData(type, op, root, 99, inPlace, false);
    WEFT_TRY(startColl(type, op, root, inPlace, 0));  // sync
    WEFT_TRY(barrier());

    const auto t0 = Clock::now();
    for (int iter = 0; iter < o_.iters; ++iter) {
      if (o_.aggIters > 1) WEFT_TRY(call(weft_group_start(), "weft_group_start"));
      for (int a = 0; a < o_.aggIters; ++a) WEFT_TRY(startColl(type, op, root, inPlace, iter * o_.aggIters + a));
      if (o_.aggIters > 1) WEFT_TRY(call(weft_group_end(), "weft_group_end"));
    }
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count() / (o_.iters * o_.aggIters);
    WEFT_ASSIGN_OR_RETURN(seconds, combine<double>(seconds, static_cast<Combine>(o_.average)));
    const Bandwidth bw = bandwidth(o_.coll, count, ws, seconds, n_);
    WEFT_TRY(barrier());

    int64_t wrong = 0;
    ++rep_;
    for (int c = 0; c < o_.check; ++c) {
      initData(type, op, root, rep_, inPlace, true);
      WEFT_TRY(startColl(type, op, root, inPlace, 0));
      int64_t mine = checkData(type, op, inPlace);
      if (reportErrors_ && mine != 0) ++errors_;
      WEFT_ASSIGN_OR_RETURN(wrong, combine<int64_t>(mine, Combine::kSum));
      if (wrong != 0) break;
    }
    bwSum_ += bw.bus;
    ++bwCount_;
    return rowResult(seconds * 1.0E6, bw.alg, bw.bus, reportErrors_, wrong);
  }

  // The counts of one size (setupArgs), in bytes.
  void setup(size_t size, DataType type) {
    const size_t ws = typeSize(type);
    Counts c = collCounts(o_.coll, size / ws, ws, n_);
    nbytes_ = c.param * ws;
    sendBytes_ = c.send * ws;
    expectedBytes_ = c.recv * ws;
    sendInplaceOffset_ = c.sendInplaceOffset * ws;
    recvInplaceOffset_ = c.recvInplaceOffset * ws;
  }

  Status startColl(DataType type, RedOp op, int root, bool inPlace, int iter) {
    const size_t count = nbytes_ / typeSize(type);
    // nccl-tests moves the buffers along each iteration, against cache effects.
    const size_t total = std::max(sendBytes_, expectedBytes_);
    const size_t steps = total ? o_.maxBytes / total : 1;
    const size_t shift = total * (static_cast<size_t>(iter) % steps);
    char* recvBuff = recv_.get() + shift;
    char* sendBuff = send_.get() + shift;
    const size_t r = static_cast<size_t>(rank_);
    const void* sptr = inPlace ? recvBuff + sendInplaceOffset_ * r : sendBuff;
    void* rptr = inPlace ? recvBuff + recvInplaceOffset_ * r : recvBuff;

    weft_redop_t wop = static_cast<weft_redop_t>(op);
    if (op == RedOp::kMulSum) {
      uint64_t scalar = premulScalar(type, rank_);
      WEFT_TRY(call(weft_redop_create_pre_mul_sum(&wop, &scalar, toWeft(type), weftScalarHostImmediate, comm_),
                    "weft_redop_create_pre_mul_sum"));
    }
    Status s = runColl(sptr, rptr, count, type, wop, root);
    if (op == RedOp::kMulSum) {
      Status d = call(weft_redop_destroy(wop, comm_), "weft_redop_destroy");
      if (s.isOk()) s = std::move(d);
    }
    WEFT_TRY(std::move(s));
    if (o_.blocking) WEFT_TRY(barrier());
    return Status::ok();
  }

  Status runColl(const void* send, void* recv, size_t count, DataType type, weft_redop_t op, int root) {
    const weft_datatype_t t = toWeft(type);
    switch (o_.coll) {
      case Coll::kAllReduce:
        return call(weft_allreduce(send, recv, count, t, op, comm_, nullptr), "weft_allreduce");
      case Coll::kAllGather:
        return call(weft_allgather(send, recv, count, t, comm_, nullptr), "weft_allgather");
      case Coll::kBroadcast:
        return call(weft_broadcast(send, recv, count, t, root, comm_, nullptr), "weft_broadcast");
      case Coll::kReduce:
        return call(weft_reduce(send, recv, count, t, op, root, comm_, nullptr), "weft_reduce");
      case Coll::kReduceScatter:
        return call(weft_reduce_scatter(send, recv, count, t, op, comm_, nullptr), "weft_reduce_scatter");
      case Coll::kAllToAll:
        return call(weft_alltoall(send, recv, count, t, comm_, nullptr), "weft_alltoall");
      case Coll::kSendRecv: {
        // sendrecv.cu: a ring shift, sending to rank + 1 and receiving from rank - 1, in one group.
        Status s = call(weft_group_start(), "weft_group_start");
        if (!s.isOk()) return s;
        s = call(weft_send(send, count, t, (rank_ + 1) % n_, comm_, nullptr), "weft_send");
        if (s.isOk()) s = call(weft_recv(recv, count, t, (rank_ - 1 + n_) % n_, comm_, nullptr), "weft_recv");
        Status end = call(weft_group_end(), "weft_group_end");
        return s.isOk() ? end : s;
      }
    }
    return internalError("unknown collective");
  }

  // InitData of each test: the inputs, and (withExpected) what the receive buffer must hold.
  void initData(DataType type, RedOp op, int root, uint64_t seed, bool inPlace, bool withExpected) {
    const size_t ws = typeSize(type);
    const size_t sendCount = sendBytes_ / ws, recvCount = expectedBytes_ / ws;
    const size_t r = static_cast<size_t>(rank_), n = static_cast<size_t>(n_);
    char* recv = recv_.get();
    char* exp = expected_.get();
    char* data = inPlace ? recv : send_.get();
    std::memset(recv, 0, expectedBytes_);
    switch (o_.coll) {
      case Coll::kAllReduce:
        fillReduceInput(data, sendCount, type, op, n_, rank_, seed, 0);
        if (withExpected) fillReduceExpected(exp, recvCount, type, op, n_, seed, 0);
        break;
      case Coll::kAllGather:
        if (inPlace) data = recv + r * sendBytes_;
        fillCopy(data, sendCount, type, 33 * seed + r, 0);
        for (size_t j = 0; withExpected && j < n; ++j)
          fillCopy(exp + sendBytes_ * j, sendCount, type, 33 * seed + j, 0);
        break;
      case Coll::kBroadcast:
        if (rank_ == root) fillCopy(data, sendCount, type, seed, 0);
        if (withExpected) fillCopy(exp, recvCount, type, seed, 0);
        break;
      case Coll::kReduce:
        fillReduceInput(data, sendCount, type, op, n_, rank_, seed, 0);
        if (withExpected) {
          std::memcpy(exp, recv, expectedBytes_);  // non-roots: the receive buffer stays as it is
          if (rank_ == root) fillReduceExpected(exp, recvCount, type, op, n_, seed, 0);
        }
        break;
      case Coll::kReduceScatter:
        fillReduceInput(data, sendCount, type, op, n_, rank_, seed, 0);
        if (withExpected) fillReduceExpected(exp, recvCount, type, op, n_, seed, r * recvCount);
        break;
      case Coll::kAllToAll: {
        fillCopy(data, sendCount, type, 33 * seed + r, 0);
        const size_t part = sendCount / n;
        for (size_t j = 0; withExpected && j < n; ++j)
          fillCopy(exp + j * part * ws, part, type, 33 * seed + j, r * part);
        reportErrors_ = !inPlace;  // alltoall.cu: in place is not supported, so not checked
        break;
      }
      case Coll::kSendRecv: {
        fillCopy(data, sendCount, type, seed, r * sendCount);
        const size_t peer = (r + n - 1) % n;
        if (withExpected) fillCopy(exp, recvCount, type, seed, peer * recvCount);
        reportErrors_ = !inPlace;  // sendrecv.cu: in place sends and receives in the same buffer
        break;
      }
    }
  }

  int64_t checkData(DataType type, RedOp op, bool inPlace) {
    const char* data = recv_.get() + (inPlace ? recvInplaceOffset_ * static_cast<size_t>(rank_) : 0);
    return countWrong(data, expected_.get(), expectedBytes_ / typeSize(type), type, op, info_.reduces);
  }

  // ---- Exchanges between the ranks, over weft_send/weft_recv (rank 0 gathers and answers) ----

  Status call(weft_result_t r, const char* what) const { return r == weftSuccess ? Status::ok() : weftError(what, r); }

  // Rank 0 receives `bytes` from every other rank into all + r * bytes; the others send theirs.
  Status gather(const void* mine, size_t bytes, char* all) {
    if (rank_ != 0) return call(weft_send(mine, bytes, weftUint8, 0, comm_, nullptr), "weft_send");
    WEFT_TRY(call(weft_group_start(), "weft_group_start"));
    Status s;
    for (int r = 1; r < n_ && s.isOk(); ++r) {
      s = call(weft_recv(all + static_cast<size_t>(r) * bytes, bytes, weftUint8, r, comm_, nullptr), "weft_recv");
    }
    Status end = call(weft_group_end(), "weft_group_end");
    return s.isOk() ? end : s;
  }

  Status broadcast(void* data, size_t bytes) {
    if (rank_ != 0) return call(weft_recv(data, bytes, weftUint8, 0, comm_, nullptr), "weft_recv");
    WEFT_TRY(call(weft_group_start(), "weft_group_start"));
    Status s;
    for (int r = 1; r < n_ && s.isOk(); ++r)
      s = call(weft_send(data, bytes, weftUint8, r, comm_, nullptr), "weft_send");
    Status end = call(weft_group_end(), "weft_group_end");
    return s.isOk() ? end : s;
  }

  template <typename T>
  Result<T> combine(T mine, Combine how) {
    if (n_ == 1 || how == Combine::kRank0) return mine;  // rank 0 prints its own
    std::vector<T> all(static_cast<size_t>(n_), mine);
    WEFT_TRY(gather(&mine, sizeof(T), reinterpret_cast<char*>(all.data())));
    T result = all[0];
    for (size_t r = 1; r < all.size(); ++r) {
      switch (how) {
        case Combine::kMin:
          result = std::min(result, all[r]);
          break;
        case Combine::kMax:
          result = std::max(result, all[r]);
          break;
        default:
          result += all[r];
          break;
      }
    }
    if (how == Combine::kAvg) result /= static_cast<T>(n_);
    WEFT_TRY(broadcast(&result, sizeof(T)));
    return result;
  }

  Status barrier() {
    if (n_ == 1) return Status::ok();
    auto r = combine<int64_t>(0, Combine::kSum);
    return std::move(r).takeStatus();
  }

  // ---- Output (rank 0) ----

  void print(const std::string& text) {
    if (rank_ != 0) return;
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    if (o_.keepText) printed_ += text;
  }

  Status printPreamble() {
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    int device = 0;
    WEFT_TRY(call(weft_comm_cu_device(comm_, &device), "weft_comm_cu_device"));
    std::array<char, 512> mine{};
    std::string line = deviceLine(rank_, 0, static_cast<int>(::getpid()), host, device, kDeviceName);
    std::memcpy(mine.data(), line.data(), std::min(line.size(), mine.size() - 1));
    std::vector<std::array<char, 512>> lines(static_cast<size_t>(n_), mine);
    WEFT_TRY(gather(mine.data(), mine.size(), reinterpret_cast<char*>(lines.data())));
    if (rank_ != 0) return Status::ok();
    RunParams p;
    p.program = info_.program;
    p.headersVersion = WEFT_VERSION_MAJOR * 10000 + WEFT_VERSION_MINOR * 100 + WEFT_VERSION_PATCH;
    p.libraryVersion = weft_version_code();
    p.minBytes = o_.minBytes;
    p.maxBytes = o_.maxBytes;
    p.stepBytes = o_.stepBytes;
    p.stepFactor = o_.stepFactor;
    p.warmupIters = o_.warmupIters;
    p.iters = o_.iters;
    p.aggIters = o_.aggIters;
    p.check = o_.check;
    p.blocking = o_.blocking;
    std::string text = perf::preamble(p);
    for (const auto& l : lines) text += l.data();
    print(text);
    return Status::ok();
  }

  std::string context(DataType type, const char* opLabel, size_t size, const char* phase) const {
    return std::string(info_.command) + " " + typeName(type) + " " + opLabel + ", " + std::to_string(size) +
           " bytes, " + phase + " (rank " + std::to_string(rank_) + ")";
  }

  // Rows go to stdout as nccl-tests prints them; when that is a file, a long run says on the
  // terminal how far it got.
  void showProgress(DataType type, const char* opLabel, size_t size) const {
    if (!progress_) return;
    double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    if (elapsed < 2) return;
    std::fprintf(stderr, "weft perf: %s %s %s, %zu bytes done after %.1f s\n", info_.command, typeName(type), opLabel,
                 size, elapsed);
  }

  const Options& o_;
  const CollInfo& info_;
  weft_comm_t* comm_;
  int rank_, n_;
  bool progress_ = false;
  Buffer send_, recv_, expected_;
  size_t nbytes_ = 0, sendBytes_ = 0, expectedBytes_ = 0, sendInplaceOffset_ = 0, recvInplaceOffset_ = 0;
  bool reportErrors_ = false;
  int64_t errors_ = 0;
  double bwSum_ = 0;
  int bwCount_ = 0;
  uint64_t rep_ = 0;
  Clock::time_point start_;
  std::string printed_;
};

}  // namespace

Result<Outcome> runBenchmark(const Options& options, weft_comm_t* comm, int rank, int nranks) {
  Bench bench(options, comm, rank, nranks);
  return bench.run();
}

}  // namespace weft::tool::perf
