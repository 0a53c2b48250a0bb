/* weft topology core, embedded: what NCCL 2.28 decides on a machine or a cluster of identical
 * machines, computed offline from an NCCL topology XML, without GPUs.
 *
 *   weft_topo_run_t* run;
 *   weft_topo_options_t opts = WEFT_TOPO_OPTIONS_INIT;
 *   opts.nodes = 4;
 *   if (weft_topo_run_file("topo.xml", &opts, &run) != weftSuccess) puts(weft_last_error());
 *   weft_graph_info_t ring;
 *   weft_topo_graph_info(run, WEFT_GRAPH_RING, &ring);
 *   ...
 *   weft_topo_run_free(run);
 *
 * Every function is thread-safe on distinct runs; a run may be read from several threads. */
#ifndef WEFT_TOPO_H_
#define WEFT_TOPO_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Graph ids, as in NCCL's graph files. */
#define WEFT_GRAPH_RING 0
#define WEFT_GRAPH_TREE 1
#define WEFT_GRAPH_COLLNET_CHAIN 2
#define WEFT_GRAPH_NVLS 3
#define WEFT_GRAPH_COLLNET_DIRECT 4

typedef struct {
  int nodes;                     /* identical nodes, >= 1 */
  const char* const* settings;   /* "NCCL_CROSS_NIC=0", …, NULL-terminated, or NULL; over the defaults only
                                    (the process environment is not read) */
  int search_collnet;            /* also search the CollNet graphs (NICs with coll="1") */
  int search_nvls;               /* also search the NVLS graph (NVSwitch, sm90+; as NCCL, not with
                                    NCCL_NVLS_ENABLE=0 or on a system of two GPUs or fewer) */
} weft_topo_options_t;

#define WEFT_TOPO_OPTIONS_INIT {1, NULL, 0, 0}

typedef struct weft_topo_run weft_topo_run_t;

/* Loads a topology XML file and runs, for node 0 of `options->nodes` identical nodes, what NCCL's
 * first rank of that node runs: paths, trimming, paths, and the graph searches. On success *run
 * owns the result (free it with weft_topo_run_free). On error *run is NULL and
 * weft_last_error() says what failed, where. Blocks for the duration of the search
 * (milliseconds for common machines). */
WEFT_API weft_result_t weft_topo_run_file(const char* path, const weft_topo_options_t* options, weft_topo_run_t** run);

/* The same from XML text in memory (`len` bytes; `name` names it in errors, may be NULL). */
WEFT_API weft_result_t weft_topo_run_xml(const char* xml, size_t len, const char* name,
                                         const weft_topo_options_t* options, weft_topo_run_t** run);

WEFT_API void weft_topo_run_free(weft_topo_run_t* run);

/* GPUs per node (ranks per node) of the run. */
WEFT_API int weft_topo_gpus_per_node(const weft_topo_run_t* run);

typedef struct {
  int id;            /* WEFT_GRAPH_* */
  int pattern;       /* NCCL_TOPO_PATTERN_*: 1 balanced tree, 2 split tree, 3 tree, 4 ring, 5 nvls, 6 collnet direct */
  int n_channels;    /* 0 when the graph was not searched or has no solution */
  float bw_intra;    /* GB/s per channel inside the node */
  float bw_inter;    /* GB/s per channel through the network */
  int type_intra;    /* path type values: 0 LOC 1 NVL 2 NVB 3 C2C 4 PIX 5 PXB 6 P2C 7 PXN 8 PHB 9 SYS */
  int type_inter;
  int cross_nic;
  int same_channels;
} weft_graph_info_t;

WEFT_API weft_result_t weft_topo_graph_info(const weft_topo_run_t* run, int graph, weft_graph_info_t* info);

/* Channel `channel` of a graph on node 0: `ranks` receives weft_topo_gpus_per_node() ranks in
 * channel order (NVLS: the head only, the rest -1); *net_in / *net_out (may be NULL) the NET
 * ids where the channel enters and leaves the node (0 when the run has a single node). */
WEFT_API weft_result_t weft_topo_graph_channel(const weft_topo_run_t* run, int graph, int channel, int* ranks,
                                               int64_t* net_in, int64_t* net_out);

/* NCCL_GRAPH_DUMP_FILE text of node 0's graphs, and the "[rank] NCCL INFO" lines NCCL would
 * log for node 0 (system block, paths, GPU Direct RDMA decisions, graphs). Both strings are
 * allocated; free them with weft_free. */
WEFT_API weft_result_t weft_topo_graphs_xml(const weft_topo_run_t* run, char** xml);
WEFT_API weft_result_t weft_topo_log(const weft_topo_run_t* run, char** text);

/* Collectives NCCL's cost model tunes (ncclFunc_t values). */
#define WEFT_COLL_BROADCAST 0
#define WEFT_COLL_REDUCE 1
#define WEFT_COLL_ALLGATHER 2
#define WEFT_COLL_REDUCESCATTER 3
#define WEFT_COLL_ALLREDUCE 4

/* Algorithms and protocols (NCCL_ALGO_* / NCCL_PROTO_* values of nccl_tuner.h). */
#define WEFT_ALGO_TREE 0
#define WEFT_ALGO_RING 1
#define WEFT_ALGO_COLLNET_DIRECT 2
#define WEFT_ALGO_COLLNET_CHAIN 3
#define WEFT_ALGO_NVLS 4
#define WEFT_ALGO_NVLS_TREE 5
#define WEFT_ALGO_PAT 6
#define WEFT_PROTO_LL 0
#define WEFT_PROTO_LL128 1
#define WEFT_PROTO_SIMPLE 2

typedef struct {
  int algo;                /* WEFT_ALGO_* */
  int proto;               /* WEFT_PROTO_* */
  int channels;            /* channel budget (nMaxChannels) */
  int threads;             /* threads per block (nWarps x 32) */
  float time_us;           /* NCCL's predicted time, µs */
  const char* algo_name;   /* "Tree", "Ring", …, "PAT" (static storage) */
  const char* proto_name;  /* "LL", "LL128", "Simple" (static storage) */
} weft_tune_choice_t;

/* What NCCL 2.28.9 would choose on rank 0 of the run's communicator (run->nodes identical nodes,
 * all their GPUs; NVLS where NCCL's NVLS init would enable it; no CollNet) for one operation of
 * `coll` (WEFT_COLL_*), float32 sum, unregistered buffers. `bytes` is what
 * NCCL's model receives: for AllGather and ReduceScatter the whole gathered buffer (nRanks x the
 * per-rank size). The first call on a run connects every rank and runs the model (the cost of
 * `weft search`'s connect phase, milliseconds for common sizes); later calls take about a
 * microsecond. Thread-safe on one run. Settings are the run's (options->settings), the tuner
 * plugin too: NCCL_TUNER_PLUGIN=weft (with WEFT_TUNER_RULES_FILE=...) loads weft's YAML rule tuner
 * as NCCL's init would, before the model, and every choice goes through it; unset, NCCL's default
 * libnccl-tuner.so is tried. The tuner is finalized by weft_topo_run_free. */
WEFT_API weft_result_t weft_topo_tune(const weft_topo_run_t* run, int coll, size_t bytes, weft_tune_choice_t* choice);

/* How far NCCL's channels are from the machine: an upper bound on the bus bandwidth (nccl-tests'
 * busbw) any schedule of `coll` could reach on the run's nodes, from the capacities of the system
 * graph's links (a cut bound: see README, "How far from the machine's bound"), beside what NCCL's
 * ring graph promises. */
typedef struct {
  float bound_gbs;         /* GB/s; 0 when a single rank has nothing to move */
  float rings_gbs;         /* NCCL's rings: ring_channels x ring_channel_gbs */
  int ring_channels;       /* channels of node 0's ring graph */
  float ring_channel_gbs;  /* GB/s each: bw_intra on one node, min(bw_intra, bw_inter) across nodes */
  int parts_per_node;      /* the cut that binds: parts each node is split into (1: the node whole) */
  int gpus_per_part;       /* GPUs in its tightest part (1: each GPU on its own) */
  const char* limit;       /* that cut in words, "the links into each GPU (NVL 370.8 + PCI 48.0 GB/s)";
                              owned by the run, valid until weft_topo_run_free */
} weft_bound_t;

/* The bound for WEFT_COLL_ALLREDUCE (schedules that reduce on GPUs, as NCCL's ring and tree do;
 * NVLS and CollNet reduce in switches and are not covered) or WEFT_COLL_ALLGATHER (any
 * schedule). Computed when the run is made; thread-safe, does not block. Other collectives are
 * an error. */
WEFT_API weft_result_t weft_topo_bound(const weft_topo_run_t* run, int coll, weft_bound_t* bound);

/* Frees memory returned by weft. NULL is allowed. */
WEFT_API void weft_free(void* p);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_TOPO_H_ */
