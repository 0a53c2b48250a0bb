// Logging for the IB plugin (plugins/common/plugin_log.h), and the text of a failed verbs call.
#pragma once

#include <cstring>

#include "plugins/common/plugin_log.h"

namespace weft::ib {

using netplugin::logger;
using netplugin::setLogger;

}  // namespace weft::ib

#define IB_WARN(...) WEFT_PLUGIN_LOG(WEFT_LOG_WARN, WEFT_LOG_ALL, __VA_ARGS__)
#define IB_INFO(...) WEFT_PLUGIN_LOG(WEFT_LOG_INFO, WEFT_LOG_NET | WEFT_LOG_INIT, __VA_ARGS__)
// Logs a WARN and evaluates to `code`: `return IB_FAIL(weftInvalidArgument, "NET/IB: isend: …");`
#define IB_FAIL(code, ...) WEFT_PLUGIN_FAIL((code), __VA_ARGS__)
// A failed verbs call: names the call and its object, with errno's text. Verbs calls return
// the error number itself or set errno; `err` is whichever the call gives.
#define IB_VERBS_FAIL(code, err, call, fmt, ...)                                                      \
  IB_FAIL((code), "NET/IB: %s(" fmt "): %s (errno %d)", (call), ##__VA_ARGS__, ::strerror(err), (err))
