// What NCCL's graph code needs from the rest of NCCL, for nccl-oracle (see README.md): status
// macros, logging, allocation, parameters, the communicator fields it reads, and NVML types
// that are never used with a device. Every internal NCCL header resolves to this file.
#pragma once
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <pthread.h>
#include <algorithm>
#include <math.h>
#include <limits>
#include <sys/types.h>
#include "plugin/nccl_net.h"


// ---- NVML stand-ins (never called with real devices in the oracle)
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef enum { NVML_FEATURE_DISABLED=0, NVML_FEATURE_ENABLED=1 } nvmlEnableState_t;
typedef enum { NVML_SUCCESS=0 } nvmlReturn_t;
#define NVML_NVLINK_CAP_P2P_SUPPORTED 0
#define NVML_FI_DEV_NVLINK_GET_STATE 1
#define NVML_FI_DEV_C2C_LINK_COUNT 2
#define NVML_FI_DEV_C2C_LINK_GET_STATUS 3
#define NVML_FI_DEV_C2C_LINK_GET_MAX_BW 4
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_GPU_FABRIC_UUID_LEN 16
typedef struct { unsigned int fieldId; unsigned int scopeId; long long timestamp; long long latencyUsec; int valueType; nvmlReturn_t nvmlReturn; union { unsigned int uiVal; unsigned long long ullVal; double dVal; } value; } nvmlFieldValue_t;
typedef struct { char busIdLegacy[16]; unsigned int domain, bus, device, pciDeviceId, pciSubSystemId; char busId[32]; } nvmlPciInfo_t;
typedef struct { unsigned int version; unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN]; int status; unsigned int cliqueId; int state; unsigned int healthMask; } nvmlGpuFabricInfoV_t;
typedef enum { NVML_P2P_STATUS_OK=0 } nvmlGpuP2PStatus_t;
struct ncclNvmlCCStatus { int a; };
struct ncclNvmlDevicePairInfo { nvmlGpuP2PStatus_t p2pStatusRead, p2pStatusWrite; };
extern ncclNvmlDevicePairInfo ncclNvmlDevicePairs[32][32];
ncclResult_t ncclNvmlEnsureInitialized();
ncclResult_t ncclNvmlDeviceGetIndex(nvmlDevice_t, unsigned int*);
ncclResult_t ncclNvmlDeviceGetCudaComputeCapability(nvmlDevice_t, int*, int*);
ncclResult_t ncclNvmlDeviceGetNvLinkCapability(nvmlDevice_t, unsigned int, int, unsigned int*);
ncclResult_t ncclNvmlDeviceGetFieldValues(nvmlDevice_t, int, nvmlFieldValue_t*);
ncclResult_t ncclNvmlDeviceGetNvLinkState(nvmlDevice_t, unsigned int, nvmlEnableState_t*);
ncclResult_t ncclNvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t, unsigned int, nvmlPciInfo_t*);
ncclResult_t ncclNvmlDeviceGetHandleByPciBusId(const char*, nvmlDevice_t*);
extern thread_local int ncclDebugNoWarn;
uint64_t getHostHash();
uint64_t getPidHash();
#include <errno.h>

#define MAXCHANNELS 64
#define NCCL_MAX_TREE_ARITY 3
#define NCCL_MAX_DIRECT_ARITY 7
#define NCCL_NUM_ALGORITHMS 7
#define NCCL_NUM_PROTOCOLS 3
#define NCCL_NUM_FUNCTIONS 5
#define NCCL_ALGO_TREE 0
#define NCCL_ALGO_RING 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN 3
#define NCCL_ALGO_NVLS 4
#define NCCL_ALGO_NVLS_TREE 5
#define NCCL_ALGO_PAT 6
#define NCCL_PROTO_LL 0
#define NCCL_PROTO_LL128 1
#define NCCL_PROTO_SIMPLE 2
#define NCCL_MAX_NVLS_ARITY 32
#define NCCL_MAX_DEV_WORK_BATCH_BYTES 1024
#define MAX_STR_LEN 255
#define NCCL_NET_MAX_DEVS_PER_NIC 4
typedef enum { NCCL_LOG_NONE=0, NCCL_LOG_VERSION=1, NCCL_LOG_WARN=2, NCCL_LOG_INFO=3, NCCL_LOG_ABORT=4, NCCL_LOG_TRACE=5 } ncclDebugLogLevel_shim;
#define NCCL_INIT 1
#define NCCL_COLL 2
#define NCCL_P2P 4
#define NCCL_SHM 8
#define NCCL_NET 16
#define NCCL_GRAPH 32
#define NCCL_TUNING 64
#define NCCL_ENV 128
#define NCCL_ALLOC 256
#define NCCL_CALL 512
#define NCCL_PROXY 1024
#define NCCL_NVLS 2048
#define NCCL_BOOTSTRAP 4096
#define NCCL_REG 8192
#define NCCL_ALL (~0)

extern int oracleRank;
extern int oracleInfo;
extern unsigned long oracleSubsys;  // INFO lines shown: NCCL_DEBUG_SUBSYS's mask (all unless ORACLE_TUNE)
extern int oracleParamInfo;         // NCCL_PARAM loads print NCCL's "set by environment" lines
void oracleLog(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) __attribute__((format(printf,5,6)));
#define WARN(...) oracleLog(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__, __VA_ARGS__)
#define INFO(FLAGS, ...) oracleLog(NCCL_LOG_INFO, (FLAGS), __func__, __LINE__, __VA_ARGS__)
#define TRACE(...)

#define NCCLCHECK(call) do { ncclResult_t RES = call; if (RES != ncclSuccess && RES != ncclInProgress) { return RES; } } while (0)
#define NCCLCHECKGOTO(call, RES, label) do { RES = call; if (RES != ncclSuccess && RES != ncclInProgress) { goto label; } } while (0)
#define SYSCHECK(call, name) do { int retval; SYSCHECKVAL(call, name, retval); } while (false)
#define SYSCHECKVAL(call, name, retval) do { retval = call; if (retval == -1) { WARN("Call to " name " failed"); return ncclSystemError; } } while (false)
#define CUDACHECK(cmd) do { (void)(cmd); } while(0)

template <typename T> ncclResult_t ncclCalloc(T** ptr, size_t nelem) {
  void* p = calloc(nelem ? nelem : 1, sizeof(T)); if (!p) return ncclSystemError; *ptr = (T*)p; return ncclSuccess; }
template <typename T> ncclResult_t ncclRealloc(T** ptr, size_t oldNelem, size_t nelem) {
  T* p = (T*)realloc(*ptr, nelem*sizeof(T)); if (!p) return ncclSystemError;
  if (nelem > oldNelem) memset(p+oldNelem, 0, (nelem-oldNelem)*sizeof(T)); *ptr = p; return ncclSuccess; }

const char* ncclGetEnv(const char* name);
int64_t ncclLoadParamShim(const char* env, int64_t deftVal);
#define NCCL_PARAM(name, env, deftVal) \
  int64_t ncclParam##name() { static int64_t v = ncclLoadParamShim("NCCL_" env, deftVal); return v; }

struct ncclPeerInfo {
  int rank; int cudaDev; int nvmlDev; int gdrSupport; uint64_t hostHash; uint64_t pidHash; dev_t shmDev;
  int64_t busId; struct ncclComm* comm; int cudaCompCap; size_t totalGlobalMem;
  nvmlGpuFabricInfoV_t fabricInfo;
};
#define DIVUP(x, y) (((x)+(y)-1)/(y))
#define ROUNDUP(x, y) (DIVUP((x), (y))*(y))
#define NOWARN(EXPR, FLAGS) do { ncclDebugNoWarn = FLAGS; EXPR; ncclDebugNoWarn = 0; } while(0)
#define NCCLCHECKNOWARN(call, FLAGS) do { ncclResult_t RES; NOWARN(RES = call, FLAGS); if (RES != ncclSuccess) return RES; } while (0)
ncclResult_t busIdToInt64(const char* busId, int64_t* id);
ncclResult_t int64ToBusId(int64_t id, char* busId);
ncclResult_t ncclStrToCpuset(const char* str, cpu_set_t* mask);
ncclResult_t ncclCpusetToRangeStr(cpu_set_t* mask, char* str, size_t len);
static inline void eatHash(uint64_t acc[2], const void* bytes, size_t n) {
  const unsigned char* b = (const unsigned char*)bytes;
  for (size_t i = 0; i < n; i++) { acc[0] = (acc[0] ^ b[i]) * 1099511628211ull; acc[1] += acc[0]; }
}
template<typename T> static inline void eatHash(uint64_t acc[2], const T* x) { eatHash(acc, (const void*)x, sizeof(T)); }
static inline uint64_t digestHash(const uint64_t acc[2]) { return acc[0] ^ (acc[1] * 31); }
struct ncclSharedResourcesShim { struct ncclComm* owner; int tpP2pNChannels; int tpNChannels; };
struct ncclConfigShim { int nChannelsPerNetPeer; int collnetEnable; int minCTAs; int maxCTAs; };
// The channel as connect.cc (ncclTopoPreset/Postset) fills it; NCCL's device.h has more fields.
#define NCCL_MAX_NVLS_TREE_ARITY 3
struct ncclRing { int prev; int next; };
struct ncclTree { int depth; int up; int down[NCCL_MAX_TREE_ARITY]; };
struct ncclDirect { int depth; int out; int nHeads; int headRank; int shift;
  int heads[NCCL_MAX_DIRECT_ARITY+1]; int up[NCCL_MAX_DIRECT_ARITY]; int down[NCCL_MAX_DIRECT_ARITY]; };
struct ncclNvls { int out; int nHeads; int headRank; int treeUp; int treeDown[NCCL_MAX_NVLS_TREE_ARITY];
  int up[NCCL_MAX_NVLS_ARITY]; int down; };
struct ncclChannel { struct ncclRing ring; struct ncclTree tree; struct ncclTree collnetChain;
  struct ncclDirect collnetDirect; struct ncclNvls nvls; int id; };
struct ncclNvlsResourcesShim { int nChannels; };
// The tuning model (src/graph/tuning.cc, ORACLE_TUNE=1): built when build.sh found it and copied
// the tuner plugin's v5 types (src/include/plugin/tuner/tuner_v5.h) next to the shims.
#if __has_include("plugin/tuner/tuner_v5.h")
#define ORACLE_HAVE_TUNING 1
#include <cuda_runtime.h>  // CUDART_VERSION, read by tuning.cc's LL128 rule
typedef enum { ncclFuncBroadcast = 0, ncclFuncReduce = 1, ncclFuncAllGather = 2, ncclFuncReduceScatter = 3,
               ncclFuncAllReduce = 4 } ncclFunc_t;
#include "plugin/tuner/tuner_v5.h"
typedef ncclTunerConstants_v5_t ncclTunerConstants_t;
#define NCCL_ALGO_UNDEF -1
#define NCCL_PROTO_UNDEF -1
#define NCCL_ALGO_PROTO_IGNORE -1.0
#define NCCL_HW_NVLINK 0
#define NCCL_HW_PCI 1
#define NCCL_HW_NET 2
#define NCCL_VOLTA_COMPCAP_IDX 0
#define NCCL_AMPERE_COMPCAP_IDX 1
#define NCCL_HOPPER_COMPCAP_IDX 2
#define NCCL_BLACKWELL_COMPCAP_IDX 3
#define NCCL_NUM_COMPCAPS NCCL_NUM_COMPCAPS_V5
#define WARP_SIZE 32
#define NCCL_MAX_NTHREADS 640
#define NCCL_SIMPLE_MAX_NTHREADS 512
#define NCCL_LL_MAX_NTHREADS 512
#define NCCL_LL128_MAX_NTHREADS 640
#define NCCL_LL_THREAD_THRESHOLD 8
#define NCCL_LL128_THREAD_THRESHOLD 8
#define NCCL_SIMPLE_THREAD_THRESHOLD 64
// 1024 bytes over sizeof(ncclDevWorkColl): only divides numPipeOps, which is 1 here (one operation).
#define NCCL_MAX_DEV_WORK_BATCH_COLLS 16
extern const char* ncclFuncStr[NCCL_NUM_FUNCTIONS];
extern const char* ncclAlgoStr[NCCL_NUM_ALGORITHMS];
extern const char* ncclProtoStr[NCCL_NUM_PROTOCOLS];
struct ncclNodeRanksShim { int localRanks; int* localRankToRank; };
#else
#define ORACLE_HAVE_TUNING 0
#endif
struct ncclComm {
  struct ncclPeerInfo* peerInfo; int rank; int nRanks; int localRanks; int MNNVL;
  struct ncclTopoSystem* topo; ncclNet_t* ncclNet; int ncclNetVer; ncclCollNet_t* ncclCollNet;
  ncclConfigShim config; int nChannels; int p2pnChannels; int p2pnChannelsPerPeer;
  ncclSharedResourcesShim* sharedRes; int cpuArch; int cpuVendor; int netPluginIndex; int dmaBufSupport;
  void* bootstrap; int cliqueRank; struct { int size; int* ranks; } clique;
  // connect phase (connect.cc), used by the connect driver only
  struct ncclChannel channels[MAXCHANNELS]; int collChannels; int nNodes; int node; int maxLocalRanks;
  int minCompCap; int maxCompCap; int netDeviceType; int nvlsSupport; int nvlsChannels; int nvlsHeads[MAXCHANNELS];
  int* rankToNode; int shareResources; struct ncclNvlsResourcesShim* nvlsResources; int maxTreePattern;
#if ORACLE_HAVE_TUNING
  // tuning phase (tuning.cc), used by the tune driver only
  ncclTunerConstants_v5_t tunerConstants; int maxThreads[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  float bandwidths[NCCL_NUM_FUNCTIONS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  float latencies[NCCL_NUM_FUNCTIONS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  ssize_t threadThresholds[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  int minLocalRanks; int collNetHeadsNum; struct ncclNodeRanksShim* nodeRanks;
#endif
};
// utils.h's log2i (bitops.h's log2Down on the host): -1 for 0, which keeps ncclTopoGetAlgoTime's
// tree correction off below 64 bytes.
static inline long log2i(long n) { return n == 0 ? -1 : 63 - __builtin_clzl((unsigned long)n); }
ncclResult_t ncclGetBtree(int nranks, int rank, int* u0, int* d1, int* d0, int* parentChildType);
ncclResult_t ncclGetDtree(int nranks, int rank, int* u0, int* d0_0, int* d0_1, int* parentChildType0, int* u1, int* d1_0, int* d1_1, int* parentChildType1);
ncclResult_t ncclBuildRings(int nrings, int* rings, int rank, int nranks, int* prev, int* next);
enum { TRANSPORT_P2P = 0, TRANSPORT_SHM = 1, TRANSPORT_NET = 2 };
struct ncclConnect;
struct ncclTransportShim { ncclResult_t (*canConnect)(int*, struct ncclComm*, struct ncclTopoGraph*, struct ncclPeerInfo*, struct ncclPeerInfo*); };
extern ncclTransportShim* ncclTransports[3];
ncclResult_t initChannel(struct ncclComm* comm, int channelId);
int ncclDevMaxChannelsForArgsBytes(size_t argsBytes);
static inline int pow2Up(int x) { int y = 1; while (y < x) y += y; return y; }
static inline int pow2Down(int x) { int y = 1; while (y*2 <= x) y += y; return y; }
