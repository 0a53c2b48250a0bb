/* weft's nccl.h against NVIDIA's: every macro value, enum value, struct size, field offset and
 * field size a program compiled against one header passes to a library built for the other. */
#include <stdio.h>
#include <string.h>

#include "layout_probe.h"

int main(void) {
  enum { kCap = 256 };
  probe_fact_t w[kCap], v[kCap];
  int nw = probe_weft(w, kCap), nv = probe_nvidia(v, kCap);
  if (nw != nv || nw > kCap) {
    fprintf(stderr, "FAIL: %d facts from weft's header, %d from NVIDIA's\n", nw, nv);
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < nw; ++i) {
    if (w[i].value != v[i].value) {
      fprintf(stderr, "FAIL: %s: weft's nccl.h %lld, NVIDIA's %lld\n", w[i].name, w[i].value, v[i].value);
      ++bad;
    }
  }
  if (bad != 0) return 1;
  printf("OK: %d ABI facts of weft's nccl.h equal NVIDIA's nccl.h 2.28.9's\n", nw);
  return 0;
}
