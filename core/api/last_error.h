// Per-thread last error message behind weft_last_error().
#pragma once

#include <string>

#include "core/base/status.h"
#include "weft/weft.h"

namespace weft::api {

extern thread_local std::string tlsLastError;

// Stores the message of `status` (or clears it) and returns its C result code.
weft_result_t record(const Status& status);

// Runs `fn` (returning Status) and converts any exception into weftInternalError, so nothing
// ever crosses the C ABI.
template <typename Fn>
weft_result_t guard(const char* what, Fn&& fn) noexcept {
  try {
    return record(fn());
  } catch (const std::exception& e) {
    return record(internalError(std::string(what) + ": " + e.what()));
  } catch (...) {
    return record(internalError(std::string(what) + ": unknown exception"));
  }
}

}  // namespace weft::api
