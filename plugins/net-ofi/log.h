// Logging for the OFI plugin (plugins/common/plugin_log.h), and libfabric's error text.
#pragma once

#include "plugins/common/plugin_log.h"

namespace weft::ofi {

using netplugin::logger;
using netplugin::setLogger;
// "Connection refused (-111)": libfabric's text for a negative fi_* return value or an error
// completion's positive errno.
const char* fiErrorText(int rc);

}  // namespace weft::ofi

#define OFI_WARN(...) WEFT_PLUGIN_LOG(WEFT_LOG_WARN, WEFT_LOG_ALL, __VA_ARGS__)
#define OFI_INFO(...) WEFT_PLUGIN_LOG(WEFT_LOG_INFO, WEFT_LOG_NET | WEFT_LOG_INIT, __VA_ARGS__)
// Logs a WARN and evaluates to `code`: `return OFI_FAIL(weftInvalidArgument, "isend: …");`
#define OFI_FAIL(code, ...) WEFT_PLUGIN_FAIL((code), __VA_ARGS__)
// A failed fi_* call: names the call and the object, with libfabric's text for `rc`.
#define OFI_FI_FAIL(code, rc, call, fmt, ...) \
  OFI_FAIL((code), "NET/OFI: %s(" fmt "): %s", (call), ##__VA_ARGS__, ::weft::ofi::fiErrorText(rc))
