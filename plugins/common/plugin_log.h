// Logging for weft's own net plugins: through the host's logger handed to init (never stdout),
// and a helper that logs a failure once, where it is detected, and returns its code. Each
// plugin library links its own copy (plugins/common is an object library), so each keeps the
// logger its own host gave it.
#pragma once

#include "weft/net.h"

namespace weft::netplugin {

void setLogger(weft_debug_logger_t logger);
weft_debug_logger_t logger();
// Logs a WARN (formatted here, since the host logger takes no va_list) and returns `code`.
weft_result_t logFailure(weft_result_t code, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

}  // namespace weft::netplugin

#define WEFT_PLUGIN_LOG(level, flags, ...)                                                  \
  do {                                                                                      \
    weft_debug_logger_t plugin_log_ = ::weft::netplugin::logger();                          \
    if (plugin_log_ != nullptr) plugin_log_((level), (flags), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define WEFT_PLUGIN_FAIL(code, ...) ::weft::netplugin::logFailure((code), __FILE__, __LINE__, __VA_ARGS__)
