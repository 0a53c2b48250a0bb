// Collectives of real processes against results the test computes itself: every collective ×
// datatype × op for n = 1, 2, 3, 4, 5 and 8 ranks, in place and out of place, counts 0, 1, 7, a
// prime, and sizes above channels × chunk; inside groups; PreMulSum. Inputs are small integers,
// so sums, products, minima and maxima are exact in every type and every reduction order
// (compared bit for bit); float averages are compared within NCCL's tolerance.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ranks.h"
#include "tests/support/sanitizer.h"

namespace weft::testing {
namespace {

bool isFloat(weft_datatype_t t) { return t >= weftFloat16; }
bool isSigned(weft_datatype_t t) { return t == weftInt8 || t == weftInt32 || t == weftInt64; }

// The bits of the small integer `v` (|v| <= 64) in type `t`, written independently of weft's
// conversions: an integer 1.m × 2^e has an exact encoding in every format.
uint64_t encode(weft_datatype_t t, double v) {
  switch (t) {
    case weftInt8: case weftUint8: return static_cast<uint8_t>(static_cast<int64_t>(v));
    case weftInt32: case weftUint32: return static_cast<uint32_t>(static_cast<int64_t>(v));
    case weftInt64: case weftUint64: return static_cast<uint64_t>(static_cast<int64_t>(v));
    case weftFloat32: {
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case weftFloat64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    case weftBfloat16: return encode(weftFloat32, v) >> 16;
    default: break;
  }
  // half (5 exponent bits, 10 mantissa), e4m3 (4, 3), e5m2 (5, 2)
  int ebits = t == weftFloat8e4m3 ? 4 : 5;
  int mbits = t == weftFloat16 ? 10 : t == weftFloat8e4m3 ? 3 : 2;
  uint64_t sign = v < 0 ? 1 : 0;
  double a = std::fabs(v);
  if (a == 0) return sign << (ebits + mbits);
  int e = static_cast<int>(std::floor(std::log2(a)));
  uint64_t m = static_cast<uint64_t>((a / std::ldexp(1.0, e) - 1.0) * std::ldexp(1.0, mbits));
  int bias = (1 << (ebits - 1)) - 1;
  return sign << (ebits + mbits) | static_cast<uint64_t>(e + bias) << mbits | m;
}

double decode(weft_datatype_t t, uint64_t b) {
  switch (t) {
    case weftInt8: return static_cast<int8_t>(b);
    case weftUint8: return static_cast<uint8_t>(b);
    case weftInt32: return static_cast<int32_t>(b);
    case weftUint32: return static_cast<uint32_t>(b);
    case weftInt64: return static_cast<double>(static_cast<int64_t>(b));
    case weftUint64: return static_cast<double>(b);
    case weftFloat32: {
      float f;
      uint32_t u = static_cast<uint32_t>(b);
      std::memcpy(&f, &u, 4);
      return f;
    }
    case weftFloat64: {
      double d;
      std::memcpy(&d, &b, 8);
      return d;
    }
    case weftBfloat16: return decode(weftFloat32, b << 16);
    default: break;
  }
  int ebits = t == weftFloat8e4m3 ? 4 : 5;
  int mbits = t == weftFloat16 ? 10 : t == weftFloat8e4m3 ? 3 : 2;
  int bias = (1 << (ebits - 1)) - 1;
  double sign = (b >> (ebits + mbits)) & 1 ? -1 : 1;
  int e = static_cast<int>((b >> mbits) & ((1u << ebits) - 1));
  double m = static_cast<double>(b & ((1u << mbits) - 1));
  if (e == 0) return sign * std::ldexp(m, 1 - bias - mbits);
  return sign * std::ldexp(1.0 + m / std::ldexp(1.0, mbits), e - bias);
}

void put(void* buf, weft_datatype_t t, size_t i, uint64_t bits) {
  std::memcpy(static_cast<char*>(buf) + i * weft_datatype_size(t), &bits, weft_datatype_size(t));
}
uint64_t get(const void* buf, weft_datatype_t t, size_t i) {
  uint64_t b = 0;
  std::memcpy(&b, static_cast<const char*>(buf) + i * weft_datatype_size(t), weft_datatype_size(t));
  return b;
}

// Rank r's input element i for op `op`: small integers whose reductions are exact everywhere.
double input(int r, size_t i, weft_redop_t op, weft_datatype_t t) {
  unsigned k = static_cast<unsigned>(r) * 7u + static_cast<unsigned>(i % 1031) * 3u;
  if (op == weftProd) return (k % 5 == 0) ? 2 : 1;
  double v = k % 3;
  if ((op == weftMin || op == weftMax) && (isSigned(t) || isFloat(t))) v -= 1;
  return v;
}

double expected(int n, size_t i, weft_redop_t op, weft_datatype_t t) {
  double acc = input(0, i, op, t);
  for (int r = 1; r < n; ++r) {
    double x = input(r, i, op, t);
    if (op == weftSum || op == weftAvg) acc += x;
    else if (op == weftProd) acc *= x;
    else if (op == weftMax) acc = std::max(acc, x);
    else acc = std::min(acc, x);
  }
  if (op == weftAvg) acc = isFloat(t) ? acc / n : std::trunc(acc / n);
  return acc;
}

bool matches(weft_datatype_t t, weft_redop_t op, uint64_t got, double want) {
  if (op == weftAvg && isFloat(t)) {
    // NCCL's Avg on floats is a PreMulSum by 1/n rounded to the type at every hop.
    double tol = t == weftFloat8e4m3 || t == weftFloat8e5m2 ? 0.3 : t == weftFloat16 || t == weftBfloat16 ? 0.02 : 1e-5;
    return std::fabs(decode(t, got) - want) <= tol * std::max(1.0, std::fabs(want));
  }
  return got == encode(t, want);
}

struct Case {
  const char* coll;
  weft_datatype_t type;
  weft_redop_t op;
  size_t count;
  bool inPlace;
  int root;
};

std::string describe(const Case& c) {
  return std::string(c.coll) + " type " + std::to_string(c.type) + " op " + std::to_string(c.op) + " count " +
         std::to_string(c.count) + (c.inPlace ? " in place" : " out of place") + " root " + std::to_string(c.root);
}

// Runs one case on `comm` and checks every element of the output.
int runCase(weft_comm_t* comm, int rank, int n, const Case& c) {
  weft_datatype_t t = c.type;
  size_t elt = weft_datatype_size(t);
  std::string coll = c.coll;
  bool gather = coll == "allgather";
  bool scatter = coll == "reduce_scatter";
  bool a2a = coll == "alltoall";
  size_t inCount = scatter || a2a ? c.count * static_cast<size_t>(n) : c.count;
  size_t outCount = gather || a2a ? c.count * static_cast<size_t>(n) : c.count;
  std::vector<char> in(std::max<size_t>(1, inCount) * elt), out(std::max<size_t>(1, std::max(inCount, outCount)) * elt, 0x5a);
  // Input: for allgather and alltoall the values also say where they came from.
  auto value = [&](int r, size_t i) {
    return gather || a2a ? static_cast<double>((r * 5 + static_cast<int>(i % 7)) % 11) : input(r, i, c.op, t);
  };
  for (size_t i = 0; i < inCount; ++i) put(in.data(), t, i, encode(t, a2a ? value(rank, i) : value(rank, i)));
  void* recv = out.data();
  const void* send = in.data();
  if (c.inPlace) {
    // NCCL's in-place layouts: allgather's input is the rank's block of the output,
    // reduce_scatter's output is the rank's block of the input.
    if (gather) {
      std::memcpy(out.data() + static_cast<size_t>(rank) * c.count * elt, in.data(), c.count * elt);
      send = out.data() + static_cast<size_t>(rank) * c.count * elt;
    } else {
      std::memcpy(out.data(), in.data(), inCount * elt);
      send = out.data();
      if (scatter) recv = out.data() + static_cast<size_t>(rank) * c.count * elt;
    }
  }
  weft_result_t rc = weftInternalError;
  if (coll == "allreduce") rc = weft_allreduce(send, recv, c.count, t, c.op, comm, nullptr);
  else if (coll == "reduce") rc = weft_reduce(send, recv, c.count, t, c.op, c.root, comm, nullptr);
  else if (coll == "broadcast") rc = weft_broadcast(send, recv, c.count, t, c.root, comm, nullptr);
  else if (gather) rc = weft_allgather(send, recv, c.count, t, comm, nullptr);
  else if (scatter) rc = weft_reduce_scatter(send, recv, c.count, t, c.op, comm, nullptr);
  else if (a2a) rc = weft_alltoall(send, recv, c.count, t, comm, nullptr);
  RANK_CHECK(rc == weftSuccess, "rank %d %s: %s", rank, describe(c).c_str(), weft_last_error());
  for (size_t i = 0; i < outCount; ++i) {
    double want;
    if (coll == "allreduce") want = expected(n, i, c.op, t);
    else if (coll == "reduce") {
      if (rank != c.root) break;  // only the root's output is defined
      want = expected(n, i, c.op, t);
    } else if (coll == "broadcast") want = input(c.root, i, c.op, t);
    else if (gather) want = value(static_cast<int>(i / c.count), i % c.count);
    else if (scatter) want = expected(n, static_cast<size_t>(rank) * c.count + i, c.op, t);
    else want = value(static_cast<int>(i / c.count), static_cast<size_t>(rank) * c.count + i % c.count);
    uint64_t got = get(recv, t, i);
    RANK_CHECK(matches(t, (coll == "allreduce" || coll == "reduce" || scatter) ? c.op : weftSum, got, want),
               "rank %d %s: element %zu is %g (bits 0x%llx), expected %g", rank, describe(c).c_str(), i, decode(t, got),
               static_cast<unsigned long long>(got), want);
  }
  return 0;
}

// Every case of the matrix; with `allReduceOnly` (NCCL_ALGO=Tree, whose only collective is
// AllReduce) just the allreduce cases.
int allCases(weft_comm_t* comm, int rank, int n, bool allReduceOnly = false) {
  const weft_redop_t ops[] = {weftSum, weftProd, weftMax, weftMin, weftAvg};
  std::vector<const char*> reductions = {"allreduce", "reduce", "reduce_scatter"};
  std::vector<const char*> moves = {"broadcast", "allgather", "alltoall"};
  if (allReduceOnly) {
    reductions = {"allreduce"};
    moves.clear();
  }
  for (int ti = 0; ti < 12; ++ti) {
    auto t = static_cast<weft_datatype_t>(ti);
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1009}}) {
      for (bool inPlace : {false, true}) {
        for (const char* coll : reductions)
          for (weft_redop_t op : ops)
            if (runCase(comm, rank, n, {coll, t, op, count, inPlace, n - 1}) != 0) return 1;
        for (const char* coll : moves) {
          // In-place alltoall would receive a block over the one it is sending: not supported.
          if (inPlace && std::string(coll) == "alltoall") continue;
          if (runCase(comm, rank, n, {coll, t, weftSum, count, inPlace, n / 2}) != 0) return 1;
        }
      }
    }
  }
  // Above channels x chunk (2 MiB chunks on up to 4 channels), a prime count.
  std::vector<const char*> large = {"allreduce", "reduce_scatter", "allgather", "broadcast", "reduce"};
  if (allReduceOnly) large.resize(1);
  for (const char* coll : large) {
    if (runCase(comm, rank, n, {coll, weftFloat32, weftSum, 2097169, false, 0}) != 0) return 1;
    if (runCase(comm, rank, n, {coll, weftInt8, weftMax, 8388617, true, n - 1}) != 0) return 1;
  }
  return 0;
}

// A job of `spec` whose every rank runs `body(comm, rank, nranks)` between init and destroy;
// expects every rank to pass and nothing to be left behind.
void expectCommJob(const JobSpec& spec, const std::function<int(weft_comm_t*, int, int)>& body) {
  const int n = spec.nranks;
  auto out = runJob(spec, [n, &body](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, n, id, rank));
    if (body(comm, rank, n) != 0) return 1;
    RANK_OK(weft_comm_destroy(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

class CommCollectives : public ::testing::TestWithParam<int> {};

TEST_P(CommCollectives, EveryCollectiveTypeAndOpAgainstTheTestsOwnResults) {
  JobSpec spec;
  spec.nranks = GetParam();
  spec.deadline = std::chrono::seconds(400);
  // Single-copy steps at every rank count, also where the ranks outnumber the CPUs (auto would
  // use the slots there); the small-buffer test below keeps every step in the slots.
  spec.env[-1]["WEFT_SHM_SINGLE_COPY"] = "1";
  expectCommJob(spec, [](weft_comm_t* comm, int rank, int n) { return allCases(comm, rank, n); });
}

// Under a sanitizer, the rank counts that take the distinct paths (one rank, a pair, odd rings)
// without the slowest ones (4 and 8 ranks took 110 and 200 s under ASan on two cores).
INSTANTIATE_TEST_SUITE_P(OneHost, CommCollectives,
                         ::testing::ValuesIn(test::plainOrSanitized<int>({1, 2, 3, 4, 5, 8}, {1, 2, 3, 5})),
                         [](const auto& p) { return std::to_string(p.param) + "ranks"; });

// The same matrix with the ranks on two hosts (NCCL_HOSTID: the first half on one, the rest on
// the other), so the rings and trees cross them through the socket plugin over loopback: its
// sends of large collectives go straight from the caller's buffers (postFrom), in place too.
struct HostsCase {
  int nranks;
  const char* algo;  // NCCL_ALGO, "" for the default
};

void PrintTo(const HostsCase& c, std::ostream* os) { *os << c.nranks << " ranks" << (*c.algo ? ", " : "") << c.algo; }

class CommCollectivesHosts : public ::testing::TestWithParam<HostsCase> {};

TEST_P(CommCollectivesHosts, EveryCollectiveTypeAndOpAcrossTwoHosts) {
  JobSpec spec;
  spec.nranks = GetParam().nranks;
  spec.deadline = std::chrono::seconds(400);
  const int nranks = spec.nranks;
  bool tree = std::string(GetParam().algo) == "Tree";
  spec.env[-1] = {{"NCCL_SOCKET_IFNAME", "lo"}, {"NCCL_NET", "Socket"}};
  if (tree) spec.env[-1]["NCCL_ALGO"] = "Tree";
  for (int r = 0; r < nranks; ++r) spec.env[r]["NCCL_HOSTID"] = r < (nranks + 1) / 2 ? "coll-hostA" : "coll-hostB";
  expectCommJob(spec, [tree](weft_comm_t* comm, int rank, int n) { return allCases(comm, rank, n, tree); });
}

INSTANTIATE_TEST_SUITE_P(TwoHosts, CommCollectivesHosts,
                         ::testing::Values(HostsCase{2, ""}, HostsCase{3, ""}, HostsCase{4, "Tree"}),
                         [](const auto& p) { return std::to_string(p.param.nranks) + "ranks" + p.param.algo; });

// NCCL_ALGO=Tree: allreduce over the trees (one host: NCCL's chain), every case; the other
// collectives have no Tree schedule and fail as NCCL fails them; results are the same bits on
// every rank and every run.
class CommCollectivesTree : public ::testing::TestWithParam<int> {};

// A hash of `n` bytes (FNV-1a): ranks compare their results through an allgather of it.
uint64_t hashBytes(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  return h;
}

// Floats whose sum depends on the order of the additions, `count` of them: allreduced twice, the
// same bits on every rank and in both runs.
int sameBitsEverywhere(weft_comm_t* comm, int rank, int n, size_t count) {
  std::vector<float> in(count), r1(count), r2(count);
  for (size_t i = 0; i < count; ++i)
    in[i] = static_cast<float>(std::sin(static_cast<double>(i * 7 + static_cast<size_t>(rank) * 13))) * 1e3f;
  RANK_OK(weft_allreduce(in.data(), r1.data(), count, weftFloat32, weftSum, comm, nullptr));
  RANK_OK(weft_allreduce(in.data(), r2.data(), count, weftFloat32, weftSum, comm, nullptr));
  RANK_CHECK(std::memcmp(r1.data(), r2.data(), count * sizeof(float)) == 0, "rank %d: two runs differ", rank);
  // Every rank's result hash to rank 0 (point-to-point: NCCL_ALGO does not apply to it).
  uint64_t mine = hashBytes(r1.data(), count * sizeof(float));
  std::vector<uint64_t> all(static_cast<size_t>(n), mine);
  RANK_OK(weft_group_start());
  if (rank != 0) RANK_OK(weft_send(&mine, 1, weftUint64, 0, comm, nullptr));
  for (int r = 1; rank == 0 && r < n; ++r) RANK_OK(weft_recv(&all[static_cast<size_t>(r)], 1, weftUint64, r, comm, nullptr));
  RANK_OK(weft_group_end());
  for (int r = 0; r < n; ++r)
    RANK_CHECK(all[static_cast<size_t>(r)] == mine, "rank %d's result differs from rank 0's", r);
  return 0;
}

TEST_P(CommCollectivesTree, AllReduceOverTheTreesEveryTypeAndOp) {
  JobSpec spec;
  spec.nranks = GetParam();
  spec.deadline = std::chrono::seconds(300);
  spec.env[-1]["NCCL_ALGO"] = "Tree";
  expectCommJob(spec, [](weft_comm_t* comm, int rank, int n) {
    if (allCases(comm, rank, n, true) != 0) return 1;
    // Broadcast has only Ring: NCCL's invalid-usage error, with its wording.
    std::vector<float> v(16, 1.0f);
    weft_result_t rc = weft_broadcast(v.data(), v.data(), v.size(), weftFloat32, 0, comm, nullptr);
    RANK_CHECK(rc == weftInvalidUsage, "broadcast with NCCL_ALGO=Tree returned %d", static_cast<int>(rc));
    RANK_CHECK(std::strstr(weft_last_error(), "no algorithm/protocol available for function Broadcast with datatype "
                                              "ncclFloat32. NCCL_ALGO was set to Tree.") != nullptr,
               "%s", weft_last_error());
    return sameBitsEverywhere(comm, rank, n, 300007);
  });
}

INSTANTIATE_TEST_SUITE_P(OneHost, CommCollectivesTree, ::testing::Values(1, 2, 3, 4, 5, 8),
                         [](const auto& p) { return std::to_string(p.param) + "ranks"; });

// WEFT_HOST_ALGO=doubling: allreduce by recursive doubling at every size (the cost model picks it
// only for small buffers), every case: one exchange on 2 ranks, the fold on 3, 5 and 8's
// neighbours; results are the same bits on every rank (each reduction puts the lower ranks'
// operand first), also for a buffer of several chunks.
class CommCollectivesDoubling : public ::testing::TestWithParam<int> {};

TEST_P(CommCollectivesDoubling, AllReduceByRecursiveDoublingEveryTypeAndOp) {
  JobSpec spec;
  spec.nranks = GetParam();
  spec.deadline = std::chrono::seconds(300);
  spec.env[-1]["WEFT_HOST_ALGO"] = "doubling";
  expectCommJob(spec, [](weft_comm_t* comm, int rank, int n) {
    if (allCases(comm, rank, n, true) != 0) return 1;
    if (sameBitsEverywhere(comm, rank, n, 5) != 0) return 1;
    return sameBitsEverywhere(comm, rank, n, 300007);
  });
}

INSTANTIATE_TEST_SUITE_P(OneHost, CommCollectivesDoubling,
                         ::testing::ValuesIn(test::plainOrSanitized<int>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 5, 8})),
                         [](const auto& p) { return std::to_string(p.param) + "ranks"; });

// The algorithm of an allreduce on CPU endpoints as rank 0's TUNING lines show it: recursive
// doubling for 8 bytes (the cost model's pick), Ring for 1 MiB; NCCL_ALGO=Ring and
// WEFT_HOST_ALGO=nccl keep Ring at every size.
std::string tuningOfRankZero(const std::map<std::string, std::string>& env) {
  JobSpec spec;
  spec.nranks = 4;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1] = env;
  spec.env[-1]["NCCL_DEBUG"] = "INFO";
  spec.env[-1]["NCCL_DEBUG_SUBSYS"] = "TUNING";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 4, id, rank));
    std::vector<float> v(size_t{1} << 18, 1.0f);
    for (size_t count : {size_t{2}, v.size()}) {
      RANK_OK(weft_allreduce(v.data(), v.data(), count, weftFloat32, weftSum, comm, nullptr));
      RANK_CHECK(v[0] == (count == 2 ? 4.0f : 16.0f), "rank %d: %zu floats: %g", rank, count, double(v[0]));
    }
    RANK_OK(weft_comm_destroy(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  return out.empty() ? "" : out[0].output;
}

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

TEST(CommAlgorithmChoice, SmallAllReducesRunRecursiveDoublingUnlessNcclAlgoIsSet) {
  std::string picked = tuningOfRankZero({});
  // " (oversubscribed)" where the 4 ranks have fewer CPUs than that (as on a 2-CPU CI machine).
  EXPECT_TRUE(has(picked, "AllReduce: 8 Bytes on 4 ranks, 1 hosts: CPU cost model Ring ") ||
              has(picked, "AllReduce: 8 Bytes on 4 ranks, 1 hosts (oversubscribed): CPU cost model Ring "))
      << picked;
  EXPECT_TRUE(has(picked, "AllReduce: 8 Bytes -> Algo RECURSIVE_DOUBLING proto SIMPLE")) << picked;
  EXPECT_TRUE(has(picked, "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE")) << picked;
  for (auto env : {std::map<std::string, std::string>{{"NCCL_ALGO", "Ring"}},
                   std::map<std::string, std::string>{{"WEFT_HOST_ALGO", "nccl"}}}) {
    std::string ring = tuningOfRankZero(env);
    EXPECT_TRUE(has(ring, "AllReduce: 8 Bytes -> Algo RING proto SIMPLE")) << ring;
    EXPECT_FALSE(has(ring, "RECURSIVE_DOUBLING")) << ring;
  }
}

// NCCL_BUFFSIZE below the default: the ring chunk is 4 of its steps (NCCL's stepSize *
// chunkSteps), so a primitive never needs more than the 8 slots its peer can free. A chunk fixed
// at the default's 2 MiB took 128 slots of 16 KiB here and deadlocked. Steps of 16 KiB are
// below the single-copy size: every step goes through the slots.
class CommCollectivesSmallBuffer : public ::testing::TestWithParam<int> {};

TEST_P(CommCollectivesSmallBuffer, RingChunksFollowTheStepSize) {
  JobSpec spec;
  spec.nranks = GetParam();
  spec.deadline = std::chrono::seconds(120);
  spec.env[-1]["NCCL_BUFFSIZE"] = "131072";
  expectCommJob(spec, [](weft_comm_t* comm, int rank, int n) {
    for (const char* coll : {"allreduce", "reduce_scatter", "allgather", "broadcast", "reduce"})
      if (runCase(comm, rank, n, {coll, weftFloat32, weftSum, 1048583, false, n - 1}) != 0) return 1;
    return 0;
  });
}

INSTANTIATE_TEST_SUITE_P(OneHost, CommCollectivesSmallBuffer, ::testing::Values(2, 3),
                         [](const auto& p) { return std::to_string(p.param) + "ranks"; });

// 64 MiB allreduce, inside a group with other collectives, and a PreMulSum op.
TEST(CommCollectivesLarge, AllReduce64MiBGroupsAndPreMulSum) {
  JobSpec spec;
  spec.nranks = 3;
  spec.deadline = std::chrono::seconds(300);
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 3, id, rank));
    const size_t count = (size_t{64} << 20) / 4;
    std::vector<float> a(count), b(count);
    for (size_t i = 0; i < count; ++i) a[i] = static_cast<float>((i + static_cast<size_t>(rank)) % 13);
    RANK_OK(weft_allreduce(a.data(), b.data(), count, weftFloat32, weftSum, comm, nullptr));
    for (size_t i = 0; i < count; ++i) {
      float want = static_cast<float>(i % 13 + (i + 1) % 13 + (i + 2) % 13);
      RANK_CHECK(b[i] == want, "element %zu: %g, expected %g", i, static_cast<double>(b[i]), static_cast<double>(want));
    }
    // Two collectives and a send/recv in one group.
    std::vector<int> x(1000, rank + 1), y(1000), z(3000), p(10, rank), q(10, -1);
    RANK_OK(weft_group_start());
    RANK_OK(weft_allreduce(x.data(), y.data(), x.size(), weftInt32, weftSum, comm, nullptr));
    RANK_OK(weft_allgather(x.data(), z.data(), x.size(), weftInt32, comm, nullptr));
    RANK_OK(weft_send(p.data(), p.size(), weftInt32, (rank + 1) % 3, comm, nullptr));
    RANK_OK(weft_recv(q.data(), q.size(), weftInt32, (rank + 2) % 3, comm, nullptr));
    RANK_OK(weft_group_end());
    RANK_CHECK(y[0] == 6 && y[999] == 6, "group allreduce: %d", y[0]);
    RANK_CHECK(z[0] == 1 && z[1000] == 2 && z[2999] == 3, "group allgather: %d %d %d", z[0], z[1000], z[2999]);
    RANK_CHECK(q[0] == (rank + 2) % 3, "group recv: %d", q[0]);
    // PreMulSum: each rank's input times its own scalar (rank + 1), then summed.
    double scalar = rank + 1;
    weft_redop_t op;
    RANK_OK(weft_redop_create_pre_mul_sum(&op, &scalar, weftFloat64, weftScalarHostImmediate, comm));
    std::vector<double> d(5, 2.0), e(5);
    RANK_OK(weft_allreduce(d.data(), e.data(), d.size(), weftFloat64, op, comm, nullptr));
    RANK_CHECK(e[4] == 12.0, "premulsum: %g, expected 12", e[4]);
    weft_result_t rc = weft_allreduce(d.data(), e.data(), d.size(), weftFloat32, op, comm, nullptr);
    RANK_CHECK(rc == weftInvalidArgument, "an op used with another datatype returned %d", static_cast<int>(rc));
    RANK_OK(weft_redop_destroy(op, comm));
    RANK_CHECK(weft_redop_destroy(op, comm) == weftInvalidArgument, "a second destroy succeeded");
    RANK_OK(weft_comm_destroy(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

// A rank killed during 256 MiB allreduces (steps through the slots) or allgathers (single-copy
// steps read from the sender's buffer): the others' call returns an error naming it within 10 s,
// and abort frees everything.
class CommCollectivesFaults : public ::testing::TestWithParam<const char*> {};

TEST_P(CommCollectivesFaults, RankKilledDuringA256MiBCollective) {
  JobSpec spec;
  spec.nranks = 3;
  spec.deadline = std::chrono::seconds(120);
  const bool gather = std::string(GetParam()) == "allgather";
  spec.env[-1]["WEFT_SHM_SINGLE_COPY"] = "1";  // also where 3 ranks outnumber the CPUs
  auto out = runJob(spec, [gather](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 3, id, rank));
    const size_t count = (size_t{256} << 20) / 4;
    std::vector<float> a(count, 1.0f), b(count);
    auto call = [&] {
      return gather ? weft_allgather(a.data(), b.data(), count / 3, weftFloat32, comm, nullptr)
                    : weft_allreduce(a.data(), b.data(), count, weftFloat32, weftSum, comm, nullptr);
    };
    if (rank == 2) {
      std::thread killer([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        raise(SIGKILL);
      });
      for (;;) (void)call();
    }
    auto t0 = std::chrono::steady_clock::now();
    weft_result_t rc = weftSuccess;
    for (int i = 0; i < 100 && rc == weftSuccess; ++i) rc = call();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    RANK_CHECK(rc == weftRemoteError, "rank %d: returned %d: %s", rank, static_cast<int>(rc), weft_last_error());
    RANK_CHECK(std::strstr(weft_last_error(), "rank 2") != nullptr, "rank %d: %s", rank, weft_last_error());
    RANK_CHECK(s < 10, "rank %d: took %.1f s", rank, s);
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].signal, SIGKILL) << out[2].output;
  out.pop_back();
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

INSTANTIATE_TEST_SUITE_P(OneHost, CommCollectivesFaults, ::testing::Values("allreduce", "allgather"),
                         [](const auto& p) { return std::string(p.param); });

TEST(CommCollectivesThreads, OneGroupAcrossTheRanksOfAProcess) {
  const int n = 4;
  std::vector<weft_comm_t*> comms(n, nullptr);
  ASSERT_EQ(weft_comm_init_all(comms.data(), n, nullptr), weftSuccess) << weft_last_error();
  const size_t count = 3 << 20;
  std::vector<std::vector<int64_t>> in(n, std::vector<int64_t>(count)), out(n, std::vector<int64_t>(count));
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) in[static_cast<size_t>(r)][i] = static_cast<int64_t>(i) * (r + 1);
  ASSERT_EQ(weft_group_start(), weftSuccess);
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(weft_allreduce(in[static_cast<size_t>(r)].data(), out[static_cast<size_t>(r)].data(), count, weftInt64,
                             weftSum, comms[static_cast<size_t>(r)], nullptr),
              weftSuccess);
  ASSERT_EQ(weft_group_end(), weftSuccess) << weft_last_error();
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; i += 4099) ASSERT_EQ(out[static_cast<size_t>(r)][i], static_cast<int64_t>(i) * 10);
  for (weft_comm_t* c : comms) EXPECT_EQ(weft_comm_destroy(c), weftSuccess);
}

}  // namespace
}  // namespace weft::testing
