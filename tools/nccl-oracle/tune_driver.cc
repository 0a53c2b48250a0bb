// nccl-oracle's tuning phase (ORACLE_TUNE=1): after the connect phase of rank 0 (connect_driver.cc),
// runs NCCL 2.28.9's own tuning model (src/graph/tuning.cc: ncclTopoInitTunerConstants,
// ncclTopoTuneModel, ncclTopoGetAlgoTime; built by build.sh when the NCCL tree has it) as init.cc's
// initTransportsRank does after the p2p channel count (ncclTopoComputeP2pChannels, paths.cc), then
// the per-size choice of src/enqueue.cc (getAlgoInfo: the cost table, its minimum, the channel and
// thread picks) for one operation of float32 sum on unregistered buffers, no tuner plugin. enqueue.cc
// needs the whole runtime, so its three functions are re-stated here from reading them; the model
// itself is NCCL's compiled code. Prints the lines of corpus/reference-nccl-2.28.9-tuning (README).
// A local check of weft, not part of weft.
#include "shim.h"
#include "graph.h"
#include "topo.h"
#include <limits.h>
#include <string>
#include <vector>

#if ORACLE_HAVE_TUNING

ncclResult_t ncclTopoInitTunerConstants(struct ncclComm* comm);  // tuning.cc
ncclResult_t ncclTopoTuneModel(struct ncclComm* comm, int minCompCap, int maxCompCap, struct ncclTopoGraph** graphs);
ncclResult_t ncclTopoGetAlgoTime(struct ncclComm* comm, int coll, int algorithm, int protocol, size_t nBytes, int numPipeOps, float* time);
ncclResult_t ncclTopoComputeCommCPU(struct ncclComm* comm);  // search.cc
ncclResult_t ncclTopoComputeP2pChannels(struct ncclComm* comm);  // paths.cc

// init.cc's names
const char* ncclFuncStr[NCCL_NUM_FUNCTIONS] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
const char* ncclAlgoStr[NCCL_NUM_ALGORITHMS] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
const char* ncclProtoStr[NCCL_NUM_PROTOCOLS] = {"LL", "LL128", "Simple"};

namespace {

const char* pathName(int t) {
  static const char* kNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return t >= 0 && t < 12 ? kNames[t] : "?";
}

typedef float CostTable[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];

// enqueue.cc's updateCollCostTable for one operation (numPipeOps 1) of float32 sum: no fp8 penalty,
// no PAT exclusion for PreMulSum/SumPostDiv.
ncclResult_t costTable(struct ncclComm* comm, int func, size_t nBytes, int collNetSupport, int nvlsSupport, CostTable table) {
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) table[a][p] = NCCL_ALGO_PROTO_IGNORE;
  if (comm->nRanks == 1) {
    table[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 0.0;
    return ncclSuccess;
  }
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
    bool collnet = a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN;
    if (collnet && collNetSupport != 1) continue;
    if (collnet && comm->maxLocalRanks > NCCL_MAX_DIRECT_ARITY + 1) continue;
    bool nvls = a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE;
    if (nvls && (!nvlsSupport || (func != ncclFuncAllReduce && comm->localRanks > NCCL_MAX_NVLS_ARITY))) continue;
    if (a == NCCL_ALGO_NVLS && collNetSupport != 1 && comm->nNodes > 1) continue;
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) NCCLCHECK(ncclTopoGetAlgoTime(comm, func, a, p, nBytes, 1, &table[a][p]));
  }
  return ncclSuccess;
}

struct Choice { int algo, proto, nMaxChannels, nThreads; float time; };

// enqueue.cc's topoGetAlgoInfo: the cheapest enabled cell (first in algorithm then protocol order
// on ties), then the channel budget and threads per block.
bool pick(struct ncclComm* comm, size_t nBytes, CostTable table, Choice* out) {
  float minTime = 3600000000.0;
  int algorithm = NCCL_ALGO_UNDEF, protocol = NCCL_PROTO_UNDEF;
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
      if (table[a][p] == NCCL_ALGO_PROTO_IGNORE) continue;
      if (table[a][p] >= 0.0 && table[a][p] < minTime) { algorithm = a; protocol = p; minTime = table[a][p]; }
    }
  if (algorithm == NCCL_ALGO_UNDEF || protocol == NCCL_PROTO_UNDEF) return false;
  int nc = comm->nChannels;
  int nt = comm->maxThreads[algorithm][protocol];
  int threadThreshold = comm->threadThresholds[algorithm][protocol];
  if (algorithm == NCCL_ALGO_COLLNET_DIRECT) {
    int ncSwitch = 16;
    bool flag = true;
    while (ncSwitch >= 1 && flag) {
      while ((flag = nBytes < (size_t)nc * nt * comm->channels[0].collnetDirect.nHeads * threadThreshold) && nc > ncSwitch) {
        if (nc == ncSwitch + ncSwitch / 2) threadThreshold /= 2;
        nc--;
      }
      ncSwitch /= 2;
    }
  } else if (algorithm == NCCL_ALGO_NVLS || algorithm == NCCL_ALGO_NVLS_TREE) {
    nc = (comm->nNodes > 1 && algorithm == NCCL_ALGO_NVLS) ? std::min(comm->nvlsChannels, comm->nChannels) : comm->nvlsChannels;
  } else {
    while (nBytes < (size_t)nc * nt * threadThreshold) {
      if (nc >= 2) nc--; else break;
    }
  }
  if (algorithm != NCCL_ALGO_NVLS && algorithm != NCCL_ALGO_NVLS_TREE && algorithm != NCCL_ALGO_COLLNET_DIRECT) {
    while (nBytes < (size_t)nc * nt * threadThreshold) {
      if (nt % 128 == 0) nt /= 2; else break;
    }
  }
  if (protocol == NCCL_PROTO_SIMPLE) {
    if (algorithm == NCCL_ALGO_RING) nt += WARP_SIZE;
    if (algorithm == NCCL_ALGO_TREE) nt += 4 * WARP_SIZE;
  }
  nt = nt / WARP_SIZE < 3 ? 3 * WARP_SIZE : nt;
  if (algorithm == NCCL_ALGO_TREE || algorithm == NCCL_ALGO_PAT) nt = NCCL_MAX_NTHREADS;
  *out = {algorithm, protocol, nc, nt / WARP_SIZE * WARP_SIZE, minTime};
  return true;
}

void printInputs(struct ncclComm* comm, struct ncclTopoGraph** graphs) {
  printf("# comm nRanks %d nNodes %d localRanks %d maxLocalRanks %d minLocalRanks %d minCompCap %d maxCompCap %d "
         "cpuArch %d cpuVendor %d netDeviceType %d maxTreePattern %d nChannels %d nvlsSupport %d nvlsChannels %d "
         "collnetEnable %d p2pnChannels %d p2pnChannelsPerPeer %d\n",
         comm->nRanks, comm->nNodes, comm->localRanks, comm->maxLocalRanks, comm->minLocalRanks, comm->minCompCap,
         comm->maxCompCap, comm->cpuArch, comm->cpuVendor, comm->netDeviceType, comm->maxTreePattern, comm->nChannels,
         comm->nvlsSupport, comm->nvlsChannels, comm->config.collnetEnable, comm->p2pnChannels, comm->p2pnChannelsPerPeer);
  static const struct { const char* name; int algo; } kGraphs[] = {
      {"Ring", NCCL_ALGO_RING}, {"Tree", NCCL_ALGO_TREE}, {"CollNetChain", NCCL_ALGO_COLLNET_CHAIN},
      {"CollNetDirect", NCCL_ALGO_COLLNET_DIRECT}, {"NVLS", NCCL_ALGO_NVLS}};
  for (const auto& k : kGraphs) {
    struct ncclTopoGraph* g = graphs[k.algo];
    printf("# graph %-13s pattern %d nChannels %d sameChannels %d bwIntra %g bwInter %g latencyInter %g typeIntra %s "
           "typeInter %s crossNic %d\n", k.name, g->pattern, g->nChannels, g->sameChannels, g->bwIntra, g->bwInter,
           g->latencyInter, pathName(g->typeIntra), pathName(g->typeInter), g->crossNic);
  }
}

}  // namespace

// comm: rank 0 after ncclTopoPostset, with nNodes, localRanks, maxLocalRanks and maxTreePattern set;
// nodeLocalRanks: ranks per node; graphs: rank 0's merged graphs in NCCL_ALGO_* order.
int oracleTune(struct ncclComm* comm, struct ncclTopoGraph** graphs, const std::vector<int>& nodeLocalRanks) {
  // init.cc: nodeRanks and minLocalRanks after the AllGather3; the CPU type (all nodes identical,
  // never mixed); NCCL_NCHANNELS_PER_NET_PEER into config.nChannelsPerNetPeer (0 or less ignored).
  std::vector<ncclNodeRanksShim> nodeRanks(nodeLocalRanks.size());
  comm->minLocalRanks = INT_MAX;
  for (size_t n = 0; n < nodeLocalRanks.size(); n++) {
    nodeRanks[n].localRanks = nodeLocalRanks[n];
    comm->minLocalRanks = std::min(comm->minLocalRanks, nodeLocalRanks[n]);
  }
  comm->nodeRanks = nodeRanks.data();
  NCCLCHECK(ncclTopoComputeCommCPU(comm));
  comm->config.nChannelsPerNetPeer = NCCL_CONFIG_UNDEF_INT;
  { const char* s = getenv("NCCL_NCHANNELS_PER_NET_PEER");
    if (s && *s) { long v = strtol(s, NULL, 0); if (v > 0) comm->config.nChannelsPerNetPeer = (int)v; } }
  comm->collNetHeadsNum = 0;
  NCCLCHECK(ncclTopoComputeP2pChannels(comm));
  printf("# nccl-oracle tuning: NCCL 2.28.9 tuning.cc (ncclTopoTuneModel) and enqueue.cc (cost table, topoGetAlgoInfo), rank 0\n");
  printInputs(comm, graphs);
  fflush(stdout);

  // The tuning phase prints what NCCL_DEBUG_SUBSYS=TUNING,INIT,ENV shows, its parameters' ENV lines included.
  oracleInfo = 1;
  oracleSubsys = NCCL_TUNING | NCCL_INIT | NCCL_ENV;
  oracleParamInfo = 1;
  NCCLCHECK(ncclTopoInitTunerConstants(comm));
  NCCLCHECK(ncclTopoTuneModel(comm, comm->minCompCap, comm->maxCompCap, graphs));
  INFO(NCCL_INIT, "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels per peer",
       comm->nChannels, comm->nChannels, comm->nvlsChannels, comm->p2pnChannels, comm->p2pnChannelsPerPeer);
  fflush(stdout);

  printf("# TUNE <coll> <bytes> <algo> <proto> <time_us>; TUNECH <coll> <bytes> <nMaxChannels> <nThreads>; "
         "COST <coll> <bytes> <time_us of Tree/LL Tree/LL128 Tree/Simple Ring/LL ... PAT/Simple, -1 = not available>\n");
  static const struct { const char* name; int func; } kColls[] = {
      {"allreduce", ncclFuncAllReduce}, {"allgather", ncclFuncAllGather}, {"reducescatter", ncclFuncReduceScatter},
      {"broadcast", ncclFuncBroadcast}, {"reduce", ncclFuncReduce}};
  const char* sizesEnv = getenv("ORACLE_TUNE_SIZES");  // "LO:HI" log2 bounds, default 3:30
  int lo = 3, hi = 30;
  if (sizesEnv) sscanf(sizesEnv, "%d:%d", &lo, &hi);
  for (const auto& c : kColls) {
    // enqueue.cc: collNetSupport is config.collnetEnable (no CollNet plugin here: 0); NVLS takes
    // float32 sum, and AllGather whatever the type.
    int collNetSupport = comm->config.collnetEnable;
    int nvlsSupport = comm->nvlsSupport ? 1 : 0;
    for (int k = lo; k <= hi; k++) {
      size_t nBytes = (size_t)1 << k;
      CostTable table;
      NCCLCHECK(costTable(comm, c.func, nBytes, collNetSupport, nvlsSupport, table));
      Choice ch;
      if (pick(comm, nBytes, table, &ch)) {
        printf("TUNE %s %zu %s %s %.3f\n", c.name, nBytes, ncclAlgoStr[ch.algo], ncclProtoStr[ch.proto], ch.time);
        printf("TUNECH %s %zu %d %d\n", c.name, nBytes, ch.nMaxChannels, ch.nThreads);
      } else {
        printf("TUNE %s %zu none none -1.000\n", c.name, nBytes);
        printf("TUNECH %s %zu 0 0\n", c.name, nBytes);
      }
      printf("COST %s %zu", c.name, nBytes);
      for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) printf(" %.3f", table[a][p]);
      printf("\n");
    }
  }
  comm->nodeRanks = NULL;
  return 0;
}

#else

int oracleTune(struct ncclComm*, struct ncclTopoGraph**, const std::vector<int>&) {
  fprintf(stderr, "nccl-oracle: built without src/graph/tuning.cc, ORACLE_TUNE unavailable\n");
  return 2;
}

#endif
