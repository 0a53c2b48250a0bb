// Connected comms and their requests. One control socket carries message headers (and the
// payload of small messages, or of every message when there are no data sockets); large
// messages are striped over the data sockets by helper threads. The host drives a comm from
// one thread at a time; helper threads touch only their tasks and the shared CommError.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "plugins/net-socket/comm_error.h"
#include "plugins/common/fd.h"
#include "plugins/net-socket/wire.h"
#include "plugins/net-socket/worker.h"

namespace weft::socket {

using netplugin::Fd;

inline constexpr int kMaxRecvs = 8;        // receives grouped in one irecv
inline constexpr int kMaxInFlight = WEFT_NET_MAX_REQUESTS;

// A registered host buffer (regMr). The socket plugin needs no registration; it checks that a
// buffer handed to isend/irecv lies inside the region its handle names.
struct MemRegion {
  char* base;
  size_t size;
};

enum class Kind : uint32_t { kSend = 0x53454e44, kRecv = 0x52454356, kListen = 0x4c495354, kFreed = 0 };

class Comm;
struct Request {
  Kind kind;
  Comm* owner;  // test() has only the request: this finds the comm
  std::atomic<int> pendingChunks{0};  // striped chunks not yet moved by helper threads
};

// State both directions share: sockets, helper threads, registrations, the error.
class Comm {
 public:
  Comm(Kind kind, Fd ctrl, std::vector<Fd> data, int nThreads, std::string peer);
  virtual ~Comm();  // stops helpers before the sockets close
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  Kind kind() const { return kind_; }
  weft_result_t regMr(void* data, size_t size, int type, void** mhandle);
  weft_result_t deregMr(void* mhandle);
  // Invalid argument unless mhandle is null or one of ours covering [data, data+size).
  weft_result_t checkBuffer(const char* call, const void* data, size_t size, void* mhandle) const;

 protected:
  // Queues chunk `s` of a striped message on the helper that owns data socket s.
  void enqueueStripe(char* data, uint64_t size, std::atomic<int>* pending);
  int dataSockets() const { return static_cast<int>(slotOfSocket_.size()); }
  bool isInline(uint64_t size) const { return dataSockets() == 0 || size <= kInlineBytes; }

  Kind kind_;
  Fd ctrl_;
  std::string peer_;
  std::shared_ptr<CommError> error_ = std::make_shared<CommError>();
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::pair<int, int>> slotOfSocket_;  // data socket → (worker, slot)
  std::unordered_set<MemRegion*> regions_;
};

struct SendRequest : Request {
  MessageHeader header;
  char* data;
  uint64_t size;
  uint64_t ctrlTotal;  // header + inline payload
  uint64_t ctrlDone = 0;
};

class SendComm final : public Comm {
 public:
  SendComm(Fd ctrl, std::vector<Fd> data, int nThreads, std::string peer)
      : Comm(Kind::kSend, std::move(ctrl), std::move(data), nThreads, std::move(peer)) {}
  ~SendComm() override;
  weft_result_t isend(void* data, size_t size, int tag, void* mhandle, void** request);
  weft_result_t test(SendRequest* r, int* done, int* sizes);

 private:
  weft_result_t progress();
  bool writable();
  std::deque<SendRequest*> queue_;           // control bytes not all written yet, in order
  bool ctrlFull_ = false;                    // the last write found the socket buffer full
  std::unordered_set<SendRequest*> live_;    // every request not yet reported done
};

struct RecvSlot {
  char* data;
  uint64_t capacity;
  int tag;
  int64_t received = -1;  // the message size once matched
};

struct RecvRequest : Request {
  int n = 0;
  RecvSlot slots[kMaxRecvs];
  int unmatched = 0;      // slots still waiting for their header
  int inlinePending = 0;  // 1 while the control socket fills one of its slots
};

class RecvComm final : public Comm {
 public:
  RecvComm(Fd ctrl, std::vector<Fd> data, int nThreads, std::string peer);
  ~RecvComm() override;
  weft_result_t irecv(int n, void** data, const size_t* sizes, const int* tags, void** mhandles, void** request);
  weft_result_t test(RecvRequest* r, int* done, int* sizes);

 private:
  weft_result_t progress();
  weft_result_t readPayload(bool& blocked);
  weft_result_t readHeader(bool& blocked);
  weft_result_t fillStage(bool& blocked);
  // One non-blocking recv on the control socket; EOF and errors are handled here.
  weft_result_t readControl(char* at, size_t want, size_t& got, bool& blocked);
  weft_result_t match(const MessageHeader& h);
  weft_result_t peerGone();

  std::deque<RecvRequest*> posted_;       // requests with unmatched slots, in posting order
  std::unordered_set<RecvRequest*> live_;
  std::vector<char> stage_;               // bytes read from the control socket, not yet used
  size_t stageBegin_ = 0, stageEnd_ = 0;
  RecvRequest* payloadReq_ = nullptr;     // the request whose inline payload is being read
  char* payloadAt_ = nullptr;
  uint64_t payloadLeft_ = 0;
  bool peerClosed_ = false;
};

}  // namespace weft::socket
