// C ABI entry points for version and result strings.
#include "weft/config.h"
#include "weft/weft.h"

#include "core/api/last_error.h"
#include "core/base/log.h"
#include "core/base/status.h"

namespace weft::api {

thread_local std::string tlsLastError;

weft_result_t record(const Status& status) {
  tlsLastError = status.isOk() ? std::string() : status.message();
  return static_cast<weft_result_t>(status.ncclCode());
}

}  // namespace weft::api

extern "C" {

WEFT_API const char* weft_version_string(void) { return WEFT_VERSION_STRING; }

WEFT_API int weft_version_code(void) {
  return WEFT_VERSION_MAJOR * 10000 + WEFT_VERSION_MINOR * 100 + WEFT_VERSION_PATCH;
}

WEFT_API const char* weft_result_string(weft_result_t result) {
  return weft::codeName(static_cast<weft::Code>(result));
}

WEFT_API const char* weft_last_error(void) { return weft::api::tlsLastError.c_str(); }

WEFT_API weft_debug_logger_t weft_logger(void) {
  return reinterpret_cast<weft_debug_logger_t>(&weft::log::weftPluginLog);
}

WEFT_API weft_log_level_t weft_log_level(void) {
  return static_cast<weft_log_level_t>(weft::log::processLogger().options().level);
}

WEFT_API void weft_log_reset(void) { weft::log::processLogger().setOptions(weft::log::optionsFromEnvironment()); }

}  // extern "C"
