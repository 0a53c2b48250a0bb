#pragma once
typedef enum {NCCL_NET_DEVICE_HOST=0, NCCL_NET_DEVICE_UNPACK=1} ncclNetDeviceType;
typedef struct { ncclNetDeviceType netDeviceType; int netDeviceVersion; void* handle; size_t size; int needsProxyProgress; } ncclNetDeviceHandle_v11_t;
#define NCCL_NET_DEVICE_INVALID_VERSION 0x0
