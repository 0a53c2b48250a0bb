// The real NCCL 2.28.9 creating a one-rank communicator, for the tests that check weft's
// plugins inside NCCL. NCCL loads plugins only while creating a communicator, which needs a
// CUDA driver and a GPU: without them the run says it was skipped and why. NCCL's public C API
// is declared here so the tests need no NCCL headers at build time.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace weft::test {

struct NcclRun {
  std::string skipped;  // why NCCL could not run here; empty when it ran
  std::string error;    // a failure of NCCL's API
  std::string log;      // NCCL's log (NCCL_DEBUG_FILE)
};

// Sets NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=`subsys` and a temporary NCCL_DEBUG_FILE, then
// creates and destroys a one-rank communicator. The caller sets the plugin's variables first.
inline NcclRun runOneRankNccl(const char* subsys) {
  struct UniqueId {
    char internal[128];
  };
  using GetUniqueId = int (*)(UniqueId*);
  using CommInitRank = int (*)(void**, int, UniqueId, int);
  using CommDestroy = int (*)(void*);
  using GetLastError = const char* (*)(void*);
  NcclRun run;
  const char* env = getenv("WEFT_NCCL_LIBRARY");
  const std::string library = env != nullptr ? env : "/usr/local/cuda/lib/libnccl.so.2";
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    run.skipped = "no CUDA driver (libcuda.so.1): NCCL loads plugins only while creating a communicator, "
                  "which needs a GPU";
    return run;
  }
  void* nccl = dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (nccl == nullptr) {
    run.skipped = "NCCL not found at " + library + " (set WEFT_NCCL_LIBRARY)";
    return run;
  }
  char logPath[] = "/tmp/weft-nccl-log-XXXXXX";
  int fd = mkstemp(logPath);
  if (fd < 0) {
    run.error = "mkstemp failed";
    return run;
  }
  close(fd);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", subsys, 1);
  setenv("NCCL_DEBUG_FILE", logPath, 1);
  auto getId = reinterpret_cast<GetUniqueId>(dlsym(nccl, "ncclGetUniqueId"));
  auto init = reinterpret_cast<CommInitRank>(dlsym(nccl, "ncclCommInitRank"));
  auto destroy = reinterpret_cast<CommDestroy>(dlsym(nccl, "ncclCommDestroy"));
  auto lastError = reinterpret_cast<GetLastError>(dlsym(nccl, "ncclGetLastError"));
  if (!getId || !init || !destroy || !lastError) {
    run.error = "NCCL lacks ncclGetUniqueId/ncclCommInitRank/ncclCommDestroy/ncclGetLastError";
  } else {
    UniqueId id;
    void* comm = nullptr;
    int rc = getId(&id);
    if (rc == 0) rc = init(&comm, 1, id, 0);
    if (rc == 1) {
      run.skipped = std::string("NCCL could not use CUDA here: ") + lastError(nullptr);
    } else if (rc != 0) {
      run.error = lastError(nullptr);
    } else if (destroy(comm) != 0) {
      run.error = std::string("ncclCommDestroy: ") + lastError(nullptr);
    }
  }
  std::ifstream f(logPath);
  std::stringstream log;
  log << f.rdbuf();
  run.log = log.str();
  unlink(logPath);
  return run;
}

}  // namespace weft::test
