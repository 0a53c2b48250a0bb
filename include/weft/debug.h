/* The logger a host hands to its plugins (ncclDebugLogLevel, ncclDebugLogSubSys,
 * ncclDebugLogger_t), shared by the net and tuner plugin ABIs. Values are NCCL's. */
#ifndef WEFT_DEBUG_H_
#define WEFT_DEBUG_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  WEFT_LOG_NONE = 0,
  WEFT_LOG_VERSION = 1,
  WEFT_LOG_WARN = 2,
  WEFT_LOG_INFO = 3,
  WEFT_LOG_ABORT = 4,
  WEFT_LOG_TRACE = 5
} weft_log_level_t;

typedef enum {
  WEFT_LOG_INIT = 0x1,
  WEFT_LOG_COLL = 0x2,
  WEFT_LOG_P2P = 0x4,
  WEFT_LOG_SHM = 0x8,
  WEFT_LOG_NET = 0x10,
  WEFT_LOG_GRAPH = 0x20,
  WEFT_LOG_TUNING = 0x40,
  WEFT_LOG_ENV = 0x80,
  WEFT_LOG_ALLOC = 0x100,
  WEFT_LOG_CALL = 0x200,
  WEFT_LOG_PROXY = 0x400,
  WEFT_LOG_NVLS = 0x800,
  WEFT_LOG_BOOTSTRAP = 0x1000,
  WEFT_LOG_REG = 0x2000,
  WEFT_LOG_PROFILE = 0x4000,
  WEFT_LOG_RAS = 0x8000,
  WEFT_LOG_ALL = ~0
} weft_log_subsys_t;

/* The host's logger. `flags` is a weft_log_subsys_t mask; fmt is printf-style. May be NULL in
 * a host that does not log: plugins must check. */
typedef void (*weft_debug_logger_t)(weft_log_level_t level, unsigned long flags, const char* file,
                                    int line, const char* fmt, ...);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_DEBUG_H_ */
