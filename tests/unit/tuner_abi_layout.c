/* Compile-time check of include/weft/tuner.h against NCCL 2.28.9's byte layouts on LP64 (x86-64
 * and aarch64): tuner_v2.h ... tuner_v5.h field by field. Compiled as C11 so the header is also
 * proven to be plain C; the function is called by tuner_abi_layout_test.cc. */
#include <stddef.h>

#include "weft/tuner.h"

#if defined(__LP64__) && (defined(__x86_64__) || defined(__aarch64__))

#define WEFT_AT(type, field, off) \
  _Static_assert(offsetof(type, field) == (off), #type "." #field " must be at " #off)
#define WEFT_SIZE(type, size) _Static_assert(sizeof(type) == (size), "sizeof(" #type ") must be " #size)

/* Every version: name at 0, init at 8, getCollInfo at 16, destroy/finalize at 24. */
#define WEFT_TUNER_TABLE(t, last)                                     \
  WEFT_AT(t, name, 0); WEFT_AT(t, init, 8); WEFT_AT(t, getCollInfo, 16); \
  WEFT_AT(t, last, 24); WEFT_SIZE(t, 32)

WEFT_TUNER_TABLE(weft_tuner_v2_t, destroy);
WEFT_TUNER_TABLE(weft_tuner_v3_t, destroy);
WEFT_TUNER_TABLE(weft_tuner_v4_t, destroy);
WEFT_TUNER_TABLE(weft_tuner_v5_t, finalize);

WEFT_SIZE(weft_nvl_domain_info_v5_t, 12);
WEFT_AT(weft_nvl_domain_info_v5_t, nNvlDomains, 0);
WEFT_AT(weft_nvl_domain_info_v5_t, minRanksPerNvlDomain, 4);
WEFT_AT(weft_nvl_domain_info_v5_t, maxRanksPerNvlDomain, 8);

/* [7][3] doubles = 168 bytes, [3][7][3] = 504, each [4][3] table = 96. */
WEFT_AT(weft_tuner_constants_v5_t, baseLatencies, 0);
WEFT_AT(weft_tuner_constants_v5_t, hwLatencies, 168);
WEFT_AT(weft_tuner_constants_v5_t, llMaxBws, 672);
WEFT_AT(weft_tuner_constants_v5_t, perChMaxRingLL128Bws, 768);
WEFT_AT(weft_tuner_constants_v5_t, perChMaxTreeLL128Bws, 864);
WEFT_AT(weft_tuner_constants_v5_t, perChMaxTreeBws, 960);
WEFT_AT(weft_tuner_constants_v5_t, perChMaxNVLSTreeBws, 1056);
WEFT_SIZE(weft_tuner_constants_v5_t, 1152);
_Static_assert(sizeof(((weft_tuner_constants_v5_t*)0)->hwLatencies[0]) == 168, "hwLatencies rows are [7][3]");

_Static_assert(WEFT_TUNER_NUM_ALGORITHMS == 7 && WEFT_TUNER_NUM_PROTOCOLS == 3, "NCCL 2.28 table shape");
_Static_assert(WEFT_ALGO_PAT == 6 && WEFT_ALGO_NVLS_TREE == 5 && WEFT_PROTO_SIMPLE == 2, "NCCL 2.28 indices");
_Static_assert(WEFT_FUNC_ALLREDUCE == 4 && WEFT_FUNC_GATHER == 10, "ncclFunc_t values");
_Static_assert(sizeof(weft_func_t) == 4, "ncclFunc_t is int-sized");

int weftTunerAbiLayoutChecked(void) { return 1; }

#else
int weftTunerAbiLayoutChecked(void) { return 0; }
#endif
