/* A fake tuner plugin for the loader, adapter and failure tests: one source, built once per ABI
 * version and behaviour (FAKE_TUNER_VERSION, FAKE_TUNER_MODE; tests/plugins/CMakeLists.txt).
 * It records what the host passed in an exported struct the tests read with dlsym.
 *
 * Modes: 0 well behaved (Ring/Simple to 0.0, 4 channels; v5 also rewrites one constant);
 * 1 init fails; 2 getCollInfo fails; 3 zeroes every cell, IGNORE ones too; 4 writes NaN
 * everywhere; 5 writes -5 everywhere; 6 nChannels -3; 7 nChannels 1000; 8 (v2) answers
 * algorithm 9; 9 (v2) answers an algorithm without a protocol. */
#include <math.h>
#include <stdlib.h>

#include "weft/tuner.h"

#ifndef FAKE_TUNER_VERSION
#error FAKE_TUNER_VERSION must be set
#endif

typedef struct {
  int initCalls, getCalls, finalizeCalls;
  size_t nRanks, nNodes;
  uint64_t commId;
  int sawConstants;      /* v5: init got a constants pointer */
  int nvlDomains;        /* v5: nvlDomainInfo->nNvlDomains */
  int sawLogger;
  int lastColl, lastPipeOps, lastRegBuff, lastNumAlgo, lastNumProto;
  size_t lastBytes;
  int lastCollNetSupport, lastNvlsSupport; /* v2 */
  void* lastCtx;
} fake_tuner_state_t;

WEFT_TUNER_EXPORT fake_tuner_state_t fakeTunerState;

static int gContext = 7; /* the context handed back: the tests check it comes back unchanged */

static weft_result_t commonInit(size_t nRanks, size_t nNodes, weft_debug_logger_t logger, void** ctx) {
  fakeTunerState.initCalls++;
  fakeTunerState.nRanks = nRanks;
  fakeTunerState.nNodes = nNodes;
  fakeTunerState.sawLogger = logger != NULL;
  if (logger != NULL) logger(WEFT_LOG_INFO, WEFT_LOG_TUNING, __FILE__, __LINE__, "fake tuner v%d init", FAKE_TUNER_VERSION);
  if (FAKE_TUNER_MODE == 1) return weftInternalError;
  *ctx = &gContext;
  return weftSuccess;
}

static weft_result_t finish(void* ctx) {
  fakeTunerState.finalizeCalls++;
  fakeTunerState.lastCtx = ctx;
  return weftSuccess;
}

#if FAKE_TUNER_VERSION >= 3
static weft_result_t tableInfo(void* ctx, weft_func_t coll, size_t nBytes, int numPipeOps, float** costTable,
                               int numAlgo, int numProto, int regBuff, int* nChannels) {
  float (*table)[WEFT_TUNER_NUM_PROTOCOLS] = (float (*)[WEFT_TUNER_NUM_PROTOCOLS])costTable;
  fakeTunerState.getCalls++;
  fakeTunerState.lastCtx = ctx;
  fakeTunerState.lastColl = (int)coll;
  fakeTunerState.lastBytes = nBytes;
  fakeTunerState.lastPipeOps = numPipeOps;
  fakeTunerState.lastRegBuff = regBuff;
  fakeTunerState.lastNumAlgo = numAlgo;
  fakeTunerState.lastNumProto = numProto;
  switch (FAKE_TUNER_MODE) {
    case 2: return weftInternalError;
    case 3:
    case 4:
    case 5:
      for (int a = 0; a < numAlgo; ++a)
        for (int p = 0; p < numProto; ++p) table[a][p] = FAKE_TUNER_MODE == 3 ? 0.0f : FAKE_TUNER_MODE == 4 ? NAN : -5.0f;
      return weftSuccess;
    case 6: *nChannels = -3; return weftSuccess;
    case 7: *nChannels = 1000; return weftSuccess;
    default:
      if (table[WEFT_ALGO_RING][WEFT_PROTO_SIMPLE] != WEFT_TUNER_ALGO_PROTO_IGNORE) table[WEFT_ALGO_RING][WEFT_PROTO_SIMPLE] = 0.0f;
      *nChannels = 4;
      return weftSuccess;
  }
}
#endif

#if FAKE_TUNER_VERSION == 5
static weft_result_t initV5(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, weft_debug_logger_t logger,
                            weft_nvl_domain_info_v5_t* nvl, weft_tuner_constants_v5_t* constants) {
  fakeTunerState.commId = commId;
  fakeTunerState.sawConstants = constants != NULL;
  fakeTunerState.nvlDomains = nvl != NULL ? nvl->nNvlDomains : -1;
  /* Rewrites one constant even when init fails: the host must restore them. */
  if (constants != NULL) constants->baseLatencies[WEFT_ALGO_RING][WEFT_PROTO_LL] = 42.0;
  return commonInit(nRanks, nNodes, logger, ctx);
}
WEFT_TUNER_EXPORT const weft_tuner_v5_t ncclTunerPlugin_v5 = {
    .name = FAKE_TUNER_NAME, .init = initV5, .getCollInfo = tableInfo, .finalize = finish};
#elif FAKE_TUNER_VERSION == 4
static weft_result_t initOld(size_t nRanks, size_t nNodes, weft_debug_logger_t logger, void** ctx) {
  return commonInit(nRanks, nNodes, logger, ctx);
}
WEFT_TUNER_EXPORT const weft_tuner_v4_t ncclTunerPlugin_v4 = {
    .name = FAKE_TUNER_NAME, .init = initOld, .getCollInfo = tableInfo, .destroy = finish};
#elif FAKE_TUNER_VERSION == 3
static weft_result_t initOld(size_t nRanks, size_t nNodes, weft_debug_logger_t logger, void** ctx) {
  return commonInit(nRanks, nNodes, logger, ctx);
}
static weft_result_t infoV3(void* ctx, weft_func_t coll, size_t nBytes, int numPipeOps, float** costTable, int numAlgo,
                            int numProto, int* nChannels) {
  return tableInfo(ctx, coll, nBytes, numPipeOps, costTable, numAlgo, numProto, -1, nChannels);
}
WEFT_TUNER_EXPORT const weft_tuner_v3_t ncclTunerPlugin_v3 = {
    .name = FAKE_TUNER_NAME, .init = initOld, .getCollInfo = infoV3, .destroy = finish};
#elif FAKE_TUNER_VERSION == 2
static weft_result_t initOld(size_t nRanks, size_t nNodes, weft_debug_logger_t logger, void** ctx) {
  return commonInit(nRanks, nNodes, logger, ctx);
}
static weft_result_t infoV2(void* ctx, weft_func_t coll, size_t nBytes, int collNetSupport, int nvlsSupport,
                            int numPipeOps, int* algorithm, int* protocol, int* nChannels) {
  fakeTunerState.getCalls++;
  fakeTunerState.lastCtx = ctx;
  fakeTunerState.lastColl = (int)coll;
  fakeTunerState.lastBytes = nBytes;
  fakeTunerState.lastPipeOps = numPipeOps;
  fakeTunerState.lastCollNetSupport = collNetSupport;
  fakeTunerState.lastNvlsSupport = nvlsSupport;
  switch (FAKE_TUNER_MODE) {
    case 2: return weftInternalError;
    case 8: *algorithm = 9; *protocol = WEFT_PROTO_SIMPLE; return weftSuccess;
    case 9: *algorithm = WEFT_ALGO_TREE; return weftSuccess;
    default:
      *algorithm = WEFT_ALGO_RING;
      *protocol = WEFT_PROTO_SIMPLE;
      *nChannels = 4;
      return weftSuccess;
  }
}
WEFT_TUNER_EXPORT const weft_tuner_v2_t ncclTunerPlugin_v2 = {
    .name = FAKE_TUNER_NAME, .init = initOld, .getCollInfo = infoV2, .destroy = finish};
#elif FAKE_TUNER_VERSION == 1
/* Only a symbol weft does not load (NCCL 2.19's v1); the helpers stay referenced. */
WEFT_TUNER_EXPORT const int ncclTunerPlugin_v1 = 1;
WEFT_TUNER_EXPORT weft_result_t (*const fakeTunerUnusedInit)(size_t, size_t, weft_debug_logger_t, void**) = commonInit;
WEFT_TUNER_EXPORT weft_result_t (*const fakeTunerUnusedFinish)(void*) = finish;
#endif
