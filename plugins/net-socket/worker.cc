#include "plugins/net-socket/worker.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "plugins/net-socket/log.h"

namespace weft::socket {

weft_result_t CommError::fail(weft_result_t code, const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_.load(std::memory_order_relaxed)) {
    code_ = code;
    failed_.store(true, std::memory_order_release);
    SOCK_WARN("NET/Socket: %s", message.c_str());
  }
  return code_;
}

Worker::Worker(bool sending, std::shared_ptr<CommError> error, std::string peer)
    : sending_(sending), error_(std::move(error)), peer_(std::move(peer)), wake_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

Worker::~Worker() {
  if (thread_.joinable()) {
    thread_.request_stop();
    uint64_t one = 1;
    (void)!write(wake_.get(), &one, sizeof(one));
    thread_.join();
  }
}

int Worker::addSocket(Fd fd) {
  slots_.push_back(std::make_unique<Slot>());
  slots_.back()->fd = std::move(fd);
  return static_cast<int>(slots_.size()) - 1;
}

void Worker::start() {
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

void Worker::enqueue(int slot, Task task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    slots_[static_cast<size_t>(slot)]->tasks.push_back(task);
  }
  uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof(one));
}

bool Worker::progress(Slot& slot) {
  // A socket that said EAGAIN waits for poll(): writing or reading a few bytes at a time
  // costs more than it moves (poll reports a socket writable only with room to spare).
  if (slot.blocked) return false;
  Task* task = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (slot.tasks.empty()) return false;
    task = &slot.tasks.front();  // deque references survive push_back by the caller
  }
  size_t want = static_cast<size_t>(task->length - task->done);
  char* at = task->data + task->done;
  ssize_t n = sending_ ? ::send(slot.fd.get(), at, want, MSG_NOSIGNAL | MSG_DONTWAIT)
                       : ::recv(slot.fd.get(), at, want, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) slot.blocked = true;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
    error_->fail(weftRemoteError, std::string(sending_ ? "send to " : "receive from ") + peer_ +
                                      " on a data socket: " + std::strerror(errno));
    return false;
  }
  if (n == 0 && !sending_) {
    error_->fail(weftRemoteError, "connection closed by peer " + peer_ + " during a receive");
    return false;
  }
  task->done += static_cast<uint64_t>(n);
  if (task->done == task->length) {
    std::atomic<int>* pending = task->pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slot.tasks.pop_front();
    }
    pending->fetch_sub(1, std::memory_order_release);
  }
  return true;
}

void Worker::waitForWork() {
  std::vector<pollfd> fds;
  std::vector<Slot*> polled;
  fds.push_back({wake_.get(), POLLIN, 0});
  if (!error_->failed()) {  // a failed comm moves nothing more: wait for stop only
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& s : slots_) {
      if (s->tasks.empty()) continue;
      fds.push_back({s->fd.get(), static_cast<short>(sending_ ? POLLOUT : POLLIN), 0});
      polled.push_back(s.get());
    }
  }
  if (poll(fds.data(), fds.size(), -1) <= 0) return;
  for (size_t i = 0; i < polled.size(); ++i)
    if (fds[i + 1].revents != 0) polled[i]->blocked = false;  // ready, or an error to report
  if (fds[0].revents != 0) {
    uint64_t drained;
    (void)!read(wake_.get(), &drained, sizeof(drained));
  }
}

void Worker::run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    bool moved = false;
    for (auto& s : slots_) moved = progress(*s) || moved;
    if (!moved) waitForWork();
  }
}

}  // namespace weft::socket
