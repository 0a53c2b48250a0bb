// The engine under weft's PyTorch backend, free of PyTorch: one weft communicator, a worker
// thread that runs the process group's operations in the order they were submitted, and a
// watchdog that aborts the communicator when an operation outlives its timeout, so that no
// caller ever waits forever. It uses weft's C API only (weft/weft.h), as every face does.
//
// Errors are C++ exceptions (std::runtime_error) here rather than weft::Status: this code sits
// between a C ABI that returns codes and PyTorch, whose whole API reports errors by throwing.
#pragma once

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "weft/weft.h"

namespace weft_torch {

using Clock = std::chrono::steady_clock;

// One operation of the process group: the weft_* calls it makes, and what happens after.
struct Op {
  std::string name;  // "allreduce", "send to rank 2": for messages
  // Makes the weft calls. It runs between weft_group_start and weft_group_end (with the other
  // operations of its batch) and returns the first failure. It may throw.
  std::function<weft_result_t(weft_comm_t*)> issue;
  // Runs on the worker thread once the group has ended: error is null on success, else the
  // message of the failure; comm is the communicator issue() used, or null when it was aborted
  // or the op never ran. It must not throw.
  std::function<void(weft_comm_t* comm, const std::string* error)> complete;
  std::chrono::milliseconds timeout{0};  // 0: none
  // A send or receive outside a batch: held back until a partner can join it (see submit()).
  bool pointToPoint = false;
};

class CommRunner : public std::enable_shared_from_this<CommRunner> {
 public:
  // Joins rank `rank` of a `size`-rank communicator with unique id `id`, giving up after
  // `timeout` (the communicator is aborted then). Throws std::runtime_error naming the rank and
  // weft's reason. The worker and watchdog threads start once the communicator is up; each
  // holds a reference, so the runner lives until shutdown() has stopped them.
  static std::shared_ptr<CommRunner> create(const weft_unique_id_t& id, int rank, int size,
                                            std::chrono::milliseconds timeout);
  ~CommRunner();
  CommRunner(const CommRunner&) = delete;
  CommRunner& operator=(const CommRunner&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Runs `op` after every operation submitted before it. A point-to-point op is held back, so
  // that sends and receives posted one by one (isend, then irecv) run in one weft group and a
  // ring exchange cannot deadlock; held ops are released, together, by the next other submit,
  // by flush(), or after kPointToPointHold.
  void submit(Op op);
  // Runs `ops` in one weft group (batch_isend_irecv, coalescing), after what came before.
  void submitBatch(std::vector<Op> ops);
  // Releases the held point-to-point ops (a caller waits for one of them).
  void flush();
  // Runs what was submitted, stops the threads and frees the communicator (abort if it is
  // broken, else an orderly destroy that tells the peers). Later submits fail at once.
  // Idempotent; never throws. Called on the worker thread itself (a completion callback that
  // drops the last reference to the process group), it returns at once and the worker finishes
  // the queue and closes the communicator on its own.
  void shutdown();

  // How long a point-to-point op waits for a partner before it runs alone.
  static constexpr std::chrono::milliseconds kPointToPointHold{100};

 private:
  using Batch = std::vector<Op>;

  CommRunner(int rank, int size) : rank_(rank), size_(size) {}
  void initComm(const weft_unique_id_t& id, std::chrono::milliseconds timeout);
  void workerLoop();
  void watchdogLoop();
  // Runs one batch on `comm`: empty on success, else the failure's message.
  std::string runBatch(weft_comm_t* comm, Batch& batch);
  bool acceptingLocked() const;
  // Moves the held ops (or `batch`) to the queue, or to `refused` when no longer accepting.
  void releaseHeldLocked(std::vector<Batch>& refused);
  void enqueueLocked(Batch batch, std::vector<Batch>& refused);
  // Fails the refused batches' ops (shut down, or in a forked child); called without the lock.
  void refuse(std::vector<Batch>& refused) const;
  std::string describe(const Batch& batch) const;
  static void completeAll(Batch& batch, weft_comm_t* comm, const std::string* error);
  void closeComm();

  const int rank_;
  const int size_;
  // A forked child has a copy of this object but none of its threads: there it refuses work
  // and shutdown() leaves everything alone (the parent owns the communicator).
  const pid_t ownerPid_ = getpid();
  weft_comm_t* comm_ = nullptr;  // null once aborted by the watchdog or closed

  std::mutex mutex_;
  std::condition_variable workerCv_;
  std::condition_variable watchdogCv_;
  std::deque<Batch> queue_;
  Batch held_;                      // point-to-point ops waiting for a partner
  Clock::time_point heldSince_;
  bool stopping_ = false;
  bool workerDone_ = false;
  std::mutex joinMutex_;            // shutdown() may be called from several threads
  std::string brokenReason_;        // set once the communicator was aborted: later ops fail

  // The batch on the worker, for the watchdog.
  bool running_ = false;
  Clock::time_point runningDeadline_;
  std::string runningName_;
  std::chrono::milliseconds runningTimeout_{0};
  bool timedOut_ = false;

  std::thread worker_;
  std::thread watchdog_;
};

}  // namespace weft_torch
