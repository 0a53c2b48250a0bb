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

#ifdef __cplusplus
}
#endif

#include "weft/comm.h" /* communicators, send/recv, groups */

#endif /* WEFT_WEFT_H_ */
