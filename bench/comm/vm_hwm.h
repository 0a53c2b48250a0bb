/* The peak resident memory of this process (VmHWM in /proc/self/status) in KiB, or -1 where it
 * cannot be read. Shared by the C and C++ benchmarks of bench/comm (the `--hwm 1` flag of their
 * coll mode). Pages of a shared mapping count in every process that touched them. */
#ifndef WEFT_BENCH_COMM_VM_HWM_H
#define WEFT_BENCH_COMM_VM_HWM_H

#include <stdio.h>
#include <string.h>

static inline long weft_bench_vm_hwm_kib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  if (f == NULL) return -1;
  while (fgets(line, sizeof(line), f) != NULL)
    if (strncmp(line, "VmHWM:", 6) == 0 && sscanf(line + 6, "%ld", &kib) == 1) break;
  fclose(f);
  return kib;
}

#endif
