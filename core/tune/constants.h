// NCCL 2.28.9's tuning constants: the table a v5 tuner plugin may rewrite before the model runs
// (ncclTunerConstants_v5_t, byte for byte), the enumerations the model indexes, and their names.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/tune/tuner_hook.h"

namespace weft::tune {

// Index values are NCCL's (nccl_tuner.h, nccl_common.h).
enum Algo : int { kTree = 0, kRing = 1, kCollnetDirect = 2, kCollnetChain = 3, kNvls = 4, kNvlsTree = 5, kPat = 6 };
enum Proto : int { kLL = 0, kLL128 = 1, kSimple = 2 };
enum Func : int { kBroadcast = 0, kReduce = 1, kAllGather = 2, kReduceScatter = 3, kAllReduce = 4 };

// Link classes of the latency table (NCCL_HW_*), GPU generations and node-count scales of the
// bandwidth caps.
inline constexpr int kHwNvlink = 0;
inline constexpr int kHwPci = 1;
inline constexpr int kHwNet = 2;
inline constexpr int kNumHw = 3;
inline constexpr int kNumCompCaps = 4;  // Volta, Ampere, Hopper, Blackwell
inline constexpr int kNumScales = 3;    // 1 node, 2 nodes, more

// ncclTunerConstants_v5_t: all doubles, in this order; a v5 plugin receives a pointer to it.
struct Constants {
  double baseLatencies[kNumAlgorithms][kNumProtocols];
  double hwLatencies[kNumHw][kNumAlgorithms][kNumProtocols];
  double llMaxBws[kNumCompCaps][kNumScales];
  double perChMaxRingLL128Bws[kNumCompCaps][kNumScales];
  double perChMaxTreeLL128Bws[kNumCompCaps][kNumScales];
  double perChMaxTreeBws[kNumCompCaps][kNumScales];
  double perChMaxNVLSTreeBws[kNumCompCaps][kNumScales];
};
// Pinned to NCCL 2.28.9's layout (offsets checked by compiling NCCL's header).
static_assert(sizeof(Constants) == 1152);
static_assert(offsetof(Constants, hwLatencies) == 168);
static_assert(offsetof(Constants, llMaxBws) == 672);
static_assert(offsetof(Constants, perChMaxRingLL128Bws) == 768);
static_assert(offsetof(Constants, perChMaxTreeLL128Bws) == 864);
static_assert(offsetof(Constants, perChMaxTreeBws) == 960);
static_assert(offsetof(Constants, perChMaxNVLSTreeBws) == 1056);

// NCCL 2.28.9's defaults (ncclTopoInitTunerConstants).
const Constants& defaultConstants();

// NVLS efficiency per GPU generation: a float of tuning.cc, not part of the plugin's table.
inline constexpr float kNvlsEfficiency[kNumCompCaps] = {0.0f, 0.0f, 0.85f, 0.74f};

// Names as NCCL's NCCL_ALGO/NCCL_PROTO parser and tuning table spell them ("AllReduce", "NVLSTree",
// "Simple").
const char* funcName(int func);
const char* algoName(int algo);
const char* protoName(int proto);

// Thread limits and thresholds (device.h, comm.h).
inline constexpr int kWarpSize = 32;
inline constexpr int kMaxNThreads = 640;        // NCCL_MAX_NTHREADS
inline constexpr int kSimpleMaxNThreads = 512;  // NCCL_SIMPLE_MAX_NTHREADS
inline constexpr int kLLMaxNThreads = 512;      // NCCL_LL_MAX_NTHREADS
inline constexpr int kLL128MaxNThreads = 640;   // NCCL_LL128_MAX_NTHREADS
inline constexpr int kLLThreadThreshold = 8;
inline constexpr int kLL128ThreadThreshold = 8;
inline constexpr int kSimpleThreadThreshold = 64;
// 1024 bytes of work batch / sizeof(ncclDevWorkColl) = 96 on LP64.
inline constexpr int kMaxDevWorkBatchColls = 10;
inline constexpr int kMaxNvlsArity = 32;
inline constexpr int kMaxDirectArity = 7;

// floor(log2(v)), -1 for 0 (NCCL's log2Down, on 64-bit values).
inline int log2i(uint64_t v) {
  int l = -1;
  while (v != 0) {
    v >>= 1;
    ++l;
  }
  return l;
}

}  // namespace weft::tune
