// Logging for the socket plugin: through the host's logger handed to init (never stdout), and
// a helper that logs a failure once, where it is detected, and returns its code.
#pragma once

#include "weft/net.h"

namespace weft::socket {

void setLogger(weft_debug_logger_t logger);
weft_debug_logger_t logger();
// Logs a WARN (formatted here, since the host logger takes no va_list) and returns `code`.
weft_result_t logFailure(weft_result_t code, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

}  // namespace weft::socket

#define SOCK_LOG_(level, flags, ...)                                                  \
  do {                                                                                \
    weft_debug_logger_t sock_log_ = ::weft::socket::logger();                         \
    if (sock_log_ != nullptr) sock_log_((level), (flags), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define SOCK_WARN(...) SOCK_LOG_(WEFT_LOG_WARN, WEFT_LOG_ALL, __VA_ARGS__)
#define SOCK_INFO(...) SOCK_LOG_(WEFT_LOG_INFO, WEFT_LOG_NET | WEFT_LOG_INIT, __VA_ARGS__)
#define SOCK_TRACE(...) SOCK_LOG_(WEFT_LOG_TRACE, WEFT_LOG_NET, __VA_ARGS__)

// Logs a WARN and evaluates to `code`: `return SOCK_FAIL(weftInvalidArgument, "isend: …");`
#define SOCK_FAIL(code, ...) ::weft::socket::logFailure((code), __FILE__, __LINE__, __VA_ARGS__)
