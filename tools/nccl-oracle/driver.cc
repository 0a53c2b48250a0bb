// nccl-oracle's driver: runs NCCL 2.28.9's own graph code (xml, topo, paths, search; built by
// build.sh from an NCCL source tree you provide) on a topology file, as `weft search` does for
// node 0 of N identical nodes, and writes NCCL's graph dump. A local check of weft's fidelity,
// not part of weft's build.
#include "shim.h"
#include "graph.h"
#include "topo.h"
#include "xml.h"
#include <stdarg.h>
#include <cuda_runtime.h>
#include <string>
#include <vector>

int oracleRank = 0;
int oracleInfo = 0;
unsigned long oracleSubsys = NCCL_ALL;
int oracleParamInfo = 0;
thread_local int ncclDebugNoWarn = 0;
ncclNvmlDevicePairInfo ncclNvmlDevicePairs[32][32];

void oracleLog(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  if (level == NCCL_LOG_WARN && ncclDebugNoWarn) return;
  if (level == NCCL_LOG_INFO && (!oracleInfo || !(flags & oracleSubsys))) return;
  char buf[4096];
  va_list ap; va_start(ap, fmt); vsnprintf(buf, sizeof buf, fmt, ap); va_end(ap);
  if (level == NCCL_LOG_WARN) fprintf(stderr, "[%d] NCCL WARN %s\n", oracleRank, buf);
  else printf("[%d] NCCL INFO %s\n", oracleRank, buf);
}
const char* ncclGetEnv(const char* name) { return getenv(name); }
int64_t ncclLoadParamShim(const char* env, int64_t deftVal) {
  const char* s = getenv(env);
  if (s == NULL || *s == 0) return deftVal;
  // As src/misc/param.cc: strtoll, base 0; only an overflow falls back to the default.
  errno = 0; long long v = strtoll(s, NULL, 0);
  if (errno) {
    if (oracleParamInfo) INFO(NCCL_ALL, "Invalid value %s for %s, using default %lld.", s, env, (long long)deftVal);
    return deftVal;
  }
  if (oracleParamInfo) INFO(NCCL_ENV, "%s set by environment to %lld.", env, v);
  return v;
}
uint64_t getHostHash() { return 0; }
uint64_t getPidHash() { return 0; }
ncclResult_t ncclNvmlEnsureInitialized() { return ncclSuccess; }
ncclResult_t ncclNvmlDeviceGetIndex(nvmlDevice_t, unsigned int*) { return ncclSystemError; }
ncclResult_t ncclNvmlDeviceGetCudaComputeCapability(nvmlDevice_t, int*, int*) { return ncclSystemError; }
ncclResult_t ncclNvmlDeviceGetNvLinkCapability(nvmlDevice_t, unsigned int, int, unsigned int*) { return ncclSystemError; }
ncclResult_t ncclNvmlDeviceGetFieldValues(nvmlDevice_t, int, nvmlFieldValue_t*) { return ncclSystemError; }
ncclResult_t ncclNvmlDeviceGetNvLinkState(nvmlDevice_t, unsigned int, nvmlEnableState_t*) { return ncclSystemError; }
ncclResult_t ncclNvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t, unsigned int, nvmlPciInfo_t*) { return ncclSystemError; }
ncclResult_t ncclNvmlDeviceGetHandleByPciBusId(const char*, nvmlDevice_t*) { return ncclSystemError; }
ncclResult_t busIdToInt64(const char* busId, int64_t* id) {
  char hex[17]; int n = 0;
  for (int i = 0; n < 16; i++) {
    char c = busId[i];
    if (c == '.' || c == ':') continue;
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) hex[n++] = c; else break;
  }
  hex[n] = 0; *id = strtol(hex, NULL, 16); return ncclSuccess;
}
ncclResult_t int64ToBusId(int64_t id, char* busId) {
  sprintf(busId, "%04lx:%02lx:%02lx.%01lx", id >> 20, (id & 0xff000) >> 12, (id & 0xff0) >> 4, id & 0xf);
  return ncclSuccess;
}
ncclResult_t ncclStrToCpuset(const char*, cpu_set_t* mask) { CPU_ZERO(mask); return ncclSuccess; }
ncclResult_t ncclCpusetToRangeStr(cpu_set_t*, char* str, size_t) { str[0] = 0; return ncclSuccess; }
ncclResult_t initChannel(struct ncclComm*, int) { return ncclSuccess; }
int ncclDevMaxChannelsForArgsBytes(size_t) { return MAXCHANNELS; }

#ifdef ORACLE_WITH_CONNECT
int oracleConnect(const char* topoFile, int nodes, const char* out, const std::string& pats);
#endif

static ncclResult_t p2pCan(int* ret, struct ncclComm* comm, struct ncclTopoGraph*, struct ncclPeerInfo* a, struct ncclPeerInfo* b) {
  int p2p = 0, inter = -1;
  NCCLCHECK(ncclTopoCheckP2p(comm, comm->topo, a->rank, b->rank, &p2p, NULL, &inter, NULL));
  *ret = p2p;
  if (p2p == 0 || inter != -1) return ncclSuccess;
  int useNet = 0;
  NCCLCHECK(ncclTopoCheckNet(comm->topo, a->rank, b->rank, &useNet));
  if (useNet) *ret = 0;
  return ncclSuccess;
}
static ncclResult_t shmCan(int* ret, struct ncclComm* comm, struct ncclTopoGraph*, struct ncclPeerInfo* a, struct ncclPeerInfo* b) {
  *ret = 0;
  const char* d = getenv("NCCL_SHM_DISABLE");
  if (d && atoi(d) == 1) return ncclSuccess;
  int useNet = 0;
  NCCLCHECK(ncclTopoCheckNet(comm->topo, a->rank, b->rank, &useNet));
  if (useNet) return ncclSuccess;
  if (a->hostHash != b->hostHash) return ncclSuccess;
  *ret = 1; return ncclSuccess;
}
static ncclTransportShim p2pT = {p2pCan}, shmT = {shmCan};
ncclTransportShim* ncclTransports[3] = {&p2pT, &shmT, NULL};

static void relabel(struct ncclXml* xml, int offset) {
  for (int i = 0; i < xml->maxIndex; i++) {
    struct ncclXmlNode* n = xml->nodes + i;
    if (strcmp(n->name, "gpu") != 0) continue;
    for (int a = 0; a < n->nAttrs; a++)
      if (strcmp(n->attrs[a].key, "rank") == 0) snprintf(n->attrs[a].value, sizeof(n->attrs[a].value), "%d", atoi(n->attrs[a].value) + offset);
  }
}

// ncclNvlsInit (src/transport/nvls.cc, not built here) before the search: no NVLS where
// NCCL_NVLS_ENABLE is 0 or the rank's system holds two GPUs or fewer; otherwise the device's
// multicast support decides, taken here as present.
bool oracleNvlsSupport(struct ncclTopoSystem* system) {
  const char* e = getenv("NCCL_NVLS_ENABLE");
  long enable = (e != NULL && *e != 0) ? strtol(e, NULL, 0) : 2;
  return enable != 0 && system->nodes[GPU].count > 2;
}

// NCCL's searches in init.cc's order and bounds: ring, tree, then CollNet chain and direct and
// NVLS when named in pats (NVLS as oracleNvlsSupport allows). g: ring, tree, chain, direct, nvls
// (zeroed here).
ncclResult_t oracleSearchGraphs(struct ncclTopoSystem* system, struct ncclTopoGraph g[5], const std::string& pats) {
  memset(g, 0, 5 * sizeof(struct ncclTopoGraph));
  struct ncclTopoGraph *ring = g + 0, *tree = g + 1, *chain = g + 2, *direct = g + 3, *nvls = g + 4;
  ring->id = 0; ring->pattern = NCCL_TOPO_PATTERN_RING; ring->minChannels = 1; ring->maxChannels = MAXCHANNELS / 2;
  NCCLCHECK(ncclTopoCompute(system, ring)); NCCLCHECK(ncclTopoPrintGraph(system, ring));
  tree->id = 1; tree->pattern = NCCL_TOPO_PATTERN_BALANCED_TREE; tree->minChannels = tree->maxChannels = ring->nChannels;
  NCCLCHECK(ncclTopoCompute(system, tree)); NCCLCHECK(ncclTopoPrintGraph(system, tree));
  chain->id = 2; chain->pattern = NCCL_TOPO_PATTERN_TREE; chain->collNet = 1; chain->minChannels = chain->maxChannels = ring->nChannels;
  direct->id = 4; direct->pattern = NCCL_TOPO_PATTERN_COLLNET_DIRECT; direct->collNet = 1; direct->minChannels = 1; direct->maxChannels = MAXCHANNELS;
  if (pats.find("collnet") != std::string::npos) {
    NCCLCHECK(ncclTopoCompute(system, chain)); NCCLCHECK(ncclTopoPrintGraph(system, chain));
    NCCLCHECK(ncclTopoCompute(system, direct)); NCCLCHECK(ncclTopoPrintGraph(system, direct));
  }
  nvls->id = 3; nvls->pattern = NCCL_TOPO_PATTERN_NVLS; nvls->minChannels = 1; nvls->maxChannels = MAXCHANNELS;
  if (pats.find("nvls") != std::string::npos && oracleNvlsSupport(system)) {
    NCCLCHECK(ncclTopoCompute(system, nvls)); NCCLCHECK(ncclTopoPrintGraph(system, nvls));
  }
  return ncclSuccess;
}

int main(int argc, char** argv) {
  if (argc < 4) { fprintf(stderr, "usage: nccl-oracle TOPO.xml NODES OUT.graph.xml|- [ring,tree,collnet,nvls] [rank]\n"); return 2; }
  const char* topoFile = argv[1]; int nodes = atoi(argv[2]); const char* out = argv[3];
  std::string pats = argc > 4 ? argv[4] : "ring,tree";
  oracleInfo = getenv("ORACLE_INFO") != NULL;
  if (getenv("ORACLE_CONNECT") && atoi(getenv("ORACLE_CONNECT")) != 0) {
#ifdef ORACLE_WITH_CONNECT
    return oracleConnect(topoFile, nodes, out, pats);   // connect_driver.cc
#else
    fprintf(stderr, "nccl-oracle: built without connect.cc/trees.cc/rings.cc, ORACLE_CONNECT unavailable\n"); return 2;
#endif
  }
  struct ncclXml* xml;
  NCCLCHECK(xmlAlloc(&xml, NCCL_TOPO_XML_MAX_NODES));
  if (ncclTopoGetXmlFromFile(topoFile, xml, 1) != ncclSuccess) { fprintf(stderr, "nccl-oracle: cannot load %s\n", topoFile); return 3; }
  // GPUs (with a rank) per node, and the first rank
  int gpus = 0, first = 1 << 30;
  for (int i = 0; i < xml->maxIndex; i++) {
    struct ncclXmlNode* n = xml->nodes + i;
    if (strcmp(n->name, "gpu") != 0) continue;
    const char* r; xmlGetAttr(n, "rank", &r);
    if (r) { gpus++; first = std::min(first, atoi(r)); }
  }
  if (gpus == 0) { fprintf(stderr, "nccl-oracle: no gpu rank in %s\n", topoFile); return 3; }
  int myRank = argc > 5 ? atoi(argv[5]) : first;
  oracleRank = myRank;
  uint64_t hh = 0;
  for (int i = 0; i < xml->maxIndex; i++) {
    struct ncclXmlNode* n = xml->nodes + i;
    if (strcmp(n->name, "cpu") != 0) continue;
    const char* s; xmlGetAttr(n, "host_hash", &s); if (s) hh = strtoull(s, NULL, 16); break;
  }
  struct ncclComm comm; memset(&comm, 0, sizeof comm);
  comm.rank = myRank; comm.nRanks = nodes * gpus;
  std::vector<ncclPeerInfo> peers(comm.nRanks);
  memset(peers.data(), 0, peers.size() * sizeof(ncclPeerInfo));
  for (int r = 0; r < comm.nRanks; r++) { peers[r].rank = r; peers[r].hostHash = 0x1000 + (r - first) / gpus; peers[r].nvmlDev = (r - first) % gpus; }
  comm.peerInfo = peers.data();
  struct ncclTopoSystem* system;
  if (ncclTopoGetSystemFromXml(xml, &system, hh) != ncclSuccess) { fprintf(stderr, "nccl-oracle: system failed\n"); return 4; }
  comm.topo = system;
  NCCLCHECK(ncclTopoComputePaths(system, &comm));
  NCCLCHECK(ncclTopoTrimSystem(system, &comm));
  NCCLCHECK(ncclTopoComputePaths(system, &comm));
  NCCLCHECK(ncclTopoSearchInit(system));
  if (oracleInfo) NCCLCHECK(ncclTopoPrint(system));
  if (getenv("ORACLE_PATHS")) {
    for (int g = 0; g < system->nodes[GPU].count; g++)
      for (int n = 0; n < system->nodes[NET].count; n++) {
        struct ncclTopoLinkList* p = system->nodes[GPU].nodes[g].paths[NET] + n;
        printf("PATH GPU %d -> NET %d (id %lx): type %d bw %g count %d\n", g, n, system->nodes[NET].nodes[n].id, p->type, p->bw, p->count);
      }
    for (int n = 0; n < system->nodes[NET].count; n++) printf("LOCALGPU NET %d: %d\n", n, system->nodes[NET].nodes[n].net.localGpu);
  }
  static struct ncclTopoGraph g[5];
  NCCLCHECK(oracleSearchGraphs(system, g, pats));
  struct ncclTopoGraph *ring = g + 0, *tree = g + 1, *chain = g + 2, *direct = g + 3, *nvls = g + 4;
  struct ncclTopoGraph* dump[5] = {ring, tree, direct, chain, nvls};
  if (strcmp(out, "-") == 0) return 0;  // no dump (as ORACLE_CONNECT's OUT): the INFO lines only
  setenv("NCCL_GRAPH_DUMP_FILE", out, 1);
  NCCLCHECK(ncclTopoDumpGraphs(system, 5, dump));
  return 0;
}
int64_t ncclParamWorkArgsBytes() { return 1<<20; }
extern "C" cudaError_t cudaGetDeviceProperties_v2(cudaDeviceProp*, int) { return cudaErrorNoDevice; }
extern "C" cudaError_t cudaGetDeviceProperties(cudaDeviceProp*, int) { return cudaErrorNoDevice; }
