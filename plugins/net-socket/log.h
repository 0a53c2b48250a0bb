// Logging for the socket plugin (plugins/common/plugin_log.h).
#pragma once

#include "plugins/common/plugin_log.h"

namespace weft::socket {

using netplugin::logger;
using netplugin::setLogger;

}  // namespace weft::socket

#define SOCK_WARN(...) WEFT_PLUGIN_LOG(WEFT_LOG_WARN, WEFT_LOG_ALL, __VA_ARGS__)
#define SOCK_INFO(...) WEFT_PLUGIN_LOG(WEFT_LOG_INFO, WEFT_LOG_NET | WEFT_LOG_INIT, __VA_ARGS__)
#define SOCK_TRACE(...) WEFT_PLUGIN_LOG(WEFT_LOG_TRACE, WEFT_LOG_NET, __VA_ARGS__)

// Logs a WARN and evaluates to `code`: `return SOCK_FAIL(weftInvalidArgument, "isend: …");`
#define SOCK_FAIL(code, ...) WEFT_PLUGIN_FAIL((code), __VA_ARGS__)
