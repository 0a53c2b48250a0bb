// nccl-oracle's connect phase (ORACLE_CONNECT=1): after NCCL's own search, runs NCCL 2.28.9's own
// connect code (src/graph/connect.cc, trees.cc, rings.cc, built by build.sh when the NCCL tree has
// them) for every rank of N identical nodes, modelling the cross-rank steps of init.cc's
// initTransportsRank: each rank's search and ncclTopoPreset, the AllGather3 of graph info and
// topoRanks, the merge of graph info across ranks, nodesFirstRank/nodesTreePatterns,
// ncclTopoPostset, then the Ring/Trees lines init.cc prints. Prints NCCL's INFO lines of that phase
// with the reference logs' "[rank] NCCL INFO " prefix. A local check of weft, not part of weft.
#include "shim.h"
#include "graph.h"
#include "topo.h"
#include "xml.h"
#include <limits.h>
#include <map>
#include <memory>
#include <string>
#include <vector>

ncclResult_t oracleSearchGraphs(struct ncclTopoSystem* system, struct ncclTopoGraph g[5], const std::string& pats);  // driver.cc
bool oracleNvlsSupport(struct ncclTopoSystem* system);  // driver.cc
int oracleTune(struct ncclComm* comm, struct ncclTopoGraph** graphs, const std::vector<int>& nodeLocalRanks);  // tune_driver.cc

// Same numbering as driver.cc: node k holds ranks k*gpus .. k*gpus+gpus-1, its GPUs are the file's
// with rank + k*gpus, each node its own host.
namespace {

struct LocalSearch {            // what rank `lr` of node 0 computed (nodes are identical)
  struct ncclTopoSystem* system;
  std::shared_ptr<std::vector<ncclTopoGraph>> graphs;   // ring, tree, chain, direct, nvls
};

// init.cc's AllGather3 record
struct GraphInfo { int pattern, nChannels, sameChannels; float bwIntra, bwInter; int typeIntra, typeInter, crossNic; };
struct AllGatherInfo { GraphInfo graphInfo[NCCL_NUM_ALGORITHMS]; struct ncclTopoRanks topoRanks; int cpuArch, cpuVendor, localRanks; };

enum { G_RING = 0, G_TREE = 1, G_CHAIN = 2, G_DIRECT = 3, G_NVLS = 4 };

// The 5 graphs of rank r: node 0's graphs of its local rank, ranks shifted by the node offset.
void rankGraphs(const std::vector<ncclTopoGraph>& base, int shift, std::vector<ncclTopoGraph>& g) {
  g = base;
  if (shift == 0) return;
  for (auto& x : g)
    for (int i = 0; i < MAXCHANNELS * NCCL_TOPO_MAX_NODES; i++) x.intra[i] += shift;
}

// init.cc's order: graphs[NCCL_ALGO_*] = { tree, ring, collNetDirect, collNetChain, nvls, nvls, tree }
void algoGraphs(std::vector<ncclTopoGraph>& g, struct ncclTopoGraph* graphs[NCCL_NUM_ALGORITHMS]) {
  graphs[NCCL_ALGO_TREE] = &g[G_TREE]; graphs[NCCL_ALGO_RING] = &g[G_RING];
  graphs[NCCL_ALGO_COLLNET_DIRECT] = &g[G_DIRECT]; graphs[NCCL_ALGO_COLLNET_CHAIN] = &g[G_CHAIN];
  graphs[NCCL_ALGO_NVLS] = &g[G_NVLS]; graphs[NCCL_ALGO_NVLS_TREE] = &g[G_NVLS]; graphs[NCCL_ALGO_PAT] = &g[G_TREE];
}

int envInt(const char* name, int deflt) {
  const char* s = getenv(name);
  if (s == NULL || *s == 0) return deflt;
  return (int)strtol(s, NULL, 0);
}

}  // namespace

int oracleConnect(const char* topoFile, int nodes, const char* out, const std::string& pats) {
  // ORACLE_TUNE=1: rank 0 only, silent, then NCCL's tuning phase (tune_driver.cc) prints its lines.
  bool tune = getenv("ORACLE_TUNE") != NULL && atoi(getenv("ORACLE_TUNE")) != 0;
  bool wantInfo = getenv("ORACLE_INFO") != NULL && !tune;
  bool collnet = pats.find("collnet") != std::string::npos;
  bool nvls = pats.find("nvls") != std::string::npos;
  struct ncclXml* xml;
  NCCLCHECK(xmlAlloc(&xml, NCCL_TOPO_XML_MAX_NODES));
  if (ncclTopoGetXmlFromFile(topoFile, xml, 1) != ncclSuccess) { fprintf(stderr, "nccl-oracle: cannot load %s\n", topoFile); return 3; }
  std::vector<int> fileRanks;
  uint64_t hh = 0; bool hhSet = false;
  for (int i = 0; i < xml->maxIndex; i++) {
    struct ncclXmlNode* n = xml->nodes + i;
    if (strcmp(n->name, "gpu") == 0) { const char* r; xmlGetAttr(n, "rank", &r); if (r) fileRanks.push_back(atoi(r)); }
    if (!hhSet && strcmp(n->name, "cpu") == 0) { const char* s; xmlGetAttr(n, "host_hash", &s); if (s) hh = strtoull(s, NULL, 16); hhSet = true; }
  }
  int gpus = fileRanks.size();
  if (gpus == 0) { fprintf(stderr, "nccl-oracle: no gpu rank in %s\n", topoFile); return 3; }
  std::sort(fileRanks.begin(), fileRanks.end());
  for (int i = 0; i < gpus; i++)
    if (fileRanks[i] != i) { fprintf(stderr, "nccl-oracle: connect needs GPU ranks 0..%d in %s\n", gpus - 1, topoFile); return 3; }
  const int nRanks = nodes * gpus;
  std::vector<ncclPeerInfo> peers(nRanks + 1);
  memset(peers.data(), 0, peers.size() * sizeof(ncclPeerInfo));
  for (int r = 0; r < nRanks; r++) { peers[r].rank = r; peers[r].hostHash = 0x1000 + r / gpus; peers[r].nvmlDev = r % gpus; }

  // 1. Each rank of node 0 builds its system, paths, trims it and searches (nodes are identical, so
  // node k's ranks compute node 0's graphs with ranks shifted). The search reads only the trimmed
  // system, so ranks whose trimmed system holds the same GPUs share one search.
  oracleInfo = wantInfo;
  std::vector<LocalSearch> local(gpus);
  std::map<std::vector<int>, std::shared_ptr<std::vector<ncclTopoGraph>>> cache;
  int minCompCap = INT_MAX, maxCompCap = 0;
  for (int lr = 0; lr < gpus; lr++) {
    oracleRank = lr;
    struct ncclXml* x;
    NCCLCHECK(xmlAlloc(&x, NCCL_TOPO_XML_MAX_NODES));
    NCCLCHECK(ncclTopoGetXmlFromFile(topoFile, x, 1));
    struct ncclComm* comm = (struct ncclComm*)calloc(1, sizeof(struct ncclComm));
    comm->rank = lr; comm->nRanks = nRanks; comm->peerInfo = peers.data();
    struct ncclTopoSystem* system;
    if (ncclTopoGetSystemFromXml(x, &system, hh) != ncclSuccess) { fprintf(stderr, "nccl-oracle: system failed\n"); return 4; }
    comm->topo = system;
    for (int g = 0; g < system->nodes[GPU].count; g++) {
      minCompCap = std::min(minCompCap, system->nodes[GPU].nodes[g].gpu.cudaCompCap);
      maxCompCap = std::max(maxCompCap, system->nodes[GPU].nodes[g].gpu.cudaCompCap);
    }
    NCCLCHECK(ncclTopoComputePaths(system, comm));
    NCCLCHECK(ncclTopoTrimSystem(system, comm));
    NCCLCHECK(ncclTopoComputePaths(system, comm));
    NCCLCHECK(ncclTopoSearchInit(system));
    if (wantInfo) NCCLCHECK(ncclTopoPrint(system));
    std::vector<int> key;
    for (int g = 0; g < system->nodes[GPU].count; g++) key.push_back(system->nodes[GPU].nodes[g].gpu.rank);
    local[lr].system = system;
    auto it = cache.find(key);
    if (it != cache.end()) { local[lr].graphs = it->second; free(comm); continue; }
    auto gs = std::make_shared<std::vector<ncclTopoGraph>>(5);
    std::vector<ncclTopoGraph>& g = *gs;
    NCCLCHECK(oracleSearchGraphs(system, g.data(), pats));
    struct ncclTopoGraph *ring = &g[G_RING], *tree = &g[G_TREE], *chain = &g[G_CHAIN], *direct = &g[G_DIRECT], *nv = &g[G_NVLS];
    if (lr == 0 && out && strcmp(out, "-") != 0) {
      struct ncclTopoGraph* dump[5] = {ring, tree, direct, chain, nv};
      setenv("NCCL_GRAPH_DUMP_FILE", out, 1);
      NCCLCHECK(ncclTopoDumpGraphs(system, 5, dump));
    }
    cache[key] = gs;
    local[lr].graphs = gs;
    free(comm);
  }

  // The settings init.cc reads before the connect phase (config defaults, NCCL_MIN/MAX_CTAS).
  int minCTAs = 1, maxCTAs = MAXCHANNELS;
  { int v = envInt("NCCL_MIN_CTAS", INT_MIN); if (v != INT_MIN && v > 0) minCTAs = v;
    v = envInt("NCCL_MAX_CTAS", INT_MIN); if (v != INT_MIN && v > 0) maxCTAs = v;
    minCTAs = std::min(minCTAs, MAXCHANNELS); maxCTAs = std::min(maxCTAs, MAXCHANNELS);
    if (minCTAs > maxCTAs) minCTAs = maxCTAs; }
  // config.nvlsCTAs: NCCL_NVLS_NCHANNELS, 0 or less back to unset (-1 here).
  int nvlsCTAs = envInt("NCCL_NVLS_NCHANNELS", -1);
  if (nvlsCTAs <= 0) nvlsCTAs = -1;
  // ncclNvlsInit's channel count for a rank: by its GPU's generation (sm100: 32 when the
  // communicator spans hosts, 24 within one; 16 before), or config.nvlsCTAs, kept within the CTAs.
  auto nvlsChannelsOf = [&](int r) {
    struct ncclTopoSystem* s = local[r % gpus].system;
    int compCap = 0;
    for (int i = 0; i < s->nodes[GPU].count; i++)
      if (s->nodes[GPU].nodes[i].gpu.rank == r % gpus) compCap = s->nodes[GPU].nodes[i].gpu.cudaCompCap;
    int channels = compCap >= 100 ? (nodes > 1 ? 32 : 24) : 16;
    if (nvlsCTAs > 0) channels = nvlsCTAs;
    return std::max(minCTAs, std::min(maxCTAs, channels));
  };
  int collNetNodeThreshold = envInt("NCCL_COLLNET_NODE_THRESHOLD", 2);

  // 2. Every rank: its comm, graphs, ncclTopoPreset into its AllGather3 record.
  oracleInfo = tune ? 0 : 1;
  std::vector<ncclComm*> comms(nRanks);
  std::vector<ncclSharedResourcesShim> shared(nRanks);
  std::vector<AllGatherInfo> allGather3Data(nRanks);
  memset(allGather3Data.data(), 0, nRanks * sizeof(AllGatherInfo));
  std::vector<ncclTopoGraph> g;
  struct ncclTopoGraph* graphs[NCCL_NUM_ALGORITHMS];
  for (int r = 0; r < nRanks; r++) {
    oracleRank = r;
    struct ncclComm* comm = comms[r] = (struct ncclComm*)calloc(1, sizeof(struct ncclComm));
    comm->rank = r; comm->nRanks = nRanks; comm->peerInfo = peers.data();
    comm->topo = local[r % gpus].system;
    comm->config.collnetEnable = collnet ? 1 : 0;
    comm->config.minCTAs = minCTAs; comm->config.maxCTAs = maxCTAs;
    comm->nvlsSupport = nvls && oracleNvlsSupport(local[r % gpus].system) ? 1 : 0;
    comm->nvlsChannels = comm->nvlsSupport ? nvlsChannelsOf(r) : 0;
    comm->minCompCap = minCompCap; comm->maxCompCap = maxCompCap;
    comm->netDeviceType = NCCL_NET_DEVICE_HOST;
    shared[r].owner = comm; comm->sharedRes = &shared[r];
    rankGraphs(*local[r % gpus].graphs, (r / gpus) * gpus, g);
    algoGraphs(g, graphs);
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
      GraphInfo& gi = allGather3Data[r].graphInfo[a];
      gi.pattern = graphs[a]->pattern; gi.nChannels = graphs[a]->nChannels; gi.sameChannels = graphs[a]->sameChannels;
      gi.bwIntra = graphs[a]->bwIntra; gi.bwInter = graphs[a]->bwInter; gi.typeIntra = graphs[a]->typeIntra;
      gi.typeInter = graphs[a]->typeInter; gi.crossNic = graphs[a]->crossNic;
    }
    comm->nChannels = std::min(graphs[NCCL_ALGO_TREE]->nChannels, graphs[NCCL_ALGO_RING]->nChannels);
    NCCLCHECK(ncclTopoPreset(comm, graphs, &allGather3Data[r].topoRanks));
  }

  // 3. Every rank: its copy of the AllGather3 data (postset edits it), init.cc's node discovery and
  // merge, ncclTopoPostset, and the lines init.cc prints after it.
  for (int rank = 0; rank < (tune ? 1 : nRanks); rank++) {
    oracleRank = rank;
    struct ncclComm* comm = comms[rank];
    std::vector<AllGatherInfo> ag = allGather3Data;
    std::vector<int> nodesFirstRank(nRanks, 0), nodesTreePatterns(nRanks, 0), rankToNode(nRanks, 0);
    comm->nNodes = 0;
    for (int r = 0; r < nRanks; r++) {
      int node;
      int firstRank = ag[r].topoRanks.ringRecv[0];
      for (node = 0; node < comm->nNodes && nodesFirstRank[node] != firstRank; node++);
      if (node == comm->nNodes) {
        comm->nNodes++;
        nodesFirstRank[node] = firstRank;
        nodesTreePatterns[node] = ag[r].graphInfo[NCCL_ALGO_TREE].pattern;
      }
      rankToNode[r] = node;
    }
    comm->rankToNode = rankToNode.data();
    std::vector<int> nodeLocalRanks(comm->nNodes, 0);
    for (int r = 0; r < nRanks; r++) nodeLocalRanks[rankToNode[r]]++;
    comm->maxLocalRanks = 0;
    for (int n = 0; n < comm->nNodes; n++) comm->maxLocalRanks = std::max(comm->maxLocalRanks, nodeLocalRanks[n]);
    comm->node = rankToNode[rank];
    comm->localRanks = nodeLocalRanks[comm->node];

    int nChannelsOrig = comm->nChannels;
    rankGraphs(*local[rank % gpus].graphs, (rank / gpus) * gpus, g);
    algoGraphs(g, graphs);
    std::vector<ncclTopoRanks*> allTopoRanks(nRanks);
    for (int i = 0; i < nRanks; i++) {
      allTopoRanks[i] = &ag[i].topoRanks;
      for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
        graphs[a]->nChannels = std::min(ag[i].graphInfo[a].nChannels, graphs[a]->nChannels);
        graphs[a]->sameChannels = std::min(ag[i].graphInfo[a].sameChannels, graphs[a]->sameChannels);
        graphs[a]->bwIntra = std::min(ag[i].graphInfo[a].bwIntra, graphs[a]->bwIntra);
        graphs[a]->bwInter = std::min(ag[i].graphInfo[a].bwInter, graphs[a]->bwInter);
        graphs[a]->typeIntra = std::max(ag[i].graphInfo[a].typeIntra, graphs[a]->typeIntra);
        graphs[a]->typeInter = std::max(ag[i].graphInfo[a].typeInter, graphs[a]->typeInter);
        graphs[a]->crossNic = std::max(ag[i].graphInfo[a].crossNic, graphs[a]->crossNic);
      }
      comm->maxTreePattern = std::max(comm->maxTreePattern, ag[i].graphInfo[NCCL_ALGO_TREE].pattern);
    }
    if (graphs[NCCL_ALGO_COLLNET_CHAIN]->nChannels == 0) comm->config.collnetEnable = 0;
    if (graphs[NCCL_ALGO_NVLS]->nChannels == 0) comm->nvlsSupport = comm->nvlsChannels = 0;
    comm->nChannels = graphs[NCCL_ALGO_TREE]->nChannels = graphs[NCCL_ALGO_RING]->nChannels =
      std::min(graphs[NCCL_ALGO_TREE]->nChannels, graphs[NCCL_ALGO_RING]->nChannels);
    if (comm->nChannels < nChannelsOrig) {
      for (int i = 0; i < comm->nChannels; i++) memcpy(comm->channels + comm->nChannels + i, comm->channels + nChannelsOrig + i, sizeof(struct ncclChannel));
    }
    if (comm->config.collnetEnable == 1) {
      if (comm->nNodes < collNetNodeThreshold) {
        INFO(NCCL_INIT, "Communicator has %d nodes which is less than CollNet node threshold %d, disabling CollNet", comm->nNodes, collNetNodeThreshold);
        comm->config.collnetEnable = 0;
      }
    }
    std::vector<int> rings(nRanks * MAXCHANNELS);
    NCCLCHECK(ncclTopoPostset(comm, nodesFirstRank.data(), nodesTreePatterns.data(), allTopoRanks.data(), rings.data(), graphs, NULL));
    char line[1024];
    line[0] = '\0';
    for (int c = 0; c < comm->nChannels; c++) {
      struct ncclTree* tree = &comm->channels[c].tree;
      snprintf(line + strlen(line), 1023 - strlen(line), " [%d] %d/%d/%d->%d->%d",
               c, tree->down[0], tree->down[1], tree->down[2], rank, tree->up);
      INFO(NCCL_GRAPH, "Ring %02d : %d -> %d -> %d", c, comm->channels[c].ring.prev, comm->rank, comm->channels[c].ring.next);
    }
    line[1023] = '\0';
    INFO(NCCL_INIT, "Trees%s", line);
    if (tune) {
      int rc = oracleTune(comm, graphs, nodeLocalRanks);
      comm->rankToNode = NULL;
      return rc;
    }
    comm->rankToNode = NULL;
  }
  return 0;
}
