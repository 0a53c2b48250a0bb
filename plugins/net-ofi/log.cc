#include "plugins/net-ofi/log.h"

#include <rdma/fi_errno.h>

#include <cstdio>
#include <cstdlib>

namespace weft::ofi {

const char* fiErrorText(int rc) {
  // fi_strerror takes the positive code; keep a copy per thread for the caller's message.
  static thread_local char text[160];
  int code = std::abs(rc);
  std::snprintf(text, sizeof(text), "%s (%d)", fi_strerror(code), -code);
  return text;
}

}  // namespace weft::ofi
