// Connected comms and their requests. Each comm owns one endpoint (its own completion queue),
// so test() on a comm reads only that comm's completions; the host drives a comm from one
// thread at a time. Data goes as tagged messages: the user's tag plus the connection's key.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_set>

#include "plugins/net-ofi/endpoint.h"
#include "plugins/net-ofi/wire.h"

namespace weft::ofi {

inline constexpr int kMaxRecvs = 8;  // receives grouped in one irecv (NCCL's IB plugin: 8)
inline constexpr int kMaxInFlight = WEFT_NET_MAX_REQUESTS;

enum class Kind : uint32_t { kSend = 0x4f534e44, kRecv = 0x4f524356, kListen = 0x4f4c5354, kFreed = 0 };

// A buffer registered by regMr. `mr` is set when the domain needs registrations (FI_MR_LOCAL)
// or WEFT_OFI_MR=always; otherwise the handle only records the range, which isend/irecv check.
struct Registration {
  char* base;
  size_t size;
  MrPtr mr;
  void* desc = nullptr;
};

class Comm;

// What an error completion (its positive errno) means for the host: the peer went away
// (remote error), the host posted a receive too small for its message (invalid usage), or
// something local failed (system error).
weft_result_t codeForCompletionError(int err);

// One isend or irecv: n operations (1 for a send), each completing on its own.
struct Request final : OpOwner {
  Kind kind;
  Comm* owner;
  int n = 1;
  int pending = 0;  // posted operations not yet completed
  int posted = 0;   // slots handed to libfabric (a receive may wait for room: -FI_EAGAIN)
  Op ops[kMaxRecvs];
  char* data[kMaxRecvs] = {};
  size_t capacity[kMaxRecvs] = {};
  uint64_t tags[kMaxRecvs] = {};
  void* desc[kMaxRecvs] = {};
  size_t sizes[kMaxRecvs] = {};
  MrPtr temporary[kMaxRecvs];  // registrations made for this request only

  Request(Kind k, Comm* c, int count);
  void opDone(int slot, size_t length) override;
  void opFailed(int slot, int err, const std::string& text) override;
};

// What both directions share: the endpoint, the peer, registrations, the sticky error.
class Comm : public OpOwner {
 public:
  Comm(Kind kind, std::shared_ptr<Domain> domain, std::unique_ptr<Endpoint> ep, fi_addr_t peer, uint32_t key,
       const TagLayout& tags, bool registerAlways);
  virtual ~Comm();  // closes registrations, then the endpoint, then frees requests
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  Kind kind() const { return kind_; }
  const std::string& peer() const { return peerName_; }
  weft_result_t regMr(void* data, size_t size, int type, void** mhandle);
  weft_result_t deregMr(void* mhandle);
  weft_result_t test(Request* r, int* done, int* sizes);
  // Records the comm's first failure (logged once, here) and returns its code; every later
  // call on the comm returns the same code.
  weft_result_t fail(weft_result_t code, const std::string& message);
  // A request's operation completed (or failed): the peer is doing its part.
  void noteCompletion() { ++completions_; }

  // Control operations (the accept answer, liveness probes) report here, by slot.
  enum ControlSlot { kAnswerSlot = 0, kProbeSendSlot = 1, kProbeRecvSlot = 2 };
  void opDone(int slot, size_t length) override;
  void opFailed(int slot, int err, const std::string& text) override;

 protected:
  // Invalid argument unless mhandle is null or one of ours covering [data, data+size).
  weft_result_t checkBuffer(const char* call, const void* data, size_t size, void* mhandle) const;
  // Sets r.desc[slot]: the registration's descriptor, or one registered for this request when
  // the domain needs it and the host passed none.
  weft_result_t describeBuffer(Request& r, int slot, void* mhandle, uint64_t access);
  // fi_mr_reg (and, for FI_MR_ENDPOINT domains, binding to this comm's endpoint).
  weft_result_t registerMemory(void* data, size_t size, uint64_t access, MrPtr* out);
  // Reads completions, then lets the direction post what waits for room, then probes a quiet
  // peer.
  weft_result_t progress();
  virtual weft_result_t postWaiting() { return weftSuccess; }
  bool tooBusy() const { return live_.size() >= static_cast<size_t>(kMaxInFlight); }
  // How long a probe may take before the peer counts as gone (see comm.cc).
  std::chrono::steady_clock::duration probeDeadline() const;
  // Adds a request to the live set (the first one after a quiet spell restarts the probe clock).
  void track(Request* r);
  // The provider refused to take a send now (-FI_EAGAIN). Over a connection to a dead peer rxm
  // refuses every new send while it reconnects, forever: with nothing in flight the host would
  // retry without end, so refusals count as waiting and the peer is probed as it is for a
  // request in flight.
  void noteRefused();
  // Liveness. A reliable-datagram receive is tied to no connection, so a receive from a dead
  // peer would wait forever; and a send may wait on the peer's part of a rendezvous. While
  // requests wait and nothing completes, a small message goes to the peer now and then (0.5 s,
  // doubling to 8 s). If the provider reports it undeliverable, or has not delivered it after
  // 10 s (rxm over tcp retries a refused connection forever), the peer is gone and the comm
  // fails. Each comm keeps one receive posted for its peer's probes.
  weft_result_t probePeer();

  Kind kind_;
  std::shared_ptr<Domain> domain_;  // outlives the endpoint and the registrations
  std::unique_ptr<Endpoint> ep_;
  fi_addr_t peer_;
  uint32_t key_;
  TagLayout tags_;
  bool registerAlways_;
  std::string peerName_;
  std::unordered_set<Registration*> regs_;
  std::unordered_set<Request*> live_;  // every request not yet reported done
  weft_result_t error_ = weftSuccess;
  bool controlDone_ = false;  // the accept answer's send completed

 private:
  using Clock = std::chrono::steady_clock;
  uint64_t probeOut_ = 0, probeIn_ = 0;
  Op probeSendOp_, probeRecvOp_;
  bool probeStarted_ = false, probeInFlight_ = false, probeRecvPosted_ = false;
  bool refused_ = false;  // the last send was refused and none was posted since
  uint64_t completions_ = 0, completionsSeen_ = 0;
  Clock::time_point quietSince_ = Clock::now();
  Clock::time_point probeSentAt_;  // the current probe's first attempt
  Clock::duration probeEvery_;
};

class SendComm final : public Comm {
 public:
  using Comm::Comm;
  weft_result_t isend(void* data, size_t size, int tag, void* mhandle, void** request);
};

class RecvComm final : public Comm {
 public:
  using Comm::Comm;
  // Sends the acceptor's answer to the connector.
  weft_result_t start(const Hello& answer);
  // Drives the answer: *sent once its send has completed. Until then the connector cannot
  // finish, and nothing else would drive this comm's endpoint (its progress is manual).
  weft_result_t answerSent(bool* sent);
  weft_result_t irecv(int n, void** data, const size_t* sizes, const int* tags, void** mhandles, void** request);

 private:
  weft_result_t postWaiting() override;
  std::deque<Request*> waiting_;  // requests with slots not yet posted, in posting order
  Hello answer_{};
  Op answerOp_;
  bool answerPosted_ = false;
};

}  // namespace weft::ofi
