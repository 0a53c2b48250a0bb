// Runs collective schedules (schedule.h) on a communicator's ring connections, host memory: every
// channel's steps advance together, one slot (NCCL_BUFFSIZE/8) at a time, the reduction fused
// with the copy out of the receive slot. The mover of the host path; CUDA kernels will run the
// same schedules.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/base/status.h"
#include "core/config/values.h"
#include "core/coll/reduce.h"
#include "core/coll/schedule.h"
#include "core/runtime/comm.h"

namespace weft::coll {

struct CollArgs {
  Coll coll = Coll::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  // the API's count: per rank for allgather (sendcount) and reduce_scatter (recvcount)
  weft_datatype_t type = weftInt8;
  RedOp op{};        // reductions only
  int userOp = -1;   // the caller's weft_redop_t (reductions), for the signature check; -1: none
  int root = 0;      // broadcast, reduce
  config::Algo algo = config::Algo::kRing;  // kRing or kTree (AllReduce), see algorithm.h
  bool doubling = false;  // AllReduce by recursive doubling (CPU endpoints, algorithm.h); algo is then unused
  config::Proto proto = config::Proto::kSimple;  // what NCCL would use (logged); host memory moves Simple
  int channels = 0;  // channel budget (NCCL's nMaxChannels); 0: channelsFor
  uint64_t seq = 0;  // the communicator's count of collectives called, this one included (0: unnumbered)
};

// How many channels a collective of `bytes` uses: one per 512 KiB of traffic, at most the
// communicator's (a documented stand-in until the tuning model picks channels as NCCL does).
int channelsFor(const runtime::Comm& comm, size_t bytes);

// One lane of one channel of this rank's part of a collective: schedule.h's steps and peers.
struct PlannedLane {
  int channel = 0;
  Lane lane;
};
// The lanes of collective `a` on `comm`, chunked for slots of `slotBytes` data (rings in chunks of
// four slots, unless `oneStepChunks`: LL moves a chunk per slot), over the channels the budget
// gives; *nParts: how many channels the buffer was cut over. The host mover runs these on its
// connections, the device path (core/device/comm_device.h) converts them for the kernel.
std::vector<PlannedLane> planLanes(const runtime::Comm& comm, const CollArgs& a, size_t slotBytes, bool oneStepChunks,
                                   size_t* nParts);
// NCCL's TUNING line for a collective cut over `nParts` channels (rank 0 only).
void logTuning(const runtime::Comm& comm, const CollArgs& a, size_t nParts);

struct CollTask {
  runtime::Comm* comm = nullptr;
  CollArgs args;
  // GPU buffers (core/device): enqueued on `stream` at the group's end, with `cudaDevice` (the
  // caller's current device when it called) current.
  bool onDevice = false;
  void* stream = nullptr;
  int cudaDevice = 0;
};

// Runs collectives to completion, all at once: those of one communicator one after the other in
// the given order, those of different communicators (ranks of one process, or a group over
// several communicators) together. Errors break the communicator they happen on.
Status runCollectives(std::span<const CollTask> tasks);

}  // namespace weft::coll
