/* weft net plugin ABI: the byte layouts of NCCL 2.28's ncclNet_v6 ... v11 and ncclCollNet_v6 ...
 * v11 tables, under weft's own names.
 *
 * A plugin is a shared library exporting one or more *data* symbols named ncclNetPlugin_vN
 * (and optionally ncclCollNetPlugin_vN), each a table of function pointers of the matching
 * weft_net_vN_t / weft_collnet_vN_t type. The same binary loads into weft and into NCCL: only the
 * symbol names and byte layouts are NCCL's, the C type names are weft's. tests/unit checks every
 * size and field offset on x86-64 and aarch64 (LP64).
 *
 * Contract shared by every version (what NCCL expects too):
 *  - Every call returns a weft_result_t; none blocks except init/devices/getProperties, which may
 *    take time once. connect/accept/isend/irecv may return success with a NULL out-pointer to
 *    mean "not yet, call again".
 *  - A handle written by listen is at most WEFT_NET_HANDLE_MAXSIZE bytes; the caller moves it to
 *    the peer, which passes it to connect.
 *  - Requests come from isend/irecv/iflush and are released by the test call that reports done.
 *  - Comms are freed by closeSend/closeRecv/closeListen; memory handles by deregMr.
 *  - The logger passed to init is the host's; plugins log through it, never to stdout. */
#ifndef WEFT_NET_H_
#define WEFT_NET_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/debug.h" /* the host logger handed to plugins */
#include "weft/weft.h"  /* weft_result_t: values equal ncclResult_t's */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Constants (values are NCCL's)
 * ------------------------------------------------------------------------------------------- */
#define WEFT_NET_HANDLE_MAXSIZE 128
#define WEFT_NET_MAX_REQUESTS 32   /* in flight per comm; v6 plugins: 8 */
#define WEFT_NET_MAX_REQUESTS_V6 8
#define WEFT_NET_MAX_PLUGINS 16
#define WEFT_NET_MAX_DEVS_PER_NIC 4 /* vProps.devs[] length in v9, v10 and v11 */

/* ptrSupport bits and the `type` of regMr. */
#define WEFT_PTR_HOST 0x1
#define WEFT_PTR_CUDA 0x2
#define WEFT_PTR_DMABUF 0x4

/* Defaults NCCL assumes for plugins older than v9, which cannot say. 1 GiB is a power of two
 * below INT_MAX, the limit of the int sizes those versions pass. */
#define WEFT_NET_MAX_SIZE_DEFAULT (1024LL * 1024 * 1024)
#define WEFT_COLLNET_MAX_SIZE_DEFAULT (512LL * 1024 * 1024)
/* Largest maxP2pBytes / maxCollBytes NCCL accepts (1 TiB). */
#define WEFT_NET_MAX_SIZE_BYTES (1LL * 1024 * 1024 * 1024 * 1024)

#define WEFT_NET_OPTIONAL_RECV_COMPLETION 0x1
#define WEFT_NET_MULTI_REQUEST 0x2
#define WEFT_NET_MR_FLAG_FORCE_SO (1 << 0)
#define WEFT_NET_SIGNAL_OP_INC 0x1
#define WEFT_NET_SIGNAL_OP_ADD 0x2

#define WEFT_NET_TRAFFIC_CLASS_UNDEF (-1)
#define WEFT_NET_ATTR_UNDEF (-1)

/* Device offload: NCCL accepts HOST, and UNPACK only at this version. */
#define WEFT_NET_DEVICE_INVALID_VERSION 0x0
#define WEFT_NET_DEVICE_UNPACK_VERSION 0x7
#define WEFT_NET_MTU_SIZE 4096

/* The exported symbol names. */
#define WEFT_NET_PLUGIN_SYMBOL_V6 "ncclNetPlugin_v6"
#define WEFT_NET_PLUGIN_SYMBOL_V7 "ncclNetPlugin_v7"
#define WEFT_NET_PLUGIN_SYMBOL_V8 "ncclNetPlugin_v8"
#define WEFT_NET_PLUGIN_SYMBOL_V9 "ncclNetPlugin_v9"
#define WEFT_NET_PLUGIN_SYMBOL_V10 "ncclNetPlugin_v10"
#define WEFT_NET_PLUGIN_SYMBOL_V11 "ncclNetPlugin_v11"
#define WEFT_COLLNET_PLUGIN_SYMBOL_PREFIX "ncclCollNetPlugin_v"
#define WEFT_NET_PLUGIN_SYMBOL_PREFIX "ncclNetPlugin_v"
#define WEFT_NET_ABI_OLDEST 6
#define WEFT_NET_ABI_NEWEST 11

/* Put on a plugin's table definitions so they stay exported under -fvisibility=hidden. */
#if defined(__GNUC__)
#define WEFT_NET_EXPORT __attribute__((visibility("default")))
#else
#define WEFT_NET_EXPORT
#endif

/* Profiler callback handed to v10+ init (ncclProfilerCallback_t). May be NULL. */
typedef weft_result_t (*weft_profiler_callback_t)(void** eHandle, int type, void* pHandle,
                                                  int64_t pluginId, void* extData);

/* ncclDataType_t and ncclRedOp_t, as CollNet passes them (int-sized enums). */
typedef enum {
  WEFT_INT8 = 0, WEFT_UINT8 = 1, WEFT_INT32 = 2, WEFT_UINT32 = 3, WEFT_INT64 = 4,
  WEFT_UINT64 = 5, WEFT_FLOAT16 = 6, WEFT_FLOAT32 = 7, WEFT_FLOAT64 = 8, WEFT_BFLOAT16 = 9,
  WEFT_FLOAT8E4M3 = 10, WEFT_FLOAT8E5M2 = 11
} weft_data_type_t;
typedef enum { WEFT_SUM = 0, WEFT_PROD = 1, WEFT_MAX = 2, WEFT_MIN = 3, WEFT_AVG = 4 } weft_red_op_t;

/* ---------------------------------------------------------------------------------------------
 * Shared structs
 * ------------------------------------------------------------------------------------------- */
typedef enum {
  WEFT_NET_DEVICE_HOST = 0,
  WEFT_NET_DEVICE_UNPACK = 1,
  WEFT_NET_DEVICE_GIN_PROXY = 2,
  WEFT_NET_DEVICE_GIN_GDAKI = 3
} weft_net_device_type_t;

/* ncclNetDeviceHandle_v7_t; v8 ... v11 use the same layout. */
typedef struct {
  weft_net_device_type_t netDeviceType;
  int netDeviceVersion;
  void* handle;
  size_t size;
  int needsProxyProgress;
} weft_net_device_handle_v7_t;
typedef weft_net_device_handle_v7_t weft_net_device_handle_v8_t;
typedef weft_net_device_handle_v7_t weft_net_device_handle_v9_t;
typedef weft_net_device_handle_v7_t weft_net_device_handle_v10_t;
typedef weft_net_device_handle_v7_t weft_net_device_handle_v11_t;

/* A virtual NIC made of several physical ones (v9+). */
typedef struct {
  int ndevs;
  int devs[WEFT_NET_MAX_DEVS_PER_NIC];
} weft_net_vdevice_props_v9_t;
typedef weft_net_vdevice_props_v9_t weft_net_vdevice_props_v10_t;
typedef weft_net_vdevice_props_v9_t weft_net_vdevice_props_v11_t;

/* Per-connection (v10 connect) or per-context (v11 init) configuration. */
typedef struct {
  int trafficClass; /* WEFT_NET_TRAFFIC_CLASS_UNDEF: plugin default */
} weft_net_comm_config_v10_t;
typedef weft_net_comm_config_v10_t weft_net_comm_config_v11_t;

/* Hints NCCL gives a v11 context about the traffic to come (setNetAttr). */
typedef struct {
  int32_t maxConcurrentPeers;
  int32_t minConcurrentPeers;
  int32_t maxFlowsPerPeer;
  int32_t minFlowsPerPeer;
} weft_net_comm_attr_v11_t;
typedef struct {
  weft_net_comm_attr_v11_t sendCommAttr;
  weft_net_comm_attr_v11_t recvCommAttr;
  uint32_t op;
  uint32_t algo;
  uint32_t proto;
} weft_net_attr_v11_t;

/* Scatter-gather element of CollNet iallgather/ireducescatter. */
typedef struct {
  void* mhandle;
  void* address;
  uint32_t size;
} weft_net_sge_v8_t;
typedef struct {
  void* mhandle;
  void* address;
  size_t size;
} weft_net_sge_v9_t;
typedef weft_net_sge_v9_t weft_net_sge_v10_t;
typedef weft_net_sge_v9_t weft_net_sge_v11_t;

/* ---------------------------------------------------------------------------------------------
 * Device properties, one layout per version. Strings are owned by the plugin and stay valid
 * until the plugin is unloaded. speed is in Mbps; latency in microseconds.
 * ------------------------------------------------------------------------------------------- */
typedef struct {
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
} weft_net_properties_v6_t;

typedef struct {
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  weft_net_device_type_t netDeviceType;
  int netDeviceVersion;
} weft_net_properties_v7_t;

typedef struct {
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int regIsGlobal; /* regMr is not tied to a comm */
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  weft_net_device_type_t netDeviceType;
  int netDeviceVersion;
} weft_net_properties_v8_t;

typedef struct {
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int regIsGlobal;
  int forceFlush; /* receives need iflush even without GPU memory */
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  weft_net_device_type_t netDeviceType;
  int netDeviceVersion;
  weft_net_vdevice_props_v9_t vProps;
  size_t maxP2pBytes;
  size_t maxCollBytes;
} weft_net_properties_v9_t;
typedef weft_net_properties_v9_t weft_net_properties_v10_t;

typedef struct {
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int regIsGlobal;
  int forceFlush;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  weft_net_device_type_t netDeviceType;
  int netDeviceVersion;
  weft_net_vdevice_props_v11_t vProps;
  size_t maxP2pBytes;
  size_t maxCollBytes;
  int maxMultiRequestSize; /* requests one multi-request may group */
} weft_net_properties_v11_t;

/* ---------------------------------------------------------------------------------------------
 * Point-to-point net tables. Field order is the ABI; every field after `name` is a function.
 * Differences between versions are listed above each table.
 * ------------------------------------------------------------------------------------------- */

/* v6 (NCCL 2.13): int sizes; connect/accept have no device handle. */
typedef struct {
  const char* name;
  weft_result_t (*init)(weft_debug_logger_t logFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v6_t* props);
  weft_result_t (*listen)(int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(int dev, void* handle, void** sendComm);
  weft_result_t (*accept)(void* listenComm, void** recvComm);
  weft_result_t (*regMr)(void* comm, void* data, int size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* comm, void* mhandle);
  weft_result_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle,
                         void** request);
  weft_result_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                         void** request);
  weft_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  weft_result_t (*test)(void* request, int* done, int* sizes);
  weft_result_t (*closeSend)(void* sendComm);
  weft_result_t (*closeRecv)(void* recvComm);
  weft_result_t (*closeListen)(void* listenComm);
} weft_net_v6_t;

/* v7 (NCCL 2.19): + device handles on connect/accept, getDeviceMr, irecvConsumed. */
typedef struct {
  const char* name;
  weft_result_t (*init)(weft_debug_logger_t logFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v7_t* props);
  weft_result_t (*listen)(int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(int dev, void* handle, void** sendComm,
                           weft_net_device_handle_v7_t** sendDevComm);
  weft_result_t (*accept)(void* listenComm, void** recvComm,
                          weft_net_device_handle_v7_t** recvDevComm);
  weft_result_t (*regMr)(void* comm, void* data, int size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* comm, void* mhandle);
  weft_result_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle,
                         void** request);
  weft_result_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                         void** request);
  weft_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  weft_result_t (*test)(void* request, int* done, int* sizes);
  weft_result_t (*closeSend)(void* sendComm);
  weft_result_t (*closeRecv)(void* recvComm);
  weft_result_t (*closeListen)(void* listenComm);
  weft_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  weft_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
} weft_net_v7_t;

/* v8 (NCCL 2.20): regMr takes size_t; properties gain regIsGlobal. */
typedef struct {
  const char* name;
  weft_result_t (*init)(weft_debug_logger_t logFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v8_t* props);
  weft_result_t (*listen)(int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(int dev, void* handle, void** sendComm,
                           weft_net_device_handle_v8_t** sendDevComm);
  weft_result_t (*accept)(void* listenComm, void** recvComm,
                          weft_net_device_handle_v8_t** recvDevComm);
  weft_result_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* comm, void* mhandle);
  weft_result_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle,
                         void** request);
  weft_result_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                         void** request);
  weft_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  weft_result_t (*test)(void* request, int* done, int* sizes);
  weft_result_t (*closeSend)(void* sendComm);
  weft_result_t (*closeRecv)(void* recvComm);
  weft_result_t (*closeListen)(void* listenComm);
  weft_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  weft_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
} weft_net_v8_t;

/* v9 (NCCL 2.24): size_t message sizes, makeVDevice, properties gain forceFlush/vProps/limits. */
typedef struct {
  const char* name;
  weft_result_t (*init)(weft_debug_logger_t logFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v9_t* props);
  weft_result_t (*listen)(int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(int dev, void* handle, void** sendComm,
                           weft_net_device_handle_v9_t** sendDevComm);
  weft_result_t (*accept)(void* listenComm, void** recvComm,
                          weft_net_device_handle_v9_t** recvDevComm);
  weft_result_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* comm, void* mhandle);
  weft_result_t (*isend)(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                         void** request);
  weft_result_t (*irecv)(void* recvComm, int n, void** data, size_t* sizes, int* tags,
                         void** mhandles, void** request);
  weft_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  weft_result_t (*test)(void* request, int* done, int* sizes);
  weft_result_t (*closeSend)(void* sendComm);
  weft_result_t (*closeRecv)(void* recvComm);
  weft_result_t (*closeListen)(void* listenComm);
  weft_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  weft_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
  weft_result_t (*makeVDevice)(int* d, weft_net_vdevice_props_v9_t* props);
} weft_net_v9_t;

/* v10 (NCCL 2.26): init takes a profiler callback; connect a comm config; isend/irecv take
 * profiler handles. */
typedef struct {
  const char* name;
  weft_result_t (*init)(weft_debug_logger_t logFunction, weft_profiler_callback_t profFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v10_t* props);
  weft_result_t (*listen)(int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(int dev, weft_net_comm_config_v10_t* config, void* handle,
                           void** sendComm, weft_net_device_handle_v10_t** sendDevComm);
  weft_result_t (*accept)(void* listenComm, void** recvComm,
                          weft_net_device_handle_v10_t** recvDevComm);
  weft_result_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* comm, void* mhandle);
  weft_result_t (*isend)(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                         void* phandle, void** request);
  weft_result_t (*irecv)(void* recvComm, int n, void** data, size_t* sizes, int* tags,
                         void** mhandles, void** phandles, void** request);
  weft_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  weft_result_t (*test)(void* request, int* done, int* sizes);
  weft_result_t (*closeSend)(void* sendComm);
  weft_result_t (*closeRecv)(void* recvComm);
  weft_result_t (*closeListen)(void* listenComm);
  weft_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  weft_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
  weft_result_t (*makeVDevice)(int* d, weft_net_vdevice_props_v10_t* props);
} weft_net_v10_t;

/* v11 (NCCL 2.28): init returns a per-communicator context taken by listen/connect, with the
 * comm config moved there; + finalize(ctx) and setNetAttr(ctx). */
typedef struct {
  const char* name;
  weft_result_t (*init)(void** ctx, uint64_t commId, weft_net_comm_config_v11_t* config,
                        weft_debug_logger_t logFunction, weft_profiler_callback_t profFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v11_t* props);
  weft_result_t (*listen)(void* ctx, int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(void* ctx, int dev, void* handle, void** sendComm,
                           weft_net_device_handle_v11_t** sendDevComm);
  weft_result_t (*accept)(void* listenComm, void** recvComm,
                          weft_net_device_handle_v11_t** recvDevComm);
  weft_result_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* comm, void* mhandle);
  weft_result_t (*isend)(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                         void* phandle, void** request);
  weft_result_t (*irecv)(void* recvComm, int n, void** data, size_t* sizes, int* tags,
                         void** mhandles, void** phandles, void** request);
  weft_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  weft_result_t (*test)(void* request, int* done, int* sizes);
  weft_result_t (*closeSend)(void* sendComm);
  weft_result_t (*closeRecv)(void* recvComm);
  weft_result_t (*closeListen)(void* listenComm);
  weft_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  weft_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
  weft_result_t (*makeVDevice)(int* d, weft_net_vdevice_props_v11_t* props);
  weft_result_t (*finalize)(void* ctx);
  weft_result_t (*setNetAttr)(void* ctx, weft_net_attr_v11_t* netAttr);
} weft_net_v11_t;

/* ---------------------------------------------------------------------------------------------
 * Collective net tables (CollNet, e.g. SHARP). Optional: a plugin may export none.
 * ------------------------------------------------------------------------------------------- */

/* v6 and v7: int sizes and counts, no iallgather/ireducescatter. */
typedef struct {
  const char* name;
  weft_result_t (*init)(weft_debug_logger_t logFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v6_t* props);
  weft_result_t (*listen)(int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(void* handles[], int nranks, int rank, void* listenComm,
                           void** collComm);
  weft_result_t (*reduceSupport)(weft_data_type_t dataType, weft_red_op_t redOp, int* supported);
  weft_result_t (*regMr)(void* collComm, void* data, int size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* collComm, void* mhandle);
  weft_result_t (*iallreduce)(void* collComm, void* sendData, void* recvData, int count,
                              weft_data_type_t dataType, weft_red_op_t redOp, void* sendMhandle,
                              void* recvMhandle, void** request);
  weft_result_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  weft_result_t (*test)(void* request, int* done, int* size);
  weft_result_t (*closeColl)(void* collComm);
  weft_result_t (*closeListen)(void* listenComm);
} weft_collnet_v6_t;

typedef struct {
  const char* name;
  weft_result_t (*init)(weft_debug_logger_t logFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v7_t* props);
  weft_result_t (*listen)(int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(void* handles[], int nranks, int rank, void* listenComm,
                           void** collComm);
  weft_result_t (*reduceSupport)(weft_data_type_t dataType, weft_red_op_t redOp, int* supported);
  weft_result_t (*regMr)(void* collComm, void* data, int size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* collComm, void* mhandle);
  weft_result_t (*iallreduce)(void* collComm, void* sendData, void* recvData, int count,
                              weft_data_type_t dataType, weft_red_op_t redOp, void* sendMhandle,
                              void* recvMhandle, void** request);
  weft_result_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  weft_result_t (*test)(void* request, int* done, int* size);
  weft_result_t (*closeColl)(void* collComm);
  weft_result_t (*closeListen)(void* listenComm);
} weft_collnet_v7_t;

/* v8: size_t regMr, + iallgather and ireducescatter (32-bit SGE sizes). */
typedef struct {
  const char* name;
  weft_result_t (*init)(weft_debug_logger_t logFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v8_t* props);
  weft_result_t (*listen)(int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(void* handles[], int nranks, int rank, void* listenComm,
                           void** collComm);
  weft_result_t (*reduceSupport)(weft_data_type_t dataType, weft_red_op_t redOp, int* supported);
  weft_result_t (*regMr)(void* collComm, void* data, size_t size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* collComm, void* mhandle);
  weft_result_t (*iallreduce)(void* collComm, void* sendData, void* recvData, int count,
                              weft_data_type_t dataType, weft_red_op_t redOp, void* sendMhandle,
                              void* recvMhandle, void** request);
  weft_result_t (*iallgather)(void* collComm, void* sendData, int nRecvParts,
                              weft_net_sge_v8_t* recvParts, size_t bytesPerRank,
                              size_t windowOffset, size_t windowBytes, void* sendMhandle,
                              void** request);
  weft_result_t (*ireducescatter)(void* collComm, int nSendParts, weft_net_sge_v8_t* sendParts,
                                  void* recvData, size_t bytesPerRank, size_t windowOffset,
                                  size_t windowBytes, weft_data_type_t dataType,
                                  weft_red_op_t redOp, void* recvMhandle, void** request);
  weft_result_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  weft_result_t (*test)(void* request, int* done, int* size);
  weft_result_t (*closeColl)(void* collComm);
  weft_result_t (*closeListen)(void* listenComm);
} weft_collnet_v8_t;

/* v9 and v10: size_t counts and SGE sizes, + makeVDevice. */
typedef struct {
  const char* name;
  weft_result_t (*init)(weft_debug_logger_t logFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v9_t* props);
  weft_result_t (*listen)(int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(void* handles[], int nranks, int rank, void* listenComm,
                           void** collComm);
  weft_result_t (*reduceSupport)(weft_data_type_t dataType, weft_red_op_t redOp, int* supported);
  weft_result_t (*regMr)(void* collComm, void* data, size_t size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* collComm, void* mhandle);
  weft_result_t (*iallreduce)(void* collComm, void* sendData, void* recvData, size_t count,
                              weft_data_type_t dataType, weft_red_op_t redOp, void* sendMhandle,
                              void* recvMhandle, void** request);
  weft_result_t (*iallgather)(void* collComm, void* sendData, int nRecvParts,
                              weft_net_sge_v9_t* recvParts, size_t bytesPerRank,
                              size_t windowOffset, size_t windowBytes, void* sendMhandle,
                              void** request);
  weft_result_t (*ireducescatter)(void* collComm, int nSendParts, weft_net_sge_v9_t* sendParts,
                                  void* recvData, size_t bytesPerRank, size_t windowOffset,
                                  size_t windowBytes, weft_data_type_t dataType,
                                  weft_red_op_t redOp, void* recvMhandle, void** request);
  weft_result_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  weft_result_t (*test)(void* request, int* done, int* size);
  weft_result_t (*closeColl)(void* collComm);
  weft_result_t (*closeListen)(void* listenComm);
  weft_result_t (*makeVDevice)(int* d, weft_net_vdevice_props_v9_t* props);
} weft_collnet_v9_t;
typedef weft_collnet_v9_t weft_collnet_v10_t;

/* v11: init returns a context taken by listen, + finalize. */
typedef struct {
  const char* name;
  weft_result_t (*init)(void** ctx, uint64_t commId, weft_debug_logger_t logFunction);
  weft_result_t (*devices)(int* ndev);
  weft_result_t (*getProperties)(int dev, weft_net_properties_v11_t* props);
  weft_result_t (*listen)(void* ctx, int dev, void* handle, void** listenComm);
  weft_result_t (*connect)(void* handles[], int nranks, int rank, void* listenComm,
                           void** collComm);
  weft_result_t (*reduceSupport)(weft_data_type_t dataType, weft_red_op_t redOp, int* supported);
  weft_result_t (*regMr)(void* collComm, void* data, size_t size, int type, void** mhandle);
  weft_result_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  weft_result_t (*deregMr)(void* collComm, void* mhandle);
  weft_result_t (*iallreduce)(void* collComm, void* sendData, void* recvData, size_t count,
                              weft_data_type_t dataType, weft_red_op_t redOp, void* sendMhandle,
                              void* recvMhandle, void** request);
  weft_result_t (*iallgather)(void* collComm, void* sendData, int nRecvParts,
                              weft_net_sge_v11_t* recvParts, size_t bytesPerRank,
                              size_t windowOffset, size_t windowBytes, void* sendMhandle,
                              void** request);
  weft_result_t (*ireducescatter)(void* collComm, int nSendParts, weft_net_sge_v11_t* sendParts,
                                  void* recvData, size_t bytesPerRank, size_t windowOffset,
                                  size_t windowBytes, weft_data_type_t dataType,
                                  weft_red_op_t redOp, void* recvMhandle, void** request);
  weft_result_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  weft_result_t (*test)(void* request, int* done, int* size);
  weft_result_t (*closeColl)(void* collComm);
  weft_result_t (*closeListen)(void* listenComm);
  weft_result_t (*makeVDevice)(int* d, weft_net_vdevice_props_v11_t* props);
  weft_result_t (*finalize)(void* ctx);
} weft_collnet_v11_t;

#ifdef __cplusplus
}
#endif

#endif /* WEFT_NET_H_ */
