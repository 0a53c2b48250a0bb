// Connection setup without blocking. listen() opens an endpoint and posts receives for
// connection requests; connect() sends one from a fresh endpoint and returns "not yet" (a null
// comm) until the answer arrives; accept() answers one request per call from a fresh endpoint,
// which becomes the receive comm. A request without the listener's token, or anything that is
// not a weft hello, is dropped with a WARN and does not disturb the others.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "plugins/net-ofi/comm.h"
#include "plugins/net-ofi/devices.h"
#include "plugins/net-ofi/wire.h"

namespace weft::ofi {

// A connect() in progress, kept in the host's handle between calls.
struct Connecting final : OpOwner {
  std::shared_ptr<Domain> domain;
  std::unique_ptr<Endpoint> ep;
  fi_addr_t listener = FI_ADDR_UNSPEC;
  TagLayout tags;
  bool registerAlways = false;
  std::chrono::seconds timeout{60};  // for the listener to take the request
  Hello request{};
  Hello answer{};
  Op sendOp, recvOp;
  bool requestPosted = false, sent = false, answered = false;
  size_t answerBytes = 0;
  std::chrono::steady_clock::time_point startedAt = std::chrono::steady_clock::now();
  weft_result_t error = weftSuccess;
  std::string errorText;

  ~Connecting() { ep.reset(); }  // before the hellos libfabric may still write into
  void opDone(int slot, size_t length) override;
  void opFailed(int slot, int err, const std::string& text) override;
};

// Advances connect() for `handle`: the first call starts it, the last one returns the comm.
weft_result_t connectStep(Device& device, Handle* handle, const Config& config, SendComm** comm);
// Frees an unfinished connect's state.
void abandonConnect(Handle* handle);

class Listener final : public OpOwner {
 public:
  static weft_result_t open(Device& device, bool registerAlways, Handle* handle, Listener** out);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  Kind kind() const { return kind_; }
  weft_result_t acceptStep(RecvComm** comm);

  void opDone(int slot, size_t length) override;
  void opFailed(int slot, int err, const std::string& text) override;

 private:
  static constexpr int kPosted = 4;  // connection requests the listener can hold at once
  Listener(std::shared_ptr<Domain> domain, std::unique_ptr<Endpoint> ep, const TagLayout& tags, bool registerAlways);
  weft_result_t post(int slot);
  // Answers one valid request (a new receive comm, queued until its answer is sent), or drops
  // an invalid one with a WARN.
  weft_result_t handle(int slot, size_t bytes);
  // Hands out the oldest accepted comm whose answer has left; drops those whose answer failed.
  weft_result_t finishAnswers(RecvComm** comm);

  Kind kind_ = Kind::kListen;
  std::shared_ptr<Domain> domain_;
  std::unique_ptr<Endpoint> ep_;
  TagLayout tags_;
  bool registerAlways_;
  uint64_t token_;
  Hello slots_[kPosted] = {};
  Op ops_[kPosted];
  std::deque<std::pair<int, size_t>> arrived_;  // (slot, bytes) of completed receives
  std::deque<int> repost_;                      // slots whose receive failed
  std::deque<std::unique_ptr<RecvComm>> answering_;  // accepted, answer not yet sent
};

}  // namespace weft::ofi
