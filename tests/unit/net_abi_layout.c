/* Compile-time check of include/weft/net.h against NCCL 2.28.9's byte layouts on LP64 (x86-64
 * and aarch64). The numbers are NCCL's, computed from its net_v6.h ... net_v11.h field lists;
 * a wrong type or a missing field in net.h fails the build here. Compiled as C11 so the header
 * is also proven to be plain C. The one function is called by the C++ test that checks the
 * plugin binaries, so this unit cannot be dropped by the linker without notice. */
#include <stddef.h>

#include "weft/net.h"

#if defined(__LP64__) && (defined(__x86_64__) || defined(__aarch64__))

#define WEFT_AT(type, field, off) \
  _Static_assert(offsetof(type, field) == (off), #type "." #field " must be at " #off)
#define WEFT_SIZE(type, size) _Static_assert(sizeof(type) == (size), "sizeof(" #type ") must be " #size)
/* The i-th function pointer of a table sits at 8*i (name is slot 0). */
#define WEFT_FN(type, field, slot) WEFT_AT(type, field, 8 * (slot))

WEFT_SIZE(weft_net_device_handle_v7_t, 32);
WEFT_AT(weft_net_device_handle_v7_t, netDeviceVersion, 4);
WEFT_AT(weft_net_device_handle_v7_t, handle, 8);
WEFT_AT(weft_net_device_handle_v7_t, size, 16);
WEFT_AT(weft_net_device_handle_v7_t, needsProxyProgress, 24);

WEFT_SIZE(weft_net_vdevice_props_v9_t, 20);
WEFT_SIZE(weft_net_comm_config_v10_t, 4);
WEFT_SIZE(weft_net_comm_attr_v11_t, 16);
WEFT_SIZE(weft_net_attr_v11_t, 44);
WEFT_AT(weft_net_attr_v11_t, recvCommAttr, 16);
WEFT_AT(weft_net_attr_v11_t, op, 32);
WEFT_AT(weft_net_attr_v11_t, algo, 36);
WEFT_AT(weft_net_attr_v11_t, proto, 40);
WEFT_SIZE(weft_net_sge_v8_t, 24);
WEFT_AT(weft_net_sge_v8_t, size, 16);
WEFT_SIZE(weft_net_sge_v9_t, 24);
WEFT_AT(weft_net_sge_v9_t, size, 16);

/* Properties. */
WEFT_SIZE(weft_net_properties_v6_t, 48);
WEFT_AT(weft_net_properties_v6_t, pciPath, 8);
WEFT_AT(weft_net_properties_v6_t, guid, 16);
WEFT_AT(weft_net_properties_v6_t, ptrSupport, 24);
WEFT_AT(weft_net_properties_v6_t, speed, 28);
WEFT_AT(weft_net_properties_v6_t, port, 32);
WEFT_AT(weft_net_properties_v6_t, latency, 36);
WEFT_AT(weft_net_properties_v6_t, maxComms, 40);
WEFT_AT(weft_net_properties_v6_t, maxRecvs, 44);

WEFT_SIZE(weft_net_properties_v7_t, 56);
WEFT_AT(weft_net_properties_v7_t, maxRecvs, 44);
WEFT_AT(weft_net_properties_v7_t, netDeviceType, 48);
WEFT_AT(weft_net_properties_v7_t, netDeviceVersion, 52);

WEFT_SIZE(weft_net_properties_v8_t, 64);
WEFT_AT(weft_net_properties_v8_t, ptrSupport, 24);
WEFT_AT(weft_net_properties_v8_t, regIsGlobal, 28);
WEFT_AT(weft_net_properties_v8_t, speed, 32);
WEFT_AT(weft_net_properties_v8_t, port, 36);
WEFT_AT(weft_net_properties_v8_t, latency, 40);
WEFT_AT(weft_net_properties_v8_t, maxComms, 44);
WEFT_AT(weft_net_properties_v8_t, maxRecvs, 48);
WEFT_AT(weft_net_properties_v8_t, netDeviceType, 52);
WEFT_AT(weft_net_properties_v8_t, netDeviceVersion, 56);

WEFT_SIZE(weft_net_properties_v9_t, 104);
WEFT_AT(weft_net_properties_v9_t, regIsGlobal, 28);
WEFT_AT(weft_net_properties_v9_t, forceFlush, 32);
WEFT_AT(weft_net_properties_v9_t, speed, 36);
WEFT_AT(weft_net_properties_v9_t, port, 40);
WEFT_AT(weft_net_properties_v9_t, latency, 44);
WEFT_AT(weft_net_properties_v9_t, maxComms, 48);
WEFT_AT(weft_net_properties_v9_t, maxRecvs, 52);
WEFT_AT(weft_net_properties_v9_t, netDeviceType, 56);
WEFT_AT(weft_net_properties_v9_t, netDeviceVersion, 60);
WEFT_AT(weft_net_properties_v9_t, vProps, 64);
WEFT_AT(weft_net_properties_v9_t, maxP2pBytes, 88);
WEFT_AT(weft_net_properties_v9_t, maxCollBytes, 96);

WEFT_SIZE(weft_net_properties_v11_t, 112);
WEFT_AT(weft_net_properties_v11_t, vProps, 64);
WEFT_AT(weft_net_properties_v11_t, maxP2pBytes, 88);
WEFT_AT(weft_net_properties_v11_t, maxCollBytes, 96);
WEFT_AT(weft_net_properties_v11_t, maxMultiRequestSize, 104);

/* Net tables: 17 slots in v6, 19 in v7/v8, 20 in v9/v10, 22 in v11. */
#define WEFT_NET_COMMON(t)                                                                   \
  WEFT_FN(t, init, 1); WEFT_FN(t, devices, 2); WEFT_FN(t, getProperties, 3);                 \
  WEFT_FN(t, listen, 4); WEFT_FN(t, connect, 5); WEFT_FN(t, accept, 6); WEFT_FN(t, regMr, 7); \
  WEFT_FN(t, regMrDmaBuf, 8); WEFT_FN(t, deregMr, 9); WEFT_FN(t, isend, 10);                 \
  WEFT_FN(t, irecv, 11); WEFT_FN(t, iflush, 12); WEFT_FN(t, test, 13);                       \
  WEFT_FN(t, closeSend, 14); WEFT_FN(t, closeRecv, 15); WEFT_FN(t, closeListen, 16)
#define WEFT_NET_V7_TAIL(t) WEFT_FN(t, getDeviceMr, 17); WEFT_FN(t, irecvConsumed, 18)

WEFT_NET_COMMON(weft_net_v6_t);
WEFT_SIZE(weft_net_v6_t, 136);
WEFT_NET_COMMON(weft_net_v7_t);
WEFT_NET_V7_TAIL(weft_net_v7_t);
WEFT_SIZE(weft_net_v7_t, 152);
WEFT_NET_COMMON(weft_net_v8_t);
WEFT_NET_V7_TAIL(weft_net_v8_t);
WEFT_SIZE(weft_net_v8_t, 152);
WEFT_NET_COMMON(weft_net_v9_t);
WEFT_NET_V7_TAIL(weft_net_v9_t);
WEFT_FN(weft_net_v9_t, makeVDevice, 19);
WEFT_SIZE(weft_net_v9_t, 160);
WEFT_NET_COMMON(weft_net_v10_t);
WEFT_NET_V7_TAIL(weft_net_v10_t);
WEFT_FN(weft_net_v10_t, makeVDevice, 19);
WEFT_SIZE(weft_net_v10_t, 160);
WEFT_NET_COMMON(weft_net_v11_t);
WEFT_NET_V7_TAIL(weft_net_v11_t);
WEFT_FN(weft_net_v11_t, makeVDevice, 19);
WEFT_FN(weft_net_v11_t, finalize, 20);
WEFT_FN(weft_net_v11_t, setNetAttr, 21);
WEFT_SIZE(weft_net_v11_t, 176);

/* CollNet tables: 15 slots in v6/v7, 17 in v8, 18 in v9/v10, 19 in v11. */
#define WEFT_COLLNET_HEAD(t)                                                                  \
  WEFT_FN(t, init, 1); WEFT_FN(t, devices, 2); WEFT_FN(t, getProperties, 3);                  \
  WEFT_FN(t, listen, 4); WEFT_FN(t, connect, 5); WEFT_FN(t, reduceSupport, 6);                \
  WEFT_FN(t, regMr, 7); WEFT_FN(t, regMrDmaBuf, 8); WEFT_FN(t, deregMr, 9);                   \
  WEFT_FN(t, iallreduce, 10)
#define WEFT_COLLNET_V8(t)                                                                    \
  WEFT_COLLNET_HEAD(t); WEFT_FN(t, iallgather, 11); WEFT_FN(t, ireducescatter, 12);           \
  WEFT_FN(t, iflush, 13); WEFT_FN(t, test, 14); WEFT_FN(t, closeColl, 15);                    \
  WEFT_FN(t, closeListen, 16)

WEFT_COLLNET_HEAD(weft_collnet_v6_t);
WEFT_FN(weft_collnet_v6_t, iflush, 11);
WEFT_FN(weft_collnet_v6_t, test, 12);
WEFT_FN(weft_collnet_v6_t, closeColl, 13);
WEFT_FN(weft_collnet_v6_t, closeListen, 14);
WEFT_SIZE(weft_collnet_v6_t, 120);
WEFT_COLLNET_HEAD(weft_collnet_v7_t);
WEFT_FN(weft_collnet_v7_t, closeListen, 14);
WEFT_SIZE(weft_collnet_v7_t, 120);
WEFT_COLLNET_V8(weft_collnet_v8_t);
WEFT_SIZE(weft_collnet_v8_t, 136);
WEFT_COLLNET_V8(weft_collnet_v9_t);
WEFT_FN(weft_collnet_v9_t, makeVDevice, 17);
WEFT_SIZE(weft_collnet_v9_t, 144);
WEFT_COLLNET_V8(weft_collnet_v11_t);
WEFT_FN(weft_collnet_v11_t, makeVDevice, 17);
WEFT_FN(weft_collnet_v11_t, finalize, 18);
WEFT_SIZE(weft_collnet_v11_t, 152);

int weftNetAbiLayoutChecked(void) { return 1; }

#else
/* Other ABIs: nothing to check; the test reports it as skipped. */
int weftNetAbiLayoutChecked(void) { return 0; }
#endif
