// The NCCL-named face of weft (libnccl.so.2): NCCL 2.28's host API over weft's C API, and
// nothing else. Shared by the face's translation units.
#pragma once

#include <string>

#include "nccl.h"
#include "weft/weft.h"

// Defines pncclNAME (strong) and NAME as a weak alias of it, both exported: how NCCL exports its
// API, so that a profiler or shim can override the weak names and still reach the library.
#define WEFT_NCCL_API(ret, name, ...)                                                             \
  extern "C" __attribute__((visibility("default"), weak, alias("p" #name))) ret name(__VA_ARGS__); \
  extern "C" __attribute__((visibility("default"))) ret p##name(__VA_ARGS__)

namespace weft::nccl {

inline weft_comm_t* toWeft(ncclComm_t c) { return reinterpret_cast<weft_comm_t*>(c); }
inline ncclComm_t toNccl(weft_comm_t* c) { return reinterpret_cast<ncclComm_t>(c); }

// Records a failure of `call` (ncclGetLastError returns it; a WARN line shows it) and returns
// `code`. The message is "<call>: <why>" unless `why` already starts with the call's name.
ncclResult_t fail(const char* call, ncclResult_t code, const std::string& why);

// The result of a weft call made for `call`: success passes through; a failure is recorded
// with weft's message for this thread.
ncclResult_t fromWeft(const char* call, weft_result_t rc);

// An INFO line through weft's logger (NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE).
void info(unsigned long subsys, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// The "NCCL version" line NCCL prints at the first init (here naming weft and its version).
void showVersionOnce(int rank);

// True while the calling thread is inside ncclGroupStart/ncclGroupEnd.
bool inGroup();
// A communicator whose initialisation was started inside the group and finishes at its end.
void deferInit(weft_comm_t* comm, bool callerBlocking);
// Waits for inits deferred by the thread's group that concern `comm` (if any) before a call
// uses it. Returns the init's failure, if it failed.
ncclResult_t awaitDeferred(const char* call, ncclComm_t comm);

// Converts an NCCL config (any size and version a caller's header had) to weft's, with NCCL's
// checks; `out` starts as WEFT_CONFIG_INITIALIZER.
ncclResult_t convertConfig(const char* call, const ncclConfig_t* in, weft_config_t* out);

}  // namespace weft::nccl
