// The collective kernel on a real GPU (label `gpu`): ranks side by side on device 0, each with its
// own stream, buffers, FIFOs and counters in device memory, running the cases of the emulated
// suite (tests/device/coll_case.h) at GPU sizes; results compared bit for bit with the host
// path's reference. Skipped, with the CUDA error that says why, where no GPU is usable.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/device/launch.h"
#include "core/device/plan.h"
#include "tests/device/coll_case.h"

namespace weft::device {
namespace {

using coll::Coll;
using coll::RedOp;
using namespace weft::device::devtest;

#define CUDA_OK(call)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorString(e_);                     \
  } while (0)

// Skips the test unless device 0 can run kernels.
#define NEED_GPU()                                                                             \
  do {                                                                                         \
    int n_ = 0;                                                                                \
    cudaError_t e_ = cudaGetDeviceCount(&n_);                                                  \
    if (e_ != cudaSuccess || n_ == 0)                                                          \
      GTEST_SKIP() << "no usable CUDA device (" << (e_ == cudaSuccess ? "0 devices" : cudaGetErrorString(e_)) \
                   << "): the kernels ran on host threads in device_emu_test instead";        \
  } while (0)

// Device allocations freed at the end of a case.
struct DeviceMemory {
  std::vector<void*> blocks;
  ~DeviceMemory() {
    for (void* p : blocks) cudaFree(p);
  }
  template <class T>
  T* alloc(size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes == 0 ? 1 : bytes) != cudaSuccess) return nullptr;
    cudaMemset(p, 0, bytes == 0 ? 1 : bytes);
    blocks.push_back(p);
    return static_cast<T*>(p);
  }
};

void runOnGpu(const Case& c) {
  SCOPED_TRACE(describe(c));
  const RedOp op = *coll::deviceOp(c.userOp, c.type, c.nranks);
  const Lanes lanes = plan(c);
  DeviceMemory mem;
  std::vector<std::vector<DevChannel>> channels;
  ASSERT_TRUE(wireChannels(
      c, lanes,
      [&](size_t, int, int) {
        const size_t fifo = static_cast<size_t>(kSteps) * c.stepBytes;
        return ConnMemory{mem.alloc<char>(fifo), mem.alloc<char>(fifo), mem.alloc<uint64_t>(8), mem.alloc<uint64_t>(8)};
      },
      [&](const std::vector<DevStep>& ds) {
        DevStep* d = mem.alloc<DevStep>(ds.size() * sizeof(DevStep));
        cudaMemcpy(d, ds.data(), ds.size() * sizeof(DevStep), cudaMemcpyHostToDevice);
        return static_cast<const DevStep*>(d);
      },
      &channels));
  const size_t nch = lanes[0].size();
  std::vector<DevChannel*> devChannels;
  for (auto& ch : channels) {
    DevChannel* d = mem.alloc<DevChannel>(ch.size() * sizeof(DevChannel));
    CUDA_OK(cudaMemcpy(d, ch.data(), ch.size() * sizeof(DevChannel), cudaMemcpyHostToDevice));
    devChannels.push_back(d);
  }
  uint64_t* abortFlag = nullptr;
  CUDA_OK(cudaHostAlloc(reinterpret_cast<void**>(&abortFlag), sizeof(uint64_t), cudaHostAllocMapped));
  *abortFlag = 0;
  std::vector<cudaStream_t> streams(static_cast<size_t>(c.nranks));
  for (auto& s : streams) CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  std::vector<Buffers> expected, got;
  bool aborted = false;
  for (int i = 0; i < c.repeats && !aborted; ++i) {
    expected.push_back(makeBuffers(c, 99u + static_cast<uint32_t>(i)));
    got.push_back(expected.back());
    referenceRun(c, op, lanes, expected.back());
    std::vector<char*> dsend, drecv;
    for (int r = 0; r < c.nranks; ++r) {
      const auto& hs = got.back().send[static_cast<size_t>(r)];
      const auto& hr = got.back().recv[static_cast<size_t>(r)];
      dsend.push_back(mem.alloc<char>(hs.size()));
      drecv.push_back(mem.alloc<char>(hr.size()));
      CUDA_OK(cudaMemcpy(dsend.back(), hs.data(), hs.size(), cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemcpy(drecv.back(), hr.data(), hr.size(), cudaMemcpyHostToDevice));
    }
    for (int r = 0; r < c.nranks; ++r) {
      const Place in = inputPlace(c, r), out = outputPlace(c, r);
      DevWork w{};
      w.sendbuff = (in.inRecv ? drecv : dsend)[static_cast<size_t>(r)] + in.offset;
      w.recvbuff = drecv[static_cast<size_t>(r)] + out.offset;
      w.channels = devChannels[static_cast<size_t>(r)];
      w.abortFlag = abortFlag;
      w.redArg = op.arg;
      w.stepBytes = c.stepBytes;
      w.proto = c.proto;
      w.type = static_cast<uint8_t>(c.type);
      w.red = devRed(op);
      CUDA_OK(static_cast<cudaError_t>(
          weftDeviceLaunchColl(&w, static_cast<unsigned>(nch), c.nthreads, streams[static_cast<size_t>(r)])));
    }
    // Every rank's kernel waits for the others: poll under a deadline, then abort, never hang.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      bool done = true;
      for (auto s : streams) done = done && cudaStreamQuery(s) != cudaErrorNotReady;
      if (done) break;
      if (std::chrono::steady_clock::now() > until) {
        *reinterpret_cast<volatile uint64_t*>(abortFlag) = 1;
        aborted = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CUDA_OK(cudaDeviceSynchronize());
    for (int r = 0; r < c.nranks; ++r) {
      auto& hr = got.back().recv[static_cast<size_t>(r)];
      CUDA_OK(cudaMemcpy(hr.data(), drecv[static_cast<size_t>(r)], hr.size(), cudaMemcpyDeviceToHost));
    }
  }
  for (auto s : streams) cudaStreamDestroy(s);
  cudaFreeHost(abortFlag);
  ASSERT_FALSE(aborted) << "the kernels did not finish within 30 s: aborted through the flag";
  EXPECT_EQ(firstDifference(c, expected, got), "");
}

class GpuColl : public ::testing::TestWithParam<std::tuple<Coll, int>> {};

TEST_P(GpuColl, RanksSharingOneGpuEqualTheHostPath) {
  NEED_GPU();
  auto [coll, nranks] = GetParam();
  // Simple out of place and in place; LL (NCCL's 64 KiB of lines per step) on a smaller count.
  for (int variant = 0; variant < 3; ++variant) {
    Case c;
    c.coll = coll;
    c.nranks = nranks;
    c.nchannels = 2;
    c.inPlace = variant == 1;
    c.proto = variant == 2 ? kDevLL : kDevSimple;
    c.root = nranks - 1;
    c.count = variant == 2 ? (size_t{1} << 16) + 3 : (size_t{1} << 20) + 3;  // 4 MiB of floats, an odd tail
    c.stepBytes = variant == 2 ? 64 << 10 : 128 << 10;
    c.nthreads = 256;
    runOnGpu(c);
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Ring, GpuColl,
                         ::testing::Combine(::testing::Values(Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter,
                                                              Coll::kBroadcast, Coll::kReduce),
                                            ::testing::Values(2, 4)),
                         [](const auto& p) {
                           return collName(std::get<0>(p.param)) + "_" + std::to_string(std::get<1>(p.param)) + "ranks";
                         });

TEST(GpuColl, EveryTypeRingAndTreeSimpleAndLLEqualTheHostPath) {
  NEED_GPU();
  for (weft_datatype_t type : {weftInt8, weftUint8, weftInt32, weftUint32, weftInt64, weftUint64, weftFloat16,
                               weftFloat32, weftFloat64, weftBfloat16, weftFloat8e4m3, weftFloat8e5m2}) {
    for (int variant = 0; variant < 4; ++variant) {
      Case c;
      c.algo = variant % 2 == 0 ? Algo::kRing : Algo::kTree;
      c.proto = variant < 2 ? kDevSimple : kDevLL;
      c.type = type;
      c.userOp = weftAvg;
      c.nranks = 3;
      c.nchannels = 2;
      c.count = (size_t{1} << 18) + 5;
      c.stepBytes = 64 << 10;
      c.nthreads = 512;  // two lanes of 256 on a tree channel
      runOnGpu(c);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace weft::device
