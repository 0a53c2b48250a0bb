#include "plugins/common/plugin_log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace weft::netplugin {
namespace {
std::atomic<weft_debug_logger_t> gLogger{nullptr};
}

void setLogger(weft_debug_logger_t l) {
  if (l != nullptr) gLogger.store(l, std::memory_order_release);
}
weft_debug_logger_t logger() { return gLogger.load(std::memory_order_acquire); }

weft_result_t logFailure(weft_result_t code, const char* file, int line, const char* fmt, ...) {
  weft_debug_logger_t l = logger();
  if (l == nullptr) return code;
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  l(WEFT_LOG_WARN, WEFT_LOG_ALL, file, line, "%s", text);
  return code;
}

}  // namespace weft::netplugin
