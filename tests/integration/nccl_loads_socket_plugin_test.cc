// weft's socket plugin inside the real NCCL 2.28.9: NCCL loads net plugins when it creates a
// communicator, and that needs a CUDA driver and a GPU. On a machine without them this test
// skips with that reason; where they exist it creates a one-rank communicator with
// NCCL_NET_PLUGIN pointing at libnccl-net-socket.so and checks NCCL's log for the plugin, the
// ABI version it took (v11) and its use as the network.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

const char* ncclLibrary() {
  const char* env = getenv("WEFT_NCCL_LIBRARY");
  return env != nullptr ? env : "/usr/local/cuda/lib/libnccl.so.2";
}

// NCCL's public C API, declared here so the test needs no NCCL headers at build time.
struct UniqueId {
  char internal[128];
};
using GetUniqueId = int (*)(UniqueId*);
using CommInitRank = int (*)(void**, int, UniqueId, int);
using CommDestroy = int (*)(void*);
using GetLastError = const char* (*)(void*);

TEST(NcclLoadsWeftSocketPlugin, OneRankCommunicatorUsesIt) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (cuda == nullptr) {
    GTEST_SKIP() << "no CUDA driver (libcuda.so.1): NCCL loads net plugins only while creating a communicator, "
                    "which needs a GPU";
  }
  void* nccl = dlopen(ncclLibrary(), RTLD_NOW | RTLD_GLOBAL);
  if (nccl == nullptr) GTEST_SKIP() << "NCCL not found at " << ncclLibrary() << " (set WEFT_NCCL_LIBRARY)";
  const std::string plugin = std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-net-socket.so";
  char logPath[] = "/tmp/weft-nccl-log-XXXXXX";
  int fd = mkstemp(logPath);
  ASSERT_GE(fd, 0);
  close(fd);
  setenv("NCCL_NET_PLUGIN", plugin.c_str(), 1);
  setenv("NCCL_NET", "Socket", 1);
  setenv("NCCL_SOCKET_IFNAME", "=lo", 1);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1);
  setenv("NCCL_DEBUG_FILE", logPath, 1);

  auto getId = reinterpret_cast<GetUniqueId>(dlsym(nccl, "ncclGetUniqueId"));
  auto init = reinterpret_cast<CommInitRank>(dlsym(nccl, "ncclCommInitRank"));
  auto destroy = reinterpret_cast<CommDestroy>(dlsym(nccl, "ncclCommDestroy"));
  auto lastError = reinterpret_cast<GetLastError>(dlsym(nccl, "ncclGetLastError"));
  ASSERT_TRUE(getId && init && destroy && lastError);
  UniqueId id;
  ASSERT_EQ(getId(&id), 0) << lastError(nullptr);
  void* comm = nullptr;
  int rc = init(&comm, 1, id, 0);
  if (rc == 1) GTEST_SKIP() << "NCCL could not use CUDA here: " << lastError(nullptr);
  ASSERT_EQ(rc, 0) << lastError(nullptr);
  EXPECT_EQ(destroy(comm), 0);

  std::ifstream f(logPath);
  std::stringstream log;
  log << f.rdbuf();
  unlink(logPath);
  EXPECT_NE(log.str().find("Loaded net plugin Socket (v11)"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("helper threads x"), std::string::npos) << "weft's plugin did not log through NCCL";
  EXPECT_NE(log.str().find("Using network Socket"), std::string::npos) << log.str();
}

}  // namespace
