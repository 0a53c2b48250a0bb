// The first failure of a comm, shared by the caller's thread and the comm's helper threads.
// Once set it stays: every later call on the comm returns the same code.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "weft/net.h"

namespace weft::socket {

class CommError {
 public:
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  weft_result_t code() const { return failed() ? code_ : weftSuccess; }
  // Records the failure (the first one wins) and logs it once. Returns the recorded code.
  weft_result_t fail(weft_result_t code, const std::string& message);

 private:
  std::mutex mutex_;
  std::atomic<bool> failed_{false};
  weft_result_t code_ = weftSuccess;
};

}  // namespace weft::socket
