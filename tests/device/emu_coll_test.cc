// The collective kernel (core/device/kernel.h) on host threads: ranks side by side in this
// process, each launching the kernel on its own thread over FIFOs in host memory, running the
// schedules the host path runs. Every result is compared bit for bit with a reference that runs
// the same schedules one slot at a time with the host path's reduction code (core/coll/reduce.h
// called as core/coll/run.cc calls it), and the integer results also with a plain reduction.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/coll/numeric.h"
#include "core/coll/reduce.h"
#include "core/coll/schedule.h"
#include "core/device/launch.h"
#include "core/device/plan.h"
#include "tests/device/coll_case.h"

namespace weft::device {
namespace {

using coll::Coll;
using coll::RedOp;
using namespace weft::device::devtest;

// ---- the kernel on host threads ----

struct Conn {
  std::vector<char> buff, buffLL;
  alignas(64) uint64_t tail = 0;
  alignas(64) uint64_t head = 0;
};

// Runs c.repeats launches per rank on the same connections; returns false when the watchdog had
// to abort them (a hang).
bool kernelRun(const Case& c, const RedOp& op, const Lanes& lanes, std::vector<Buffers>& runs) {
  std::vector<std::unique_ptr<Conn>> conns;
  std::vector<std::unique_ptr<std::vector<DevStep>>> steps;
  std::vector<std::vector<DevChannel>> channels;
  const bool wired = wireChannels(
      c, lanes,
      [&](size_t, int, int) {
        conns.push_back(std::make_unique<Conn>());
        Conn& k = *conns.back();
        k.buff.assign(static_cast<size_t>(kSteps) * c.stepBytes, 0);
        k.buffLL.assign(static_cast<size_t>(kSteps) * c.stepBytes, 0);
        return ConnMemory{k.buff.data(), k.buffLL.data(), &k.tail, &k.head};
      },
      [&](const std::vector<DevStep>& ds) {
        steps.push_back(std::make_unique<std::vector<DevStep>>(ds));
        return static_cast<const DevStep*>(steps.back()->data());
      },
      &channels);
  EXPECT_TRUE(wired);
  const size_t nch = lanes.empty() ? 0 : lanes[0].size();
  uint64_t abortFlag = 0;
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(60), [&] { return finished; }))
      std::atomic_ref<uint64_t>(abortFlag).store(1, std::memory_order_release);
  });
  for (Buffers& b : runs) {
    std::vector<std::thread> ranks;
    for (int r = 0; r < c.nranks; ++r) {
      ranks.emplace_back([&, r] {
        DevWork w{};
        w.sendbuff = b.in(c, r);
        w.recvbuff = b.out(c, r);
        w.channels = channels[static_cast<size_t>(r)].data();
        w.abortFlag = &abortFlag;
        w.redArg = op.arg;
        w.stepBytes = c.stepBytes;
        w.proto = c.proto;
        w.type = static_cast<uint8_t>(c.type);
        w.red = devRed(op);
        if (nch > 0) {
          EXPECT_TRUE(emulateCollective(w, static_cast<unsigned>(nch), c.nthreads));
        }
      });
    }
    for (std::thread& t : ranks) t.join();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    finished = true;
  }
  cv.notify_all();
  watchdog.join();
  return std::atomic_ref<uint64_t>(abortFlag).load() == 0;
}

void runCase(const Case& c) {
  SCOPED_TRACE(describe(c));
  auto opOr = coll::deviceOp(c.userOp, c.type, c.nranks);
  ASSERT_TRUE(opOr.isOk());
  const RedOp op = *opOr;
  const auto lanes = plan(c);
  std::vector<Buffers> expected, got;
  for (int i = 0; i < c.repeats; ++i) {
    expected.push_back(makeBuffers(c, 1234u + static_cast<uint32_t>(i)));
    got.push_back(expected.back());
    referenceRun(c, op, lanes, expected.back());
  }
  ASSERT_TRUE(kernelRun(c, op, lanes, got)) << "the emulated kernels did not finish within 60 s (aborted)";
  const std::string diff = firstDifference(c, expected, got);
  EXPECT_EQ(diff, "");
}

// The reference itself: integer Sum over the ring and the tree equals a plain sum.
TEST(DeviceEmu, ReferenceAllReduceEqualsAPlainSum) {
  for (Algo algo : {Algo::kRing, Algo::kTree}) {
    Case c;
    c.algo = algo;
    c.type = weftInt32;
    c.nranks = 3;
    c.count = 777;
    auto op = *coll::deviceOp(weftSum, c.type, c.nranks);
    Buffers b = makeBuffers(c, 7);
    referenceRun(c, op, plan(c), b);
    for (size_t i = 0; i < c.count; ++i) {
      int32_t want = 0;
      for (int r = 0; r < c.nranks; ++r) {
        int32_t v;
        std::memcpy(&v, b.send[static_cast<size_t>(r)].data() + i * 4, 4);
        want += v;
      }
      for (int r = 0; r < c.nranks; ++r) {
        int32_t v;
        std::memcpy(&v, b.recv[static_cast<size_t>(r)].data() + i * 4, 4);
        ASSERT_EQ(v, want) << "element " << i << " rank " << r;
      }
    }
  }
}

class DeviceEmuColl : public ::testing::TestWithParam<std::tuple<Coll, int, int>> {};

TEST_P(DeviceEmuColl, EqualsTheHostPathBitForBit) {
  auto [coll, nranks, nchannels] = GetParam();
  // Simple out of place and in place, then LL (in place on an even number of ranks).
  for (int variant = 0; variant < 3; ++variant) {
    Case c;
    c.coll = coll;
    c.nranks = nranks;
    c.nchannels = nchannels;
    c.inPlace = variant == 1 || (variant == 2 && nranks % 2 == 0);
    c.proto = variant == 2 ? kDevLL : kDevSimple;
    c.root = nranks - 1;
    // Enough traffic for two channels (NCCL's cells are 16 KiB), an odd count.
    c.count = nchannels > 1 ? 5001 : 1001;
    c.stepBytes = nchannels > 1 ? 256 : 64;
    ASSERT_EQ(plan(c)[0].size(), static_cast<size_t>(nchannels)) << "the count should fill every channel";
    runCase(c);
    if (::testing::Test::HasFailure()) return;
  }
}


INSTANTIATE_TEST_SUITE_P(
    Ring, DeviceEmuColl,
    ::testing::Combine(::testing::Values(Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter, Coll::kBroadcast,
                                         Coll::kReduce),
                       ::testing::Values(1, 2, 3, 4), ::testing::Values(1, 2)),
    [](const auto& p) {
      return collName(std::get<0>(p.param)) + "_" + std::to_string(std::get<1>(p.param)) + "ranks_" +
             std::to_string(std::get<2>(p.param)) + "ch";
    });

// Every datatype and operator, ring and tree AllReduce on 3 ranks (reductions where the order of
// the operands shows: floats, PreMulSum, integer Avg), and Avg through ReduceScatter and Reduce.
class DeviceEmuTypes : public ::testing::TestWithParam<weft_datatype_t> {};

TEST_P(DeviceEmuTypes, EveryOperatorRingAndTree) {
  for (Algo algo : {Algo::kRing, Algo::kTree}) {
    for (int op : {weftSum, weftProd, weftMax, weftMin, weftAvg}) {
      Case c;
      c.algo = algo;
      c.type = GetParam();
      c.userOp = op;
      c.nranks = 3;
      c.count = 333;
      runCase(c);
      if (::testing::Test::HasFailure()) return;
    }
  }
  // LL: every element width packed into 8-byte lines, ring and tree.
  for (Algo algo : {Algo::kRing, Algo::kTree}) {
    for (int op : {weftSum, weftAvg}) {
      Case c;
      c.algo = algo;
      c.type = GetParam();
      c.userOp = op;
      c.nranks = 3;
      c.count = 333;
      c.proto = kDevLL;
      runCase(c);
      if (::testing::Test::HasFailure()) return;
    }
  }
  // Avg's last reduction (the post-op, integer SumPostDiv) and first (PreMulSum) where ReduceScatter
  // and Reduce make them: recvReduceCopy.
  for (Coll coll : {Coll::kReduceScatter, Coll::kReduce}) {
    Case c;
    c.coll = coll;
    c.type = GetParam();
    c.userOp = weftAvg;
    c.nranks = 3;
    c.root = 1;
    c.count = 201;
    runCase(c);
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(All, DeviceEmuTypes,
                         ::testing::Values(weftInt8, weftUint8, weftInt32, weftUint32, weftInt64, weftUint64,
                                           weftFloat16, weftFloat32, weftFloat64, weftBfloat16, weftFloat8e4m3,
                                           weftFloat8e5m2),
                         [](const auto& p) { return "type" + std::to_string(static_cast<int>(p.param)); });

class DeviceEmuTree : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(DeviceEmuTree, AllReduceEqualsTheHostPathBitForBit) {
  auto [nranks, nchannels] = GetParam();
  for (int variant = 0; variant < 3; ++variant) {
    Case c;
    c.algo = Algo::kTree;
    c.nranks = nranks;
    c.nchannels = nchannels;
    c.inPlace = variant == 1;
    c.proto = variant == 2 ? kDevLL : kDevSimple;
    c.count = nchannels > 1 ? 5001 : 1001;
    c.stepBytes = nchannels > 1 ? 256 : 64;
    runCase(c);
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Tree, DeviceEmuTree, ::testing::Combine(::testing::Values(2, 3, 4), ::testing::Values(1, 2)),
                         [](const auto& p) {
                           return std::to_string(std::get<0>(p.param)) + "ranks_" +
                                  std::to_string(std::get<1>(p.param)) + "ch";
                         });

// A rank that never launches: its peers' kernels stop at the abort flag instead of hanging.
TEST(DeviceEmu, AbortFlagStopsAKernelWaitingForAMissingPeer) {
  Case c;
  c.nranks = 2;
  const auto lanes = plan(c);
  auto op = *coll::deviceOp(weftSum, c.type, c.nranks);
  Buffers b = makeBuffers(c, 3);
  std::vector<DevStep> ds;
  ASSERT_TRUE(devSteps(lanes[0][0][0].steps, &ds));
  Conn in, out;
  in.buff.assign(kSteps * c.stepBytes, 0);
  out.buff.assign(kSteps * c.stepBytes, 0);
  DevChannel ch{};
  ch.nLanes = 1;
  ch.lanes[0].steps = ds.data();
  ch.lanes[0].nSteps = static_cast<uint32_t>(ds.size());
  ch.lanes[0].nRecv = 1;
  ch.lanes[0].nSend = 1;
  ch.lanes[0].recv[0] = DevConn{in.buff.data(), in.buff.data(), &in.tail, &in.head, 0};
  ch.lanes[0].send[0] = DevConn{out.buff.data(), out.buff.data(), &out.tail, &out.head, 0};
  uint64_t abortFlag = 0;
  DevWork w{};
  w.sendbuff = b.in(c, 0);
  w.recvbuff = b.out(c, 0);
  w.channels = &ch;
  w.abortFlag = &abortFlag;
  w.stepBytes = c.stepBytes;
  w.type = static_cast<uint8_t>(c.type);
  w.red = devRed(op);
  auto start = std::chrono::steady_clock::now();
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::atomic_ref<uint64_t>(abortFlag).store(1, std::memory_order_release);
  });
  ASSERT_TRUE(emulateCollective(w, 1, c.nthreads));
  setter.join();
  EXPECT_EQ(std::atomic_ref<uint64_t>(ch.lanes[0].aborted).load(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace weft::device
