// ncclGetErrorString, ncclGetLastError, ncclGetVersion and the face's log lines.
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <string>

#include "faces/nccl/face.h"

namespace weft::nccl {
namespace {

// NCCL keeps one process-wide message that every failure overwrites and nothing clears. The
// face keeps that, and the calling thread's own last failure, which ncclGetLastError prefers
// (so two threads failing at once each read their own).
std::mutex gLastMutex;
std::string gLast;
thread_local std::string tlsLast;
thread_local std::string tlsProcessCopy;

}  // namespace

ncclResult_t fail(const char* call, ncclResult_t code, const std::string& why) {
  std::string msg = why.rfind(call, 0) == 0 ? why : std::string(call) + ": " + why;
  // What "run with NCCL_DEBUG=WARN for details" promises.
  if (weft_log_level() >= WEFT_LOG_WARN) weft_logger()(WEFT_LOG_WARN, WEFT_LOG_ALL, __FILE__, __LINE__, "%s", msg.c_str());
  tlsLast = msg;
  {
    std::lock_guard<std::mutex> lock(gLastMutex);
    gLast = msg;
  }
  return code;
}

ncclResult_t fromWeft(const char* call, weft_result_t rc) {
  if (rc == weftSuccess || rc == weftInProgress) return static_cast<ncclResult_t>(rc);
  const char* why = weft_last_error();
  return fail(call, static_cast<ncclResult_t>(rc), why != nullptr && why[0] != '\0' ? why : weft_result_string(rc));
}

namespace {

void logLine(weft_log_level_t level, unsigned long subsys, const char* fmt, va_list ap) {
  if (weft_log_level() < level) return;
  char line[1024];
  vsnprintf(line, sizeof(line), fmt, ap);
  weft_logger()(level, subsys, __FILE__, __LINE__, "%s", line);
}

}  // namespace

void info(unsigned long subsys, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  logLine(WEFT_LOG_INFO, subsys, fmt, ap);
  va_end(ap);
}

// As NCCL: every rank at INFO and above, rank 0 only at VERSION and WARN; printed once per
// process. "NCCL version X+..." is the line log readers look for; the suffix names weft.
void showVersionOnce(int rank) {
  weft_log_level_t level = weft_log_level();
  if (!(level > WEFT_LOG_WARN || (level != WEFT_LOG_NONE && rank == 0))) return;
  static std::once_flag once;
  std::call_once(once, [level] {
    weft_log_level_t as = level == WEFT_LOG_VERSION || level == WEFT_LOG_WARN ? WEFT_LOG_VERSION : WEFT_LOG_INFO;
    weft_logger()(as, WEFT_LOG_ALL, __FILE__, __LINE__, "NCCL version %d.%d.%d%s+weft%s (weft's libnccl.so.2, not NVIDIA's)", NCCL_MAJOR,
                  NCCL_MINOR, NCCL_PATCH, NCCL_SUFFIX, weft_version_string());
  });
}

}  // namespace weft::nccl

using weft::nccl::fail;

WEFT_NCCL_API(const char*, ncclGetErrorString, ncclResult_t result) {
  // NCCL's own wording: scripts and logs match on it.
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

WEFT_NCCL_API(const char*, ncclGetLastError, ncclComm_t comm) {
  (void)comm;
  if (!weft::nccl::tlsLast.empty()) return weft::nccl::tlsLast.c_str();
  std::lock_guard<std::mutex> lock(weft::nccl::gLastMutex);
  weft::nccl::tlsProcessCopy = weft::nccl::gLast;
  return weft::nccl::tlsProcessCopy.c_str();
}

WEFT_NCCL_API(ncclResult_t, ncclGetVersion, int* version) {
  if (version == nullptr) return fail("ncclGetVersion", ncclInvalidArgument, "version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

// Deprecated in NCCL and not part of its API; kept because programs may still call it.
extern "C" __attribute__((visibility("default"))) void ncclResetDebugInitInternal() { weft_log_reset(); }
extern "C" __attribute__((visibility("default"))) void pncclResetDebugInit() { weft_log_reset(); }
extern "C" __attribute__((visibility("default"), weak, alias("pncclResetDebugInit"))) void ncclResetDebugInit();
