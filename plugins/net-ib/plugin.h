// The IB plugin's operations in the newest form; abi.cc builds the exported tables from them
// (plugins/common/abi_tables.h). Every function here is called inside guard() (no exception
// escapes) and returns a weft_result_t, logging a WARN where a failure is first detected.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/net.h"

namespace weft::ib {

// Discovers devices on the first call (one INFO line); later calls reuse them. Zero devices
// is not an error: devices() then says 0 and the host moves on.
weft_result_t init(weft_debug_logger_t logger);
weft_result_t devices(int* ndev);
weft_result_t getProperties(int dev, weft_net_properties_v11_t* props);
weft_result_t listen(int dev, void* handle, void** listenComm);
weft_result_t connect(int dev, void* handle, void** sendComm);
weft_result_t accept(void* listenComm, void** recvComm);
weft_result_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
weft_result_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle);
weft_result_t deregMr(void* comm, void* mhandle);
weft_result_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request);
weft_result_t irecv(void* recvComm, int n, void** data, const size_t* sizes, const int* tags, void** mhandles,
                    void** request);
weft_result_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
weft_result_t test(void* request, int* done, int* sizes);
weft_result_t closeSend(void* sendComm);
weft_result_t closeRecv(void* recvComm);
weft_result_t closeListen(void* listenComm);

}  // namespace weft::ib
