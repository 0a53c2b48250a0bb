// Connected comms and their data path over one RC queue pair each.
//
// The receiver tells the sender where to write: each irecv writes a FIFO entry (the buffers'
// addresses, rkeys, sizes and tags) into the sender's FIFO with an RDMA write, at slot
// k mod kMaxRequests for the k-th receive. The sender's isend waits for the entry of its next
// slot, picks the buffer with its tag, and writes its data there with RDMA_WRITE_WITH_IMM; the
// immediate names the receive slot and buffer, and the receive completion carries the length.
// The receiver posts one receive work request per buffer before it announces the buffers, so
// a write never finds the receive queue empty.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "plugins/net-ib/endpoint.h"
#include "plugins/net-ib/requests.h"

namespace weft::ib {

enum class Kind : uint32_t { kSend = 0x49534e44, kRecv = 0x49524356, kListen = 0x494c5354, kFreed = 0 };

// One receive slot's announcement, as the sender reads it. `seq` (k + 1 for the k-th receive)
// is last: an RDMA write lands in address order on every HCA NCCL supports, and NCCL's own FIFO
// relies on the same, so a matching seq means the rest of the entry is there.
struct FifoEntry {
  uint64_t addr[kMaxRecvs];
  uint64_t size[kMaxRecvs];
  uint32_t rkey[kMaxRecvs];
  int32_t tag[kMaxRecvs];
  int32_t n;
  uint32_t pad;
  uint64_t seq;
};

struct Registration {
  char* base;
  size_t size;
  MrPtr mr;
};

class Comm;
// What the host holds for an isend/irecv.
struct Request {
  Kind kind = Kind::kFreed;
  Comm* owner = nullptr;
  int slot = 0;
};

class Comm {
 public:
  virtual ~Comm();  // the QP and CQ go before the registrations' device
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  Kind kind() const { return kind_; }
  weft_result_t regMr(void* data, size_t size, int type, void** mhandle);
  weft_result_t regMrDmaBuf(void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle);
  weft_result_t deregMr(void* mhandle);
  weft_result_t test(Request* r, int* done, int* sizes);

 protected:
  Comm(Kind kind, std::unique_ptr<Endpoint> ep) : kind_(kind), ep_(std::move(ep)) {}
  // Reads the completion queue; the first failed completion fails the comm.
  weft_result_t poll();
  virtual weft_result_t onCompletion(const ibv_wc& wc) = 0;
  // Records the comm's first failure (logged once, here) and returns its code.
  weft_result_t fail(weft_result_t code, const std::string& message);
  // The registration `mhandle` names when it covers [data, data+size), else null (logged).
  Registration* registrationFor(const char* call, const void* data, size_t size, void* mhandle);
  weft_result_t keep(ibv_mr* mr, void* data, size_t size, const char* call, void** mhandle);
  Request* handOut(Kind kind, int slot);

  Kind kind_;
  std::unique_ptr<Endpoint> ep_;
  std::unordered_set<Registration*> regs_;
  RequestTable table_;
  std::array<Request, kMaxRequests> requests_{};
  weft_result_t error_ = weftSuccess;
};

class SendComm final : public Comm {
 public:
  // `fifo` is registered for remote writes; its rkey and address went to the receiver.
  SendComm(std::unique_ptr<Endpoint> ep, std::unique_ptr<FifoEntry[]> fifo, MrPtr fifoMr);
  ~SendComm() override;
  weft_result_t isend(void* data, size_t size, int tag, void* mhandle, void** request);

 private:
  weft_result_t onCompletion(const ibv_wc& wc) override;
  std::unique_ptr<FifoEntry[]> fifo_;
  MrPtr fifoMr_;
  uint64_t next_ = 0;  // receives consumed so far
  std::array<bool, kMaxRecvs> used_{};  // buffers of the current entry already written
};

class RecvComm final : public Comm {
 public:
  RecvComm(std::unique_ptr<Endpoint> ep, uint64_t remoteFifo, uint32_t remoteRkey);
  ~RecvComm() override;
  weft_result_t init();  // registers the local copies of the FIFO entries
  weft_result_t irecv(int n, void** data, const size_t* sizes, const int* tags, void** mhandles, void** request);

 private:
  weft_result_t onCompletion(const ibv_wc& wc) override;
  uint64_t remoteFifo_;
  uint32_t remoteRkey_;
  std::unique_ptr<FifoEntry[]> staging_;  // what each slot's FIFO write sends
  MrPtr stagingMr_;
};

// The immediate of a data write: receive slot and buffer.
inline uint32_t immFor(int slot, int index) { return static_cast<uint32_t>(slot * kMaxRecvs + index); }
// wr_id of a FIFO write: the slot with this bit set (sends and receives use the plain slot).
inline constexpr uint64_t kFifoWrBit = uint64_t{1} << 32;

}  // namespace weft::ib
