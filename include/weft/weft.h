/* weft: topology-aware collective communication, NCCL-compatible.
 *
 * The C ABI of libweft. Every function returns a weft_result_t whose values equal
 * ncclResult_t's, never throws, and is safe to call from C11 and C++. */
#ifndef WEFT_WEFT_H_
#define WEFT_WEFT_H_

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

#include "weft/debug.h" /* weft_debug_logger_t, weft_log_level_t */

/* Values equal ncclResult_t's. */
typedef enum {
  weftSuccess = 0,
  weftUnhandledCudaError = 1,
  weftSystemError = 2,
  weftInternalError = 3,
  weftInvalidArgument = 4,
  weftInvalidUsage = 5,
  weftRemoteError = 6,
  weftInProgress = 7,
} weft_result_t;

/* The library's version as "MAJOR.MINOR.PATCH". The string is static; never free it. */
WEFT_API const char* weft_version_string(void);

/* Encodes the version as MAJOR*10000 + MINOR*100 + PATCH (NCCL's NCCL_VERSION_CODE scheme).
 * Never fails. */
WEFT_API int weft_version_code(void);

/* A short English description of a result code. Static storage. */
WEFT_API const char* weft_result_string(weft_result_t result);

/* The message of the last error returned on this thread by any weft_* call, or "" if the last
 * call succeeded. Valid until the next weft_* call on the same thread. */
WEFT_API const char* weft_last_error(void);

/* weft's process logger (NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE): the function net and
 * tuner plugins receive. Faces and embedders log through it, so that their lines share its
 * filter, prefix and output. Never NULL; thread-safe. */
WEFT_API weft_debug_logger_t weft_logger(void);

/* The logger's level (NCCL_DEBUG as read when the logger was configured). */
WEFT_API weft_log_level_t weft_log_level(void);

/* Reads NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE again from the environment (what
 * NCCL's ncclResetDebugInit does). */
WEFT_API void weft_log_reset(void);

#ifdef __cplusplus
}
#endif

#include "weft/comm.h" /* communicators, send/recv, groups */

#endif /* WEFT_WEFT_H_ */
