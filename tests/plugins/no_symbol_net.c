/* A library that looks like a net plugin but exports only a version weft does not load
 * (ncclNetPlugin_v5, NCCL 2.12's), so the loader must reject it and name what it found. */
#include "weft/net.h"

WEFT_NET_EXPORT const struct { const char* name; } ncclNetPlugin_v5 = {.name = "TooOld"};
