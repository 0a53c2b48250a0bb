// Collectives on GPU buffers: the communicator's channels as device connections (each receive
// FIFO in its receiver's GPU memory, written by the sender through CUDA IPC: NCCL's P2P write),
// and each collective enqueued on the caller's stream as one launch of weft's collective kernel
// (kernel.h) over the same schedules the host path runs (core/coll/run.h's planLanes).
//
// Sends and receives (and alltoall, made of them) take pairwise connections made at the first
// operation between two ranks, and one launch per group and stream.
//
// Ranks on other hosts: NCCL's NET transport, the kernel's FIFO in pinned host memory and a
// proxy thread moving its slots through the net plugin (proxy.h).
//
// Where P2P is disabled (NCCL_P2P_DISABLE=1, NCCL_P2P_LEVEL=LOC), a rank's FIFOs live in a
// /dev/shm segment registered with CUDA as mapped host memory instead (NCCL's SHM/direct/direct):
// the same layout, the GPUs writing into it directly.
//
// Not yet: LL128 (Simple runs instead, said in one INFO line), and the mismatch checks the host
// path makes on every step (a connection to another host checks each slot's size).
#pragma once

#include <cstddef>
#include <vector>

#include "core/base/status.h"
#include "core/coll/run.h"
#include "core/runtime/comm.h"

namespace weft::device {

// Whether a collective on these buffers runs on the device path: both GPU memory (true), or both
// host memory with no stream (false). A stream without CUDA in the process, host buffers with a
// stream, or one buffer of each kind are errors that say which.
Result<bool> usesDevice(const char* what, const void* send, const void* recv, size_t count, const void* stream);

// Enqueues collective `a` (checked, its algorithm chosen) on `stream` (null: the default stream)
// and returns: the kernel runs when the stream reaches it. The first call on a communicator
// connects its channels on the GPU, a collective call of every rank.
Status enqueueCollective(runtime::Comm& comm, coll::CollArgs a, void* stream);

// One send or receive on GPU memory (weft_send / weft_recv, and alltoall through them).
struct P2pOp {
  runtime::Comm* comm = nullptr;
  bool send = false;
  void* buf = nullptr;
  size_t bytes = 0;
  int peer = -1;
  void* stream = nullptr;
  int cudaDevice = 0;
};

// Enqueues `ops` (a group's, or one call's) on their streams: one launch per communicator and
// stream, one CTA per peer and direction running that peer's operations in order. The first
// operation between two ranks connects them (a receive FIFO in each one's GPU memory, shared by
// CUDA IPC): both have one with the other in matching groups, as NCCL requires.
Status enqueueP2p(const std::vector<P2pOp>& ops);

// The calling thread's current CUDA device (0 where CUDA is not loaded).
int currentDevice();

// A group's device collectives (weft_group_end), in call order: first every communicator among
// them without device connections is connected, all at once (a thread each, with its task's
// device current), since one thread may drive several ranks of one communicator (NCCL's
// one-process-many-GPUs pattern); then each collective is enqueued with its device current.
Status enqueueGroup(const std::vector<coll::CollTask>& tasks);

}  // namespace weft::device
