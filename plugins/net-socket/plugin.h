// The socket plugin's operations in the newest form; abi.cc adapts them to each exported table.
// Every function here is called inside guard() (no exception escapes) and returns a
// weft_result_t, logging a WARN where a failure is first detected.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugins/net-socket/config.h"
#include "weft/net.h"

namespace weft::socket {

// Per-host-context settings (a v11 init's ctx; older versions share one).
struct Context {
  uint32_t magic;
  Config config;
};

// Discovers interfaces on the first call; every call re-reads the thread/socket settings.
weft_result_t init(weft_debug_logger_t logger, Config* config);
// The settings of the latest init, for the versions whose calls carry no context.
Config latestConfig();
weft_result_t devices(int* ndev);
weft_result_t getProperties(int dev, weft_net_properties_v11_t* props);
weft_result_t listen(int dev, void* handle, void** listenComm);
weft_result_t connect(const Config& config, int dev, void* handle, void** sendComm);
weft_result_t accept(void* listenComm, void** recvComm);
weft_result_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
weft_result_t deregMr(void* comm, void* mhandle);
weft_result_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request);
weft_result_t irecv(void* recvComm, int n, void** data, const size_t* sizes, const int* tags, void** mhandles,
                    void** request);
weft_result_t test(void* request, int* done, int* sizes);
weft_result_t closeSend(void* sendComm);
weft_result_t closeRecv(void* recvComm);
weft_result_t closeListen(void* listenComm);

// Runs `body`, turning any exception into an error code with a WARN naming `call`.
template <typename F>
weft_result_t guard(const char* call, F&& body) noexcept;

}  // namespace weft::socket

#include "plugins/net-socket/guard.inc"
