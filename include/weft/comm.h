/* weft communicators and point-to-point transfers: NCCL's communicator API with the `nccl`
 * prefix replaced by `weft_` (table in README.md). Enum values equal NCCL's.
 *
 * Included by weft/weft.h; do not include it alone. */
#ifndef WEFT_COMM_H_
#define WEFT_COMM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ncclUniqueId: 128 opaque bytes (a random magic and the bootstrap root's address). Copy it to
 * every rank by any means; with NCCL_COMM_ID=host:port set, every process computes the same id. */
#define WEFT_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[WEFT_UNIQUE_ID_BYTES];
} weft_unique_id_t;

typedef struct weft_comm weft_comm_t;

/* Values equal ncclDataType_t's. */
typedef enum {
  weftInt8 = 0,
  weftChar = 0,
  weftUint8 = 1,
  weftInt32 = 2,
  weftInt = 2,
  weftUint32 = 3,
  weftInt64 = 4,
  weftUint64 = 5,
  weftFloat16 = 6,
  weftHalf = 6,
  weftFloat32 = 7,
  weftFloat = 7,
  weftFloat64 = 8,
  weftDouble = 8,
  weftBfloat16 = 9,
  weftFloat8e4m3 = 10,
  weftFloat8e5m2 = 11,
  weftNumTypes = 12,
} weft_datatype_t;

/* Values equal ncclRedOp_t's. */
typedef enum {
  weftSum = 0,
  weftProd = 1,
  weftMax = 2,
  weftMin = 3,
  weftAvg = 4,
  weftNumOps = 5,
  weftMaxRedOp = 0x7fffffff,
} weft_redop_t;

#define WEFT_SPLIT_NOCOLOR (-1)
#define WEFT_CONFIG_UNDEF_INT (-2147483647 - 1) /* INT_MIN, as NCCL_CONFIG_UNDEF_INT */
#define WEFT_CONFIG_MAGIC 0xcafebeefu           /* NCCL's config magic */

/* ncclConfig_t's fields in NCCL's order, then weft's own. Initialise with
 * WEFT_CONFIG_INITIALIZER; fields left undefined take NCCL's defaults (blocking 1, min_ctas 1,
 * max_ctas 64) or the NCCL_* settings that override them (NCCL_COMM_BLOCKING, NCCL_MIN_CTAS,
 * NCCL_MAX_CTAS, NCCL_NET). */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;           /* 0: init returns weftInProgress; poll weft_comm_get_async_error */
  int cga_cluster_size;   /* accepted, unused on host memory */
  int min_ctas;           /* lower bound on the channels (NCCL: CTAs) */
  int max_ctas;           /* upper bound on the channels */
  const char* net_name;   /* net plugin by name ("Socket", "OFI", "IB", …), as NCCL_NET */
  int split_share;
  int traffic_class;
  const char* comm_name;
  int collnet_enable;
  int cta_policy;
  int shrink_share;
  int nvls_ctas;
  int n_channels_per_net_peer;
  int nvlink_centric_sched;
  /* weft: the emulated GPU (dev= in NCCL_TOPO_FILE) this rank plays when no GPU is present;
   * undefined: WEFT_DEVICE, else the rank's index among its host's ranks. */
  int device;
} weft_config_t;

#define WEFT_CONFIG_INITIALIZER                                                                 \
  {                                                                                             \
    sizeof(weft_config_t), WEFT_CONFIG_MAGIC, 10000u, WEFT_CONFIG_UNDEF_INT,                    \
        WEFT_CONFIG_UNDEF_INT, WEFT_CONFIG_UNDEF_INT, WEFT_CONFIG_UNDEF_INT, NULL,              \
        WEFT_CONFIG_UNDEF_INT, WEFT_CONFIG_UNDEF_INT, NULL, WEFT_CONFIG_UNDEF_INT,              \
        WEFT_CONFIG_UNDEF_INT, WEFT_CONFIG_UNDEF_INT, WEFT_CONFIG_UNDEF_INT,                    \
        WEFT_CONFIG_UNDEF_INT, WEFT_CONFIG_UNDEF_INT, WEFT_CONFIG_UNDEF_INT                     \
  }

/* Fills *id with a fresh id and starts this process's bootstrap root thread, which serves one
 * communicator's initialisation and then exits (or exits after WEFT_INIT_TIMEOUT). With
 * NCCL_COMM_ID=host:port set, returns that root's id without starting anything: rank 0 starts the
 * root when it initialises. */
WEFT_API weft_result_t weft_get_unique_id(weft_unique_id_t* id);

/* Creates rank `rank` of an `nranks`-rank communicator. Blocks until every rank has joined (or
 * WEFT_INIT_TIMEOUT seconds, default 120, have passed: the error names the ranks that never
 * arrived). *comm is set before the call blocks, so another thread may weft_comm_abort it; on
 * failure *comm is left pointing to a communicator in error, which the caller frees with
 * weft_comm_abort or weft_comm_destroy (as in NCCL). */
WEFT_API weft_result_t weft_comm_init_rank(weft_comm_t** comm, int nranks, weft_unique_id_t id, int rank);

/* As weft_comm_init_rank with a configuration (NULL: defaults). config->blocking == 0 returns
 * weftInProgress at once; poll weft_comm_get_async_error until it says weftSuccess. */
WEFT_API weft_result_t weft_comm_init_rank_config(weft_comm_t** comm, int nranks, weft_unique_id_t id, int rank,
                                                  const weft_config_t* config);

/* Creates `ndev` ranks in this process, one thread each, and waits for all. devlist[i] is rank
 * i's emulated device (NULL: 0, 1, …). comms must hold ndev pointers. */
WEFT_API weft_result_t weft_comm_init_all(weft_comm_t** comms, int ndev, const int* devlist);

/* Collective over `comm`: ranks with the same color form a new communicator, ordered by key then
 * by rank in `comm`. color WEFT_SPLIT_NOCOLOR (-1) takes part and gets *newcomm = NULL. config
 * NULL: the parent's. */
WEFT_API weft_result_t weft_comm_split(weft_comm_t* comm, int color, int key, weft_comm_t** newcomm,
                                       const weft_config_t* config);

/* Waits for the communicator's operations to finish and releases its network and shared-memory
 * connections. Call weft_comm_destroy afterwards. A second call is weftInvalidArgument. */
WEFT_API weft_result_t weft_comm_finalize(weft_comm_t* comm);

/* Frees everything of `comm`. */
WEFT_API weft_result_t weft_comm_destroy(weft_comm_t* comm);

/* Ends every blocked call on `comm` (init or transfer, from any thread) within a second, waits
 * for them to return, and frees everything. Peers of this rank see a remote error. */
WEFT_API weft_result_t weft_comm_abort(weft_comm_t* comm);

/* The communicator's state: weftSuccess, weftInProgress (non-blocking init still running), or
 * the error that broke it (a dead peer: weftRemoteError). */
WEFT_API weft_result_t weft_comm_get_async_error(weft_comm_t* comm, weft_result_t* async_error);

WEFT_API weft_result_t weft_comm_count(const weft_comm_t* comm, int* count);
WEFT_API weft_result_t weft_comm_user_rank(const weft_comm_t* comm, int* rank);
/* The (emulated) device of this rank. */
WEFT_API weft_result_t weft_comm_cu_device(const weft_comm_t* comm, int* device);

/* Bytes of one element of `datatype`, 0 for an unknown type. */
WEFT_API size_t weft_datatype_size(weft_datatype_t datatype);

/* Sends `count` elements of `datatype` from `sendbuff` to rank `peer`. Buffers are host memory
 * (`stream` must be NULL). Outside a group the call returns when the data has left `sendbuff`
 * for good; inside a group it is queued and weft_group_end runs it. Operations between two
 * ranks are matched in the order they were posted; counts must match. */
WEFT_API weft_result_t weft_send(const void* sendbuff, size_t count, weft_datatype_t datatype, int peer,
                                 weft_comm_t* comm, void* stream);
/* Receives `count` elements from rank `peer` into `recvbuff`. */
WEFT_API weft_result_t weft_recv(void* recvbuff, size_t count, weft_datatype_t datatype, int peer,
                                 weft_comm_t* comm, void* stream);

/* ---- Collectives (NCCL's argument order and semantics; host buffers, stream NULL) ----------
 * In place: sendbuff == recvbuff; for allgather, sendbuff == recvbuff + rank * sendcount * size;
 * for reduce_scatter, recvbuff == sendbuff + rank * recvcount * size. Usable inside groups.
 * Every rank of the communicator must call the same collectives in the same order. */
WEFT_API weft_result_t weft_allreduce(const void* sendbuff, void* recvbuff, size_t count, weft_datatype_t datatype,
                                      weft_redop_t op, weft_comm_t* comm, void* stream);
WEFT_API weft_result_t weft_broadcast(const void* sendbuff, void* recvbuff, size_t count, weft_datatype_t datatype,
                                      int root, weft_comm_t* comm, void* stream);
WEFT_API weft_result_t weft_reduce(const void* sendbuff, void* recvbuff, size_t count, weft_datatype_t datatype,
                                   weft_redop_t op, int root, weft_comm_t* comm, void* stream);
/* recvbuff holds nranks * sendcount elements, rank r's at r * sendcount. */
WEFT_API weft_result_t weft_allgather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                      weft_datatype_t datatype, weft_comm_t* comm, void* stream);
/* sendbuff holds nranks * recvcount elements; rank r gets the reduction of block r. */
WEFT_API weft_result_t weft_reduce_scatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                           weft_datatype_t datatype, weft_redop_t op, weft_comm_t* comm,
                                           void* stream);
/* count elements to and from every rank: block r of sendbuff goes to rank r, block r of recvbuff
 * comes from rank r. */
WEFT_API weft_result_t weft_alltoall(const void* sendbuff, void* recvbuff, size_t count, weft_datatype_t datatype,
                                     weft_comm_t* comm, void* stream);

/* Where a scalar lives (ncclScalarResidence_t). Host memory here, so both mean "read *scalar". */
typedef enum { weftScalarDevice = 0, weftScalarHostImmediate = 1 } weft_scalar_residence_t;
/* A reduction that multiplies each rank's input by *scalar (of `datatype`) before summing;
 * bound to `datatype` and `comm`. Free it with weft_redop_destroy. */
WEFT_API weft_result_t weft_redop_create_pre_mul_sum(weft_redop_t* op, void* scalar, weft_datatype_t datatype,
                                                     weft_scalar_residence_t residence, weft_comm_t* comm);
WEFT_API weft_result_t weft_redop_destroy(weft_redop_t op, weft_comm_t* comm);

/* Groups nest (per thread); only the outermost weft_group_end runs the queued operations, all
 * together: a send and a receive between the same two ranks in one group never deadlock. It
 * returns when all are done, or with the first error. */
WEFT_API weft_result_t weft_group_start(void);
WEFT_API weft_result_t weft_group_end(void);
/* Ends the group as weft_group_end does, but the outermost end runs nothing: the operations
 * queued on this thread are dropped (*discarded, if not NULL, says how many). For callers that
 * only wanted to look at a group (NCCL's ncclGroupSimulateEnd). weftInvalidUsage outside a group. */
WEFT_API weft_result_t weft_group_discard(int* discarded);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_COMM_H_ */
