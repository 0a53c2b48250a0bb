/* Built twice: PROBE_FN names the function (probe_weft / probe_nvidia); the include path decides
 * which nccl.h is read. */
#include <nccl.h>
#include <stddef.h>

#include "layout_probe.h"

#define FACT(expr) \
  do {             \
    if (n < cap) { \
      out[n].name = #expr; \
      out[n].value = (long long)(expr); \
    } \
    ++n; \
  } while (0)
#define FIELD(type, field) \
  FACT(offsetof(type, field)); \
  FACT(sizeof(((type*)0)->field))

int PROBE_FN(probe_fact_t* out, int cap) {
  int n = 0;
  FACT(NCCL_MAJOR);
  FACT(NCCL_MINOR);
  FACT(NCCL_PATCH);
  FACT(NCCL_VERSION_CODE);
  FACT(NCCL_VERSION(2, 8, 4));
  FACT(NCCL_VERSION(2, 28, 9));
  FACT(NCCL_UNIQUE_ID_BYTES);
  FACT(sizeof(ncclUniqueId));
  FACT(sizeof(ncclComm_t));
  FACT(sizeof(ncclWindow_t));
  FACT(NCCL_SPLIT_NOCOLOR);
  FACT(NCCL_CONFIG_UNDEF_INT);
  FACT(NCCL_WIN_DEFAULT);
  FACT(NCCL_WIN_COLL_SYMMETRIC);
  FACT(NCCL_WIN_REQUIRED_ALIGNMENT);
  FACT(NCCL_CTA_POLICY_DEFAULT);
  FACT(NCCL_CTA_POLICY_EFFICIENCY);
  FACT(NCCL_CTA_POLICY_ZERO);
  FACT(NCCL_SHRINK_DEFAULT);
  FACT(NCCL_SHRINK_ABORT);
  FACT(NCCL_REVOKE_DEFAULT);
  FACT(NCCL_UNDEF_FLOAT * 4);
  /* ncclConfig_t: size, every field's place and size, and the initializer's values */
  FACT(sizeof(ncclConfig_t));
  FIELD(ncclConfig_t, size);
  FIELD(ncclConfig_t, magic);
  FIELD(ncclConfig_t, version);
  FIELD(ncclConfig_t, blocking);
  FIELD(ncclConfig_t, cgaClusterSize);
  FIELD(ncclConfig_t, minCTAs);
  FIELD(ncclConfig_t, maxCTAs);
  FIELD(ncclConfig_t, netName);
  FIELD(ncclConfig_t, splitShare);
  FIELD(ncclConfig_t, trafficClass);
  FIELD(ncclConfig_t, commName);
  FIELD(ncclConfig_t, collnetEnable);
  FIELD(ncclConfig_t, CTAPolicy);
  FIELD(ncclConfig_t, shrinkShare);
  FIELD(ncclConfig_t, nvlsCTAs);
  FIELD(ncclConfig_t, nChannelsPerNetPeer);
  FIELD(ncclConfig_t, nvlinkCentricSched);
  {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    FACT(c.size);
    FACT(c.magic);
    FACT(c.version);
    FACT(c.blocking);
    FACT(c.cgaClusterSize);
    FACT(c.minCTAs);
    FACT(c.maxCTAs);
    FACT(c.netName == NULL);
    FACT(c.splitShare);
    FACT(c.trafficClass);
    FACT(c.commName == NULL);
    FACT(c.collnetEnable);
    FACT(c.CTAPolicy);
    FACT(c.shrinkShare);
    FACT(c.nvlsCTAs);
    FACT(c.nChannelsPerNetPeer);
    FACT(c.nvlinkCentricSched);
  }
  FACT(sizeof(ncclSimInfo_t));
  FIELD(ncclSimInfo_t, size);
  FIELD(ncclSimInfo_t, magic);
  FIELD(ncclSimInfo_t, version);
  FIELD(ncclSimInfo_t, estimatedTime);
  {
    ncclSimInfo_t s = NCCL_SIM_INFO_INITIALIZER;
    FACT(s.size);
    FACT(s.magic);
    FACT(s.version);
    FACT(s.estimatedTime * 4);
  }
  /* enums: sizes and every value */
  FACT(sizeof(ncclResult_t));
  FACT(ncclSuccess);
  FACT(ncclUnhandledCudaError);
  FACT(ncclSystemError);
  FACT(ncclInternalError);
  FACT(ncclInvalidArgument);
  FACT(ncclInvalidUsage);
  FACT(ncclRemoteError);
  FACT(ncclInProgress);
  FACT(ncclNumResults);
  FACT(sizeof(ncclRedOp_t));
  FACT(ncclSum);
  FACT(ncclProd);
  FACT(ncclMax);
  FACT(ncclMin);
  FACT(ncclAvg);
  FACT(ncclNumOps);
  FACT(ncclMaxRedOp);
  FACT(sizeof(ncclDataType_t));
  FACT(ncclInt8);
  FACT(ncclChar);
  FACT(ncclUint8);
  FACT(ncclInt32);
  FACT(ncclInt);
  FACT(ncclUint32);
  FACT(ncclInt64);
  FACT(ncclUint64);
  FACT(ncclFloat16);
  FACT(ncclHalf);
  FACT(ncclFloat32);
  FACT(ncclFloat);
  FACT(ncclFloat64);
  FACT(ncclDouble);
  FACT(ncclBfloat16);
  FACT(ncclFloat8e4m3);
  FACT(ncclFloat8e5m2);
  FACT(ncclNumTypes);
  FACT(sizeof(ncclScalarResidence_t));
  FACT(ncclScalarDevice);
  FACT(ncclScalarHostImmediate);
  return n;
}
