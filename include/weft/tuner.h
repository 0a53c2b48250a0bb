/* weft tuner plugin ABI: the byte layouts of NCCL 2.28.9's ncclTuner_v2 ... v5 tables, under
 * weft's own names.
 *
 * A tuner plugin is a shared library exporting one or more *data* symbols named
 * ncclTunerPlugin_vN, each a table of the matching weft_tuner_vN_t type. The same binary loads
 * into weft and into NCCL: only the symbol names and byte layouts are NCCL's. tests/unit checks
 * every size and offset on LP64 (tuner_abi_layout.c).
 *
 * How a host (NCCL 2.28, or weft) uses a tuner:
 *  - init once per communicator, before the cost model runs. A v5 plugin receives the model's
 *    constants and may rewrite them; older versions never see them. A failing init fails the
 *    communicator's creation in NCCL (weft: see docs/tuner.md).
 *  - getCollInfo once per collective (or aggregated run of collectives) on the launch path:
 *    it must not block and should take well under a microsecond. collCostTable is NOT a
 *    float**: it is a contiguous row-major float[numAlgo][numProto] passed as float**; cast it
 *    to float (*)[numProto] before indexing. Each cell is the model's time in µs, or
 *    WEFT_TUNER_ALGO_PROTO_IGNORE (-1.0) for a combination that is disabled or unsupported. The
 *    host picks the smallest cell >= 0, so a plugin steers the choice by lowering a cell (0.0:
 *    "pick this") or raising others. *nChannels is 0 on entry; leaving it 0 keeps the host's
 *    channel count, any other value replaces it.
 *  - finalize (v5) / destroy (v2..v4) once when the communicator is destroyed.
 *  - The logger handed to init is the host's (weft/debug.h); plugins log through it, never to
 *    stdout, and must accept NULL. */
#ifndef WEFT_TUNER_H_
#define WEFT_TUNER_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/debug.h"
#include "weft/weft.h" /* weft_result_t: values equal ncclResult_t's */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Constants (values are NCCL 2.28.9's, nccl_tuner.h and tuner_v5.h)
 * ------------------------------------------------------------------------------------------- */
#define WEFT_TUNER_NUM_ALGORITHMS 7 /* Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT */
#define WEFT_TUNER_NUM_PROTOCOLS 3  /* LL, LL128, Simple */
#define WEFT_TUNER_NUM_HW_LINKS 3   /* NVLink, PCI, NET */
#define WEFT_TUNER_NUM_COMPCAPS 4   /* Volta, Ampere, Hopper, Blackwell */
#define WEFT_TUNER_NUM_TUNING_SCALES 3 /* 1 node, 2 nodes, more */

#define WEFT_TUNER_ALGO_PROTO_IGNORE (-1.0)

#define WEFT_ALGO_UNDEF (-1)
#define WEFT_ALGO_TREE 0
#define WEFT_ALGO_RING 1
#define WEFT_ALGO_COLLNET_DIRECT 2
#define WEFT_ALGO_COLLNET_CHAIN 3
#define WEFT_ALGO_NVLS 4
#define WEFT_ALGO_NVLS_TREE 5
#define WEFT_ALGO_PAT 6

#define WEFT_PROTO_UNDEF (-1)
#define WEFT_PROTO_LL 0
#define WEFT_PROTO_LL128 1
#define WEFT_PROTO_SIMPLE 2

#define WEFT_HW_NVLINK 0
#define WEFT_HW_PCI 1
#define WEFT_HW_NET 2

#define WEFT_TUNER_PLUGIN_SYMBOL_V2 "ncclTunerPlugin_v2"
#define WEFT_TUNER_PLUGIN_SYMBOL_V3 "ncclTunerPlugin_v3"
#define WEFT_TUNER_PLUGIN_SYMBOL_V4 "ncclTunerPlugin_v4"
#define WEFT_TUNER_PLUGIN_SYMBOL_V5 "ncclTunerPlugin_v5"
#define WEFT_TUNER_PLUGIN_SYMBOL_PREFIX "ncclTunerPlugin_v"
#define WEFT_TUNER_ABI_OLDEST 2
#define WEFT_TUNER_ABI_NEWEST 5

/* Put on a plugin's table definitions so they stay exported under -fvisibility=hidden. */
#if defined(__GNUC__)
#define WEFT_TUNER_EXPORT __attribute__((visibility("default")))
#else
#define WEFT_TUNER_EXPORT
#endif

/* ncclFunc_t: the collective a getCollInfo call is about (an int-sized enum). Only the first
 * five are modelled and offered to a tuner. */
typedef enum {
  WEFT_FUNC_BROADCAST = 0,
  WEFT_FUNC_REDUCE = 1,
  WEFT_FUNC_ALLGATHER = 2,
  WEFT_FUNC_REDUCESCATTER = 3,
  WEFT_FUNC_ALLREDUCE = 4,
  WEFT_FUNC_SENDRECV = 5,
  WEFT_FUNC_SEND = 6,
  WEFT_FUNC_RECV = 7,
  WEFT_FUNC_ALLTOALL = 8,
  WEFT_FUNC_SCATTER = 9,
  WEFT_FUNC_GATHER = 10
} weft_func_t;

/* ---------------------------------------------------------------------------------------------
 * v5 (NCCL 2.28.3 and later): init takes the context first, the communicator id, the NVLink
 * domain shape and the model's constants; finalize replaces destroy.
 * ------------------------------------------------------------------------------------------- */

/* ncclNvlDomainInfo_v5_t. NCCL 2.28 fills it with {nNodes, min local ranks, max local ranks}. */
typedef struct {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
} weft_nvl_domain_info_v5_t;

/* ncclTunerConstants_v5_t: the cost model's constants, which a v5 plugin may rewrite in init.
 * Latencies in µs, bandwidths in GB/s. NCCL's ext-tuner example header omits the last table
 * (1056 bytes); the struct NCCL passes is this one, 1152 bytes. */
typedef struct {
  double baseLatencies[WEFT_TUNER_NUM_ALGORITHMS][WEFT_TUNER_NUM_PROTOCOLS];
  double hwLatencies[WEFT_TUNER_NUM_HW_LINKS][WEFT_TUNER_NUM_ALGORITHMS][WEFT_TUNER_NUM_PROTOCOLS];
  /* [row][scale]: rows are compute capabilities on one node; on several nodes row 0 means
   * Intel-like CPUs and row 1 AMD. */
  double llMaxBws[WEFT_TUNER_NUM_COMPCAPS][WEFT_TUNER_NUM_TUNING_SCALES];
  double perChMaxRingLL128Bws[WEFT_TUNER_NUM_COMPCAPS][WEFT_TUNER_NUM_TUNING_SCALES];
  double perChMaxTreeLL128Bws[WEFT_TUNER_NUM_COMPCAPS][WEFT_TUNER_NUM_TUNING_SCALES];
  double perChMaxTreeBws[WEFT_TUNER_NUM_COMPCAPS][WEFT_TUNER_NUM_TUNING_SCALES];
  double perChMaxNVLSTreeBws[WEFT_TUNER_NUM_COMPCAPS][WEFT_TUNER_NUM_TUNING_SCALES];
} weft_tuner_constants_v5_t;

typedef struct {
  const char* name;
  /* Creates the plugin's state for one communicator in *ctx. `constants` is in/out. */
  weft_result_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, weft_debug_logger_t logFunction,
                        weft_nvl_domain_info_v5_t* nvlDomainInfo, weft_tuner_constants_v5_t* constants);
  /* collType: a weft_func_t (ncclFunc_t). collCostTable: see the top of this file. */
  weft_result_t (*getCollInfo)(void* ctx, weft_func_t collType, size_t nBytes, int numPipeOps,
                               float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  weft_result_t (*finalize)(void* ctx);
} weft_tuner_v5_t;

/* ---------------------------------------------------------------------------------------------
 * v4 (NCCL 2.24): context last in init; getCollInfo as v5; destroy.
 * ------------------------------------------------------------------------------------------- */
typedef struct {
  const char* name;
  weft_result_t (*init)(size_t nRanks, size_t nNodes, weft_debug_logger_t logFunction, void** ctx);
  weft_result_t (*getCollInfo)(void* ctx, weft_func_t collType, size_t nBytes, int numPipeOps,
                               float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  weft_result_t (*destroy)(void* ctx);
} weft_tuner_v4_t;

/* ---------------------------------------------------------------------------------------------
 * v3 (NCCL 2.22): as v4 without regBuff.
 * ------------------------------------------------------------------------------------------- */
typedef struct {
  const char* name;
  weft_result_t (*init)(size_t nRanks, size_t nNodes, weft_debug_logger_t logFunction, void** ctx);
  weft_result_t (*getCollInfo)(void* ctx, weft_func_t collType, size_t nBytes, int numPipeOps,
                               float** collCostTable, int numAlgo, int numProto, int* nChannels);
  weft_result_t (*destroy)(void* ctx);
} weft_tuner_v3_t;

/* ---------------------------------------------------------------------------------------------
 * v2 (NCCL 2.21): no cost table. The plugin is told whether CollNet and NVLS can be used and
 * answers one algorithm and protocol (both, or neither: WEFT_ALGO_UNDEF / WEFT_PROTO_UNDEF).
 * ------------------------------------------------------------------------------------------- */
typedef struct {
  const char* name;
  weft_result_t (*init)(size_t nRanks, size_t nNodes, weft_debug_logger_t logFunction, void** ctx);
  weft_result_t (*getCollInfo)(void* ctx, weft_func_t collType, size_t nBytes, int collNetSupport,
                               int nvlsSupport, int numPipeOps, int* algorithm, int* protocol, int* nChannels);
  weft_result_t (*destroy)(void* ctx);
} weft_tuner_v2_t;

/* The sizes NCCL 2.28.9 passes on LP64 (every field of the tables is 8 bytes; the constants
 * are 147 doubles). Offsets are checked field by field in tests/unit/tuner_abi_layout.c. */
#if defined(__LP64__)
#ifdef __cplusplus
#define WEFT_TUNER_ASSERT_(c, m) static_assert(c, m)
#else
#define WEFT_TUNER_ASSERT_(c, m) _Static_assert(c, m)
#endif
WEFT_TUNER_ASSERT_(sizeof(weft_nvl_domain_info_v5_t) == 12, "ncclNvlDomainInfo_v5_t is 12 bytes");
WEFT_TUNER_ASSERT_(sizeof(weft_tuner_constants_v5_t) == 1152, "ncclTunerConstants_v5_t is 1152 bytes");
WEFT_TUNER_ASSERT_(sizeof(weft_tuner_v5_t) == 32, "ncclTuner_v5_t is 32 bytes");
WEFT_TUNER_ASSERT_(sizeof(weft_tuner_v4_t) == 32, "ncclTuner_v4_t is 32 bytes");
WEFT_TUNER_ASSERT_(sizeof(weft_tuner_v3_t) == 32, "ncclTuner_v3_t is 32 bytes");
WEFT_TUNER_ASSERT_(sizeof(weft_tuner_v2_t) == 32, "ncclTuner_v2_t is 32 bytes");
WEFT_TUNER_ASSERT_(sizeof(weft_func_t) == 4, "ncclFunc_t is int-sized");
#undef WEFT_TUNER_ASSERT_
#endif

#ifdef __cplusplus
}
#endif

#endif /* WEFT_TUNER_H_ */
