#include "comm_runner.h"

#include <pthread.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

namespace weft_torch {
namespace {

std::string rankText(int rank, int size) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(size);
}

std::string lastError(weft_result_t r) {
  std::string text = weft_last_error();
  if (text.empty()) text = weft_result_string(r);
  return text;
}

void nameThread(std::thread& t, const char* name) {
  // Best effort: the names only help whoever looks at the process with top or gdb.
  (void)pthread_setname_np(t.native_handle(), name);
}

}  // namespace

std::shared_ptr<CommRunner> CommRunner::create(const weft_unique_id_t& id, int rank, int size,
                                               std::chrono::milliseconds timeout) {
  std::shared_ptr<CommRunner> runner(new CommRunner(rank, size));
  runner->initComm(id, timeout);
  runner->worker_ = std::thread([self = runner] { self->workerLoop(); });
  runner->watchdog_ = std::thread([self = runner] { self->watchdogLoop(); });
  nameThread(runner->worker_, "weft-torch");
  nameThread(runner->watchdog_, "weft-torch-wd");
  return runner;
}

CommRunner::~CommRunner() {
  // The threads hold references: the last one to go may be one of them, which cannot join itself.
  for (std::thread* t : {&worker_, &watchdog_}) {
    if (!t->joinable()) continue;
    if (t->get_id() == std::this_thread::get_id()) {
      t->detach();
    } else {
      t->join();
    }
  }
  closeComm();
}

void CommRunner::initComm(const weft_unique_id_t& id, std::chrono::milliseconds timeout) {
  // A non-blocking init polled here, so that the process group's timeout bounds it (weft's own
  // limit, WEFT_INIT_TIMEOUT, may be longer) and the error names what went wrong.
  weft_config_t config = WEFT_CONFIG_INITIALIZER;
  config.blocking = 0;
  weft_comm_t* comm = nullptr;
  weft_result_t r = weft_comm_init_rank_config(&comm, size_, id, rank_, &config);
  std::string error;
  if (r == weftInProgress) {
    const Clock::time_point deadline = Clock::now() + timeout;
    auto nap = std::chrono::microseconds(50);
    weft_result_t state = weftInProgress;
    while ((r = weft_comm_get_async_error(comm, &state)) == weftSuccess && state == weftInProgress) {
      if (timeout.count() > 0 && Clock::now() >= deadline) break;
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(5000));  // fast when init is quick
    }
    if (r != weftSuccess) {
      error = lastError(r);
    } else if (state == weftInProgress) {
      error = "the other ranks did not all join within " + std::to_string(timeout.count()) +
              " ms (the process group's timeout)";
    } else if (state != weftSuccess) {
      (void)weft_comm_get_async_error(comm, &state);
      error = lastError(state);
    }
  } else if (r != weftSuccess) {
    error = lastError(r);
  }
  if (!error.empty()) {
    if (comm != nullptr) (void)weft_comm_abort(comm);
    throw std::runtime_error("weft: creating the communicator failed on " + rankText(rank_, size_) + ": " + error);
  }
  comm_ = comm;
}

void CommRunner::submit(Op op) {
  std::vector<Batch> refused;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (op.pointToPoint && acceptingLocked()) {
      if (held_.empty()) heldSince_ = Clock::now();
      held_.push_back(std::move(op));
      watchdogCv_.notify_one();  // it releases held ops after kPointToPointHold
      return;
    }
    releaseHeldLocked(refused);
    Batch batch;
    batch.push_back(std::move(op));
    enqueueLocked(std::move(batch), refused);
  }
  refuse(refused);
}

void CommRunner::submitBatch(std::vector<Op> ops) {
  std::vector<Batch> refused;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    releaseHeldLocked(refused);
    if (!ops.empty()) enqueueLocked(std::move(ops), refused);
  }
  refuse(refused);
}

void CommRunner::flush() {
  std::vector<Batch> refused;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    releaseHeldLocked(refused);
  }
  refuse(refused);
}

bool CommRunner::acceptingLocked() const { return !stopping_ && getpid() == ownerPid_; }

void CommRunner::releaseHeldLocked(std::vector<Batch>& refused) {
  if (held_.empty()) return;
  Batch batch;
  batch.swap(held_);
  enqueueLocked(std::move(batch), refused);
}

void CommRunner::enqueueLocked(Batch batch, std::vector<Batch>& refused) {
  if (!acceptingLocked()) {
    refused.push_back(std::move(batch));
    return;
  }
  queue_.push_back(std::move(batch));
  workerCv_.notify_one();
}

void CommRunner::refuse(std::vector<Batch>& refused) const {
  // Completion callbacks run without the lock: they may submit again (a hook chaining work).
  for (Batch& batch : refused) {
    const std::string error = "weft: the process group on " + rankText(rank_, size_) +
                              (getpid() != ownerPid_ ? " belongs to the process that forked this one; "
                                                     : " was shut down; ") +
                              describe(batch) + " was not run";
    completeAll(batch, nullptr, &error);
  }
}

std::string CommRunner::describe(const Batch& batch) const {
  if (batch.size() == 1) return batch.front().name;
  std::string text = std::to_string(batch.size()) + " operations (";
  for (size_t i = 0; i < batch.size() && i < 4; ++i) text += (i > 0 ? ", " : "") + batch[i].name;
  return text + (batch.size() > 4 ? ", ...)" : ")");
}

void CommRunner::completeAll(Batch& batch, weft_comm_t* comm, const std::string* error) {
  for (Op& op : batch)
    if (op.complete) op.complete(comm, error);
}

void CommRunner::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    workerCv_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) break;  // stopping, and everything ran
    Batch batch = std::move(queue_.front());
    queue_.pop_front();
    if (comm_ == nullptr) {
      const std::string error = brokenReason_ + "; " + describe(batch) + " was not run";
      lock.unlock();
      completeAll(batch, nullptr, &error);
      lock.lock();
      continue;
    }
    std::chrono::milliseconds timeout{0};
    for (const Op& op : batch)
      if (op.timeout.count() > 0 && (timeout.count() == 0 || op.timeout < timeout)) timeout = op.timeout;
    running_ = true;
    timedOut_ = false;
    runningName_ = describe(batch);
    runningTimeout_ = timeout;
    runningDeadline_ = timeout.count() > 0 ? Clock::now() + timeout : Clock::time_point::max();
    weft_comm_t* comm = comm_;
    watchdogCv_.notify_one();
    lock.unlock();

    std::string error = runBatch(comm, batch);

    lock.lock();
    running_ = false;
    if (timedOut_) {
      error = brokenReason_;
      comm = nullptr;  // freed by the watchdog's abort
    }
    lock.unlock();
    completeAll(batch, comm, error.empty() ? nullptr : &error);
    lock.lock();
  }
  workerDone_ = true;
  watchdogCv_.notify_one();
  lock.unlock();
  closeComm();
}

std::string CommRunner::runBatch(weft_comm_t* comm, Batch& batch) {
  std::string failure;
  weft_result_t r = weft_group_start();
  if (r != weftSuccess) return "weft: " + describe(batch) + " failed on " + rankText(rank_, size_) + ": " + lastError(r);
  for (Op& op : batch) {
    try {
      r = op.issue(comm);
      if (r != weftSuccess) failure = op.name + " failed on " + rankText(rank_, size_) + ": " + lastError(r);
    } catch (const std::exception& e) {
      failure = op.name + " failed on " + rankText(rank_, size_) + ": " + e.what();
    }
    if (!failure.empty()) break;
  }
  // The group is always closed: the calls queued before a failure run (or fail) together.
  r = weft_group_end();
  if (failure.empty() && r != weftSuccess)
    failure = describe(batch) + " failed on " + rankText(rank_, size_) + ": " + lastError(r);
  return failure.empty() ? failure : "weft: " + failure;
}

void CommRunner::watchdogLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!workerDone_) {
    Clock::time_point wake = Clock::time_point::max();
    if (running_ && !timedOut_) wake = runningDeadline_;
    if (!held_.empty()) wake = std::min(wake, heldSince_ + kPointToPointHold);
    if (wake == Clock::time_point::max()) {
      watchdogCv_.wait(lock);
    } else {
      watchdogCv_.wait_until(lock, wake);
    }
    const Clock::time_point now = Clock::now();
    if (!held_.empty() && now >= heldSince_ + kPointToPointHold) {
      std::vector<Batch> refused;
      releaseHeldLocked(refused);
      if (!refused.empty()) {
        lock.unlock();
        refuse(refused);
        lock.lock();
      }
    }
    if (!running_) continue;
    if (!timedOut_ && now >= runningDeadline_ && comm_ != nullptr) {
      // weft_comm_abort ends the worker's blocked call within a second and tells the peers.
      timedOut_ = true;
      brokenReason_ = "weft: " + runningName_ + " on " + rankText(rank_, size_) + " did not complete within " +
                      std::to_string(runningTimeout_.count()) +
                      " ms (the process group's timeout); the communicator was aborted and every later "
                      "operation of this process group fails";
      weft_comm_t* comm = comm_;
      comm_ = nullptr;
      lock.unlock();
      (void)weft_comm_abort(comm);
      lock.lock();
    }
  }
}

void CommRunner::shutdown() {
  if (getpid() != ownerPid_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) {
      std::vector<Batch> none;  // still accepting: the held ops join the queue the worker drains
      releaseHeldLocked(none);
      stopping_ = true;
      workerCv_.notify_all();
      watchdogCv_.notify_all();
    }
  }
  // The worker runs what is queued, then closes the communicator and ends.
  if (worker_.get_id() == std::this_thread::get_id()) return;
  std::lock_guard<std::mutex> joining(joinMutex_);
  for (std::thread* t : {&worker_, &watchdog_})
    if (t->joinable()) t->join();
}

void CommRunner::closeComm() {
  weft_comm_t* comm = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::swap(comm, comm_);
  }
  if (comm == nullptr) return;
  weft_result_t state = weftSuccess;
  if (weft_comm_get_async_error(comm, &state) == weftSuccess && state == weftSuccess) {
    (void)weft_comm_destroy(comm);  // says goodbye to the peers: they do not see a failure
  } else {
    (void)weft_comm_abort(comm);
  }
}

}  // namespace weft_torch
