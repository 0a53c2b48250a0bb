// Collectives on GPU buffers through the communicator, without a GPU: libweft's device path (its
// connections over CUDA IPC, its launches on the caller's stream) with the emulated CUDA runtime
// (libweft_emu_cudart.so: memfd "device memory" shared between the rank processes, streams as
// host threads, weft's kernel source on host threads). Each rank runs every case twice on the
// same communicator, on host buffers (the host path) and on device buffers with a stream, and the
// two outputs must be the same bits. Only the CUDA runtime is a stand-in: the same test links
// NVIDIA's libcudart on a GPU machine (scripts/gpu-check.sh).
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/device/emu/emu_cudart.h"
#include "tests/support/ranks.h"
#include "tests/support/sanitizer.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

// The GPU suite (tests/gpu) links this same object with NVIDIA's runtime and runs it with
// WEFT_TEST_ON_GPU=1: libweft then loads the real CUDA runtime and weft's nvcc-built kernels.
bool onGpu() {
  const char* v = std::getenv("WEFT_TEST_ON_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}
// WEFT_CUDA_EMULATION for the ranks: the emulated runtime, or "0" on a GPU.
const char* kEmulation = onGpu() ? "0" : WEFT_EMU_CUDART_PATH;

// On a GPU run without a GPU: skip. Not asked through CUDA: a parent that started CUDA could not
// fork ranks that use it.
#define WEFT_SKIP_WITHOUT_GPU()                                                                   \
  do {                                                                                            \
    if (onGpu() && access("/dev/nvidia0", F_OK) != 0) GTEST_SKIP() << "no GPU here (/dev/nvidia0 is absent)"; \
  } while (0)

constexpr int kMemcpyHostToDevice = 1;
constexpr int kMemcpyDeviceToHost = 2;

#define CUDA_OK(call)                                                                             \
  do {                                                                                            \
    int cuda_rc_ = (call);                                                                        \
    RANK_CHECK(cuda_rc_ == 0, "%s: %s (%d)", #call, cudaGetErrorString(cuda_rc_), cuda_rc_);       \
  } while (0)

struct DCase {
  std::string coll;
  weft_datatype_t type;
  weft_redop_t op;
  size_t count;
  bool inPlace;
  int root;
};

std::string describe(const DCase& c) {
  return c.coll + " type " + std::to_string(c.type) + " op " + std::to_string(c.op) + " count " +
         std::to_string(c.count) + (c.inPlace ? " in place" : " out of place") + " root " + std::to_string(c.root);
}

bool isFloat(weft_datatype_t t) { return t >= weftFloat16; }

// Small integers in every type's encoding (exact in fp8 too, for sums and products of 4 ranks).
void fillInput(std::vector<char>& b, weft_datatype_t t, int rank, uint32_t seed) {
  const size_t elt = weft_datatype_size(t);
  std::mt19937 rng(seed * 131u + static_cast<uint32_t>(rank));
  for (size_t i = 0; i < b.size() / elt; ++i) {
    const int v = static_cast<int>(rng() % 4) - (isFloat(t) || t == weftInt8 || t == weftInt32 || t == weftInt64 ? 1 : 0);
    uint64_t bits = 0;
    switch (t) {
      case weftFloat32: {
        float f = static_cast<float>(v);
        std::memcpy(&bits, &f, 4);
        break;
      }
      case weftFloat64: {
        double d = v;
        std::memcpy(&bits, &d, 8);
        break;
      }
      case weftFloat16: bits = v == 0 ? 0 : (v < 0 ? 0x8000u : 0) | (std::abs(v) == 1 ? 0x3c00u : std::abs(v) == 2 ? 0x4000u : 0x4200u); break;
      case weftBfloat16: bits = v == 0 ? 0 : (v < 0 ? 0x8000u : 0) | (std::abs(v) == 1 ? 0x3f80u : std::abs(v) == 2 ? 0x4000u : 0x4040u); break;
      case weftFloat8e4m3: bits = v == 0 ? 0 : (v < 0 ? 0x80u : 0) | (std::abs(v) == 1 ? 0x38u : std::abs(v) == 2 ? 0x40u : 0x44u); break;
      case weftFloat8e5m2: bits = v == 0 ? 0 : (v < 0 ? 0x80u : 0) | (std::abs(v) == 1 ? 0x3cu : std::abs(v) == 2 ? 0x40u : 0x42u); break;
      default: bits = static_cast<uint64_t>(static_cast<int64_t>(v)); break;
    }
    std::memcpy(b.data() + i * elt, &bits, elt);
  }
}

// One case on host buffers, then on device buffers: the outputs must be the same bytes (where the
// collective defines them). `lenient`: Avg on floats may round differently where the protocols
// cut the buffer differently (LL), so it is compared to 1%.
int deviceCase(weft_comm_t* comm, int rank, int n, void* stream, const DCase& c, uint32_t seed, bool lenient) {
  const weft_datatype_t t = c.type;
  const size_t elt = weft_datatype_size(t);
  const bool gather = c.coll == "allgather", scatter = c.coll == "reduce_scatter", a2a = c.coll == "alltoall";
  const bool ring = c.coll == "sendrecv";  // send to the next rank and receive from the previous one, in a group
  const size_t nn = static_cast<size_t>(n);
  const size_t inCount = scatter || a2a ? c.count * nn : c.count;
  const size_t outCount = gather || a2a ? c.count * nn : c.count;
  const size_t bufCount = std::max<size_t>(1, std::max(inCount, outCount));
  std::vector<char> in(inCount * elt);
  fillInput(in, t, rank, seed);
  // Where send and receive are within a (send, out) pair of buffers: NCCL's in-place layouts.
  const size_t mine = static_cast<size_t>(rank) * c.count * elt;
  auto place = [&](char* sendBase, char* outBase, const void** send, void** recv) {
    *send = sendBase;
    *recv = outBase;
    if (!c.inPlace) return;
    *send = gather ? outBase + mine : outBase;
    if (scatter) *recv = outBase + mine;
  };
  auto initialOut = [&]() {
    std::vector<char> out(bufCount * elt, 0x5a);
    if (c.inPlace) std::memcpy(out.data() + (gather ? mine : 0), in.data(), in.size());
    return out;
  };
  auto call = [&](const void* send, void* recv, void* s) -> weft_result_t {
    if (c.coll == "allreduce") return weft_allreduce(send, recv, c.count, t, c.op, comm, s);
    if (c.coll == "reduce") return weft_reduce(send, recv, c.count, t, c.op, c.root, comm, s);
    if (c.coll == "broadcast") return weft_broadcast(send, recv, c.count, t, c.root, comm, s);
    if (gather) return weft_allgather(send, recv, c.count, t, comm, s);
    if (a2a) return weft_alltoall(send, recv, c.count, t, comm, s);
    if (ring) {
      weft_result_t rc = weft_group_start();
      if (rc == weftSuccess) rc = weft_send(send, c.count, t, (rank + 1) % n, comm, s);
      if (rc == weftSuccess) rc = weft_recv(recv, c.count, t, (rank + n - 1) % n, comm, s);
      weft_result_t end = weft_group_end();
      return rc != weftSuccess ? rc : end;
    }
    return weft_reduce_scatter(send, recv, c.count, t, c.op, comm, s);
  };

  std::vector<char> hostOut = initialOut();
  std::vector<char> hostIn = in;
  const void* hs = nullptr;
  void* hr = nullptr;
  place(hostIn.data(), hostOut.data(), &hs, &hr);
  RANK_CHECK(call(hs, hr, nullptr) == weftSuccess, "rank %d host %s: %s", rank, describe(c).c_str(), weft_last_error());

  void* dIn = nullptr;
  void* dOut = nullptr;
  CUDA_OK(cudaMalloc(&dIn, std::max<size_t>(1, in.size())));
  CUDA_OK(cudaMalloc(&dOut, bufCount * elt));
  std::vector<char> start = initialOut();
  CUDA_OK(cudaMemcpy(dIn, in.data(), in.size(), kMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dOut, start.data(), start.size(), kMemcpyHostToDevice));
  const void* ds = nullptr;
  void* dr = nullptr;
  place(static_cast<char*>(dIn), static_cast<char*>(dOut), &ds, &dr);
  weft_result_t rc = call(ds, dr, stream);
  RANK_CHECK(rc == weftSuccess, "rank %d device %s: %s", rank, describe(c).c_str(), weft_last_error());
  CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<char> devOut(bufCount * elt);
  CUDA_OK(cudaMemcpy(devOut.data(), dOut, devOut.size(), kMemcpyDeviceToHost));
  CUDA_OK(cudaFree(dIn));
  CUDA_OK(cudaFree(dOut));

  if (c.coll == "reduce" && rank != c.root) return 0;  // only the root's output is defined
  const size_t from = c.inPlace && scatter ? mine : 0;
  for (size_t i = 0; i < outCount; ++i) {
    const char* h = hostOut.data() + from + i * elt;
    const char* d = devOut.data() + from + i * elt;
    if (std::memcmp(h, d, elt) == 0) continue;
    if (lenient && c.op == weftAvg && t == weftFloat32) {
      float hf, df;
      std::memcpy(&hf, h, 4);
      std::memcpy(&df, d, 4);
      if (std::fabs(hf - df) <= 0.01f * std::max(1.0f, std::fabs(hf))) continue;
    } else if (lenient && c.op == weftAvg && isFloat(t)) {
      continue;  // narrow floats: the rounding of each hop's product differs by the cut
    }
    uint64_t hb = 0, db = 0;
    std::memcpy(&hb, h, elt);
    std::memcpy(&db, d, elt);
    RANK_CHECK(false, "rank %d %s: element %zu is 0x%llx on the device path, 0x%llx on the host path", rank,
               describe(c).c_str(), i, static_cast<unsigned long long>(db), static_cast<unsigned long long>(hb));
  }
  return 0;
}

struct Variant {
  int nranks;
  const char* algo;   // NCCL_ALGO ("" : weft's choice)
  const char* proto;  // NCCL_PROTO ("" : weft's choice)
  int hosts = 1;      // 2: the first half of the ranks on one host (NCCL_HOSTID), the rest on another,
                      // talking through the socket plugin over loopback (the proxy thread)
  bool shm = false;   // NCCL_P2P_DISABLE=1: the FIFOs in shared host memory (SHM), not GPU memory
};

class CommDevice : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    WEFT_SKIP_WITHOUT_GPU();
  }
};

// Every collective, datatype and operator, in and out of place, small and multi-slot counts, on
// device buffers through the emulated runtime, against the host path's bits; alltoall and a ring
// of sends and receives in a group (device point-to-point) too.
TEST_P(CommDevice, EveryCollectiveOnDeviceBuffersEqualsTheHostPath) {
  const Variant v = GetParam();
  JobSpec spec;
  spec.nranks = v.nranks;
  spec.deadline = std::chrono::seconds(300);
  spec.env[-1]["WEFT_CUDA_EMULATION"] = kEmulation;
  if (*v.algo != '\0') spec.env[-1]["NCCL_ALGO"] = v.algo;
  if (*v.proto != '\0') spec.env[-1]["NCCL_PROTO"] = v.proto;
  if (v.hosts > 1) {
    spec.env[-1]["NCCL_SOCKET_IFNAME"] = "lo";
    spec.env[-1]["NCCL_NET"] = "Socket";
    for (int r = 0; r < v.nranks; ++r) spec.env[r]["NCCL_HOSTID"] = r < v.nranks / 2 ? "device-hostA" : "device-hostB";
    spec.env[-1]["NCCL_DEBUG"] = "INFO";  // each rank says its connections to the other host went through the proxy
    spec.env[-1]["NCCL_DEBUG_SUBSYS"] = "INIT,P2P";
  }
  if (v.shm) {
    spec.env[-1]["NCCL_P2P_DISABLE"] = "1";
    spec.env[-1]["NCCL_DEBUG"] = "INFO";  // each rank says its connections are SHM
    spec.env[-1]["NCCL_DEBUG_SUBSYS"] = "INIT,P2P";
  }
  const bool treeOnly = std::string(v.algo) == "Tree";
  // LL cuts the buffer differently (weft's choice takes LL for small sizes where NCCL_PROTO is unset).
  const bool lenient = std::string(v.proto) != "Simple";
  auto out = runJob(spec, [&](int rank, const weft_unique_id_t& id) {
    CUDA_OK(cudaSetDevice(0));  // every rank on one GPU, as a one-GPU machine runs them
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, v.nranks, id, rank));
    void* stream = nullptr;
    CUDA_OK(cudaStreamCreate(&stream));
    const int n = v.nranks;
    const weft_redop_t ops[] = {weftSum, weftProd, weftMax, weftMin, weftAvg};
    std::vector<std::string> reductions = {"allreduce", "reduce", "reduce_scatter"};
    std::vector<std::string> moves = {"broadcast", "allgather", "alltoall", "sendrecv"};
    if (treeOnly) {
      reductions = {"allreduce"};
      moves.clear();
    }
    uint32_t seed = 1;
    // Every datatype (every other one under a sanitizer: the device path does not depend on it).
    for (int ti = 0; ti < 12; ti += test::kSanitized ? 2 : 1) {
      const auto t = static_cast<weft_datatype_t>(ti);
      for (size_t count : {size_t{1}, size_t{1009}}) {
        for (bool inPlace : {false, true}) {
          for (const std::string& coll : reductions)
            for (weft_redop_t op : ops)
              if (deviceCase(comm, rank, n, stream, {coll, t, op, count, inPlace, n - 1}, seed++, lenient) != 0) return 1;
          for (const std::string& coll : moves) {
            if (inPlace && (coll == "alltoall" || coll == "sendrecv")) continue;  // not defined in place
            if (deviceCase(comm, rank, n, stream, {coll, t, weftSum, count, inPlace, n / 2}, seed++, lenient) != 0)
              return 1;
          }
        }
      }
    }
    // Several slots on each of the channels (512 KiB Simple slots, 32 KiB of LL data), a prime count.
    std::vector<std::string> large = reductions;
    large.insert(large.end(), moves.begin(), moves.end());
    for (const std::string& coll : large) {
      const bool p2p = coll == "alltoall" || coll == "sendrecv";
      if (deviceCase(comm, rank, n, stream, {coll, weftFloat32, weftSum, 300007, false, 0}, seed++, lenient) != 0) return 1;
      if (deviceCase(comm, rank, n, stream, {coll, weftInt8, weftMax, 1000003, !p2p, n - 1}, seed++, lenient) != 0) return 1;
    }
    CUDA_OK(cudaStreamDestroy(stream));
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
  for (size_t r = 0; v.shm && r < out.size(); ++r) {
    EXPECT_NE(out[r].output.find("via SHM/direct/direct (pinned host memory: P2P is disabled)"), std::string::npos)
        << "rank " << r << ":\n" << out[r].output.substr(0, 4000);
    EXPECT_NE(out[r].output.find("] via SHM/direct/direct"), std::string::npos)
        << "rank " << r << " made no point-to-point connection through shared host memory:\n" << out[r].output.substr(0, 4000);
  }
  for (size_t r = 0; v.hosts > 1 && r < out.size(); ++r) {
    EXPECT_NE(out[r].output.find("device connection(s) to other hosts via NET/Socket through the proxy"), std::string::npos)
        << "rank " << r << ":\n" << out[r].output.substr(0, 4000);
    if (treeOnly) continue;  // no sends and receives
    EXPECT_NE(out[r].output.find("] via NET/Socket through the proxy thread"), std::string::npos)
        << "rank " << r << " made no point-to-point connection to the other host:\n" << out[r].output.substr(0, 4000);
  }
}

// Under a sanitizer: one variant per protocol and algorithm.
INSTANTIATE_TEST_SUITE_P(Emulated, CommDevice,
                         ::testing::ValuesIn(test::plainOrSanitized<Variant>(
                             {Variant{1, "", ""}, Variant{2, "", ""}, Variant{3, "Ring", "Simple"}, Variant{3, "Ring", "LL"},
                              Variant{4, "Tree", "Simple"}, Variant{3, "Tree", "LL"}, Variant{4, "", "", 2},
                              Variant{2, "Ring", "Simple", 2}, Variant{4, "Tree", "LL", 2},
                              Variant{3, "", "", 1, true}},
                             {Variant{2, "", ""}, Variant{3, "Ring", "LL", 1, true}, Variant{3, "Tree", "Simple"},
                              Variant{4, "", "", 2}})),
                         [](const auto& p) {
                           std::string name = std::to_string(p.param.nranks) + "ranks";
                           if (p.param.hosts > 1) name += std::to_string(p.param.hosts) + "hosts";
                           if (p.param.shm) name += "Shm";
                           if (*p.param.algo != '\0') name += p.param.algo;
                           if (*p.param.proto != '\0') name += p.param.proto;
                           return name;
                         });

// NCCL's one-process-many-GPUs pattern: one thread drives every rank's communicator inside a
// group, each call with its rank's device current. The device connections of all of them are
// made together at the group's end (one rank's exchange waits for the others), then each
// collective is enqueued on its rank's stream; ranks of one process reach each other's FIFOs
// directly. Twice, so the second group reuses the connections.
TEST(CommDeviceGroup, OneThreadDrivesEveryRankOfACommunicatorInAGroup) {
  WEFT_SKIP_WITHOUT_GPU();
  JobSpec spec;
  spec.nranks = 1;  // one process, which makes every rank itself
  spec.deadline = std::chrono::seconds(120);
  spec.env[-1]["WEFT_CUDA_EMULATION"] = kEmulation;
  auto out = runJob(spec, [](int, const weft_unique_id_t&) {
    constexpr int kRanks = 3;
    constexpr size_t kCount = 70001;  // several slots of each protocol's FIFO
    weft_comm_t* comms[kRanks] = {};
    RANK_OK(weft_comm_init_all(comms, kRanks, nullptr));
    void* streams[kRanks] = {};
    float* bufs[kRanks] = {};
    for (int r = 0; r < kRanks; ++r) {
      CUDA_OK(cudaSetDevice(r));
      CUDA_OK(cudaStreamCreate(&streams[r]));
      CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&bufs[r]), kCount * sizeof(float)));
    }
    for (int round = 0; round < 2; ++round) {
      for (int r = 0; r < kRanks; ++r) {
        std::vector<float> in(kCount);
        for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<float>((static_cast<size_t>(r) * 7 + i + static_cast<size_t>(round)) % 13);
        CUDA_OK(cudaMemcpy(bufs[r], in.data(), in.size() * sizeof(float), kMemcpyHostToDevice));
      }
      RANK_OK(weft_group_start());
      for (int r = 0; r < kRanks; ++r) {
        CUDA_OK(cudaSetDevice(r));
        RANK_OK(weft_allreduce(bufs[r], bufs[r], kCount, weftFloat32, weftSum, comms[r], streams[r]));
      }
      RANK_OK(weft_group_end());
      for (int r = 0; r < kRanks; ++r) {
        CUDA_OK(cudaSetDevice(r));
        CUDA_OK(cudaStreamSynchronize(streams[r]));
        std::vector<float> got(kCount);
        CUDA_OK(cudaMemcpy(got.data(), bufs[r], got.size() * sizeof(float), kMemcpyDeviceToHost));
        for (size_t i = 0; i < kCount; ++i) {
          float want = 0;
          for (int k = 0; k < kRanks; ++k) want += static_cast<float>((static_cast<size_t>(k) * 7 + i + static_cast<size_t>(round)) % 13);
          RANK_CHECK(got[i] == want, "round %d rank %d element %zu: %g, expected %g", round, r, i, got[i], want);
        }
      }
    }
    for (int r = 0; r < kRanks; ++r) {
      CUDA_OK(cudaSetDevice(r));
      CUDA_OK(cudaFree(bufs[r]));
      CUDA_OK(cudaStreamDestroy(streams[r]));
      if (closeComm(comms[r]) != 0) return 1;
    }
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

// No hang on the device path: a kernel waiting for a peer ends when the communicator stops. Rank
// 1's allreduce waits on rank 0, which is killed (its death comes through the watch ring) or, in
// the second case, alive but never calling while rank 1 aborts from another thread. Either way
// the kernel sees the abort flag, the stream completes, and the error names what happened.
// `hosts` 2: the ranks on two hosts (NCCL_HOSTID), the kernel waiting on the proxy thread's
// network connection, which sees the peer's socket close.
void devicePeerFault(bool kill, int hosts = 1) {
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1]["WEFT_CUDA_EMULATION"] = kEmulation;
  if (hosts > 1) {
    spec.env[-1]["NCCL_SOCKET_IFNAME"] = "lo";
    spec.env[-1]["NCCL_NET"] = "Socket";
    spec.env[0]["NCCL_HOSTID"] = "fault-hostA";
    spec.env[1]["NCCL_HOSTID"] = "fault-hostB";
  }
  SharedCounters sc(2);
  auto out = runJob(spec, [&](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    void* stream = nullptr;
    CUDA_OK(cudaStreamCreate(&stream));
    constexpr size_t kCount = 1 << 20;
    void* buf = nullptr;
    CUDA_OK(cudaMalloc(&buf, kCount * sizeof(float)));
    // Both ranks connect their device rings with one allreduce that completes.
    RANK_OK(weft_allreduce(buf, buf, kCount, weftFloat32, weftSum, comm, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    RANK_CHECK(sc.arriveAndWait(0, 2, std::chrono::seconds(30)), "the ranks never met");
    if (rank == 0) {
      // Wait until rank 1's second allreduce is enqueued, then die (or stay away until aborted).
      RANK_CHECK(sc.waitFor(1, 1, std::chrono::seconds(30)), "rank 1 never launched");
      if (kill) raise(SIGKILL);
      RANK_CHECK(sc.waitFor(1, 2, std::chrono::seconds(30)), "rank 1 never returned");
      RANK_OK(weft_comm_abort(comm));
      CUDA_OK(cudaFree(buf));
      CUDA_OK(cudaStreamDestroy(stream));
      return 0;
    }
    RANK_OK(weft_allreduce(buf, buf, kCount, weftFloat32, weftSum, comm, stream));
    sc.add(1);
    std::thread aborter;
    if (!kill)
      aborter = std::thread([comm] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        (void)weft_comm_abort(comm);
      });
    auto t0 = std::chrono::steady_clock::now();
    CUDA_OK(cudaStreamSynchronize(stream));  // returns because the kernel left
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (aborter.joinable()) aborter.join();
    sc.add(1);
    RANK_CHECK(s < 20, "the stream took %.1f s to complete", s);
    if (kill) {
      weft_result_t async = weftSuccess;
      RANK_OK(weft_comm_get_async_error(comm, &async));
      RANK_CHECK(async == weftRemoteError, "async error %d", static_cast<int>(async));
      weft_result_t rc = weft_allreduce(buf, buf, 16, weftFloat32, weftSum, comm, stream);
      RANK_CHECK(rc == weftRemoteError && std::string(weft_last_error()).find("rank 0") != std::string::npos,
                 "next call returned %d: %s", static_cast<int>(rc), weft_last_error());
      RANK_OK(weft_comm_abort(comm));
    }
    CUDA_OK(cudaFree(buf));
    CUDA_OK(cudaStreamDestroy(stream));
    return 0;
  });
  ASSERT_EQ(out.size(), 2u);
  if (kill) {
    EXPECT_EQ(out[0].signal, SIGKILL) << out[0].output;
    out.erase(out.begin());
  }
  EXPECT_EQ(failures(out), "");
}

TEST(CommDeviceFaults, APeerKilledWhileAKernelWaitsForItEndsTheKernel) {
  WEFT_SKIP_WITHOUT_GPU();
  devicePeerFault(true);
}

TEST(CommDeviceFaults, AnAbortFromAnotherThreadEndsAWaitingKernel) {
  WEFT_SKIP_WITHOUT_GPU();
  devicePeerFault(false);
}

TEST(CommDeviceFaults, APeerOnAnotherHostKilledWhileAKernelWaitsForItEndsTheKernel) {
  WEFT_SKIP_WITHOUT_GPU();
  devicePeerFault(true, 2);
}

TEST(CommDeviceFaults, AnAbortEndsAKernelWaitingForAnotherHost) {
  WEFT_SKIP_WITHOUT_GPU();
  devicePeerFault(false, 2);
}

// Ranks on two hosts calling allreduce with different counts: the receiving proxy gets a slot of
// another size than its plan says, fails the communicator naming the connection, and every
// rank's kernel leaves (no hang); the next call returns the error.
TEST(CommDeviceErrors, DifferentCountsAcrossHostsFailInsteadOfHanging) {
  WEFT_SKIP_WITHOUT_GPU();
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1] = {{"WEFT_CUDA_EMULATION", kEmulation}, {"NCCL_SOCKET_IFNAME", "lo"}, {"NCCL_NET", "Socket"}};
  spec.env[0]["NCCL_HOSTID"] = "mismatch-hostA";
  spec.env[1]["NCCL_HOSTID"] = "mismatch-hostB";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    void* stream = nullptr;
    CUDA_OK(cudaStreamCreate(&stream));
    void* buf = nullptr;
    CUDA_OK(cudaMalloc(&buf, 8192 * sizeof(float)));
    RANK_OK(weft_allreduce(buf, buf, 4096, weftFloat32, weftSum, comm, stream));  // connects; both agree
    CUDA_OK(cudaStreamSynchronize(stream));
    const size_t count = rank == 0 ? 4096 : 6000;
    RANK_OK(weft_allreduce(buf, buf, count, weftFloat32, weftSum, comm, stream));
    CUDA_OK(cudaStreamSynchronize(stream));  // returns: the kernels left at the abort flag
    weft_result_t rc = weft_allreduce(buf, buf, count, weftFloat32, weftSum, comm, stream);
    RANK_CHECK(rc != weftSuccess, "the call after a mismatch succeeded");
    std::printf("rank %d: %s\n", rank, weft_last_error());
    std::fflush(stdout);
    RANK_OK(weft_comm_abort(comm));
    CUDA_OK(cudaFree(buf));
    CUDA_OK(cudaStreamDestroy(stream));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  ASSERT_EQ(out.size(), 2u);
  const std::string all = out[0].output + out[1].output;
  EXPECT_NE(all.find("the ranks called different collectives or counts"), std::string::npos) << all;
}

// A rank that destroys its communicator after one GPU allreduce while its peer enqueues a second:
// the goodbye (with its count) fails the peer's communicator, whose kernel leaves at the abort
// flag, and the next call names the departure. Then the reverse order: the goodbye already came
// when the call is made, which fails at once.
TEST(CommDeviceErrors, APeerThatLeftBeforeAGpuCollectiveFailsIt) {
  WEFT_SKIP_WITHOUT_GPU();
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1] = {{"WEFT_CUDA_EMULATION", kEmulation}, {"WEFT_PEER_TIMEOUT", "0"}};
  SharedCounters sc(2);
  auto out = runJob(spec, [&sc](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    void* stream = nullptr;
    CUDA_OK(cudaStreamCreate(&stream));
    void* buf = nullptr;
    CUDA_OK(cudaMalloc(&buf, 1024 * sizeof(float)));
    RANK_OK(weft_allreduce(buf, buf, 1024, weftFloat32, weftSum, comm, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    if (rank == 1) {
      RANK_CHECK(sc.waitFor(0, 1, std::chrono::seconds(30)), "rank 0 never enqueued its second allreduce");
      RANK_OK(weft_comm_destroy(comm));
    } else {
      RANK_OK(weft_allreduce(buf, buf, 1024, weftFloat32, weftSum, comm, stream));  // rank 1 never calls it
      sc.add(0);
      CUDA_OK(cudaStreamSynchronize(stream));  // returns: the goodbye stopped the kernel
      weft_result_t rc = weft_allreduce(buf, buf, 1024, weftFloat32, weftSum, comm, stream);
      std::string e = weft_last_error();
      RANK_CHECK(rc == weftInvalidUsage && e.find("rank 1 finalized or destroyed its communicator after 1 collectives") !=
                                               std::string::npos && e.find("2nd (AllReduce)") != std::string::npos,
                 "returned %d: %s", static_cast<int>(rc), e.c_str());
      RANK_OK(weft_comm_abort(comm));
    }
    CUDA_OK(cudaFree(buf));
    CUDA_OK(cudaStreamDestroy(stream));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

// What is refused, and how it says so: one buffer of each kind, host buffers with a stream, a
// stream where no CUDA runtime loads.
TEST(CommDeviceErrors, MixedBuffersHostBuffersWithAStreamAndNoRuntimeAreClearErrors) {
  WEFT_SKIP_WITHOUT_GPU();
  JobSpec spec;
  spec.nranks = 1;
  spec.env[-1]["WEFT_CUDA_EMULATION"] = kEmulation;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 1, id, rank));
    void* stream = nullptr;
    CUDA_OK(cudaStreamCreate(&stream));
    void* dev = nullptr;
    CUDA_OK(cudaMalloc(&dev, 64));
    std::vector<float> host(16, 1.0f);
    RANK_CHECK(weft_allreduce(dev, host.data(), 16, weftFloat32, weftSum, comm, stream) == weftInvalidArgument,
               "mixed buffers were accepted");
    std::string e = weft_last_error();
    RANK_CHECK(e.find("is GPU memory and recvbuff") != std::string::npos && e.find("host memory") != std::string::npos,
               "%s", e.c_str());
    RANK_CHECK(weft_allreduce(host.data(), host.data(), 16, weftFloat32, weftSum, comm, stream) == weftInvalidArgument,
               "host buffers with a stream were accepted");
    e = weft_last_error();
    RANK_CHECK(e.find("host buffers with a stream") != std::string::npos, "%s", e.c_str());
    // Host buffers and no stream: the host path, as ever.
    RANK_OK(weft_allreduce(host.data(), host.data(), 16, weftFloat32, weftSum, comm, nullptr));
    CUDA_OK(cudaFree(dev));
    CUDA_OK(cudaStreamDestroy(stream));
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");

  spec.env[-1]["WEFT_CUDA_EMULATION"] = "/nonexistent/libweft_emu_cudart.so";
  out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 1, id, rank));
    std::vector<float> host(16, 1.0f);
    int notAStream = 0;
    RANK_CHECK(weft_allreduce(host.data(), host.data(), 16, weftFloat32, weftSum, comm, &notAStream) ==
                   weftInvalidArgument,
               "a stream without a CUDA runtime was accepted");
    std::string e = weft_last_error();
    RANK_CHECK(e.find("a stream was given, but there is no GPU to run on") != std::string::npos &&
                   e.find("/nonexistent/libweft_emu_cudart.so") != std::string::npos,
               "%s", e.c_str());
    RANK_OK(weft_allreduce(host.data(), host.data(), 16, weftFloat32, weftSum, comm, nullptr));
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

}  // namespace
}  // namespace weft::testing
