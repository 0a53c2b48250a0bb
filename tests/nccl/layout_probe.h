/* The ABI facts of one nccl.h, as numbers: compiled once against weft's header and once against
 * NVIDIA's (layout_probe.c with different include paths), then compared by layout_check.c. */
#ifndef WEFT_TESTS_NCCL_LAYOUT_PROBE_H_
#define WEFT_TESTS_NCCL_LAYOUT_PROBE_H_

#include <stddef.h>

typedef struct {
  const char* name;
  long long value;
} probe_fact_t;

/* Fills `out` (capacity `cap`) and returns how many facts there are. */
int probe_weft(probe_fact_t* out, int cap);
int probe_nvidia(probe_fact_t* out, int cap);

#endif
