// The shared-memory transport (NCCL's SHM): the receiver creates a segment in /dev/shm with the
// control words and NCCL_STEPS slots, the sender maps it by name, and the receiver unlinks it as
// soon as the sender has it mapped, so a killed job leaves nothing behind. Each rank also owns a
// bell (a futex word in its own small segment) that its local peers ring when they publish data
// or return credits while it sleeps: a rank waiting on many connections sleeps on one word.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/runtime/socket.h"
#include "core/runtime/transport.h"

namespace weft::runtime {

// A mapped /dev/shm segment; unlinked (if still linked) and unmapped on destruction.
class ShmSegment {
 public:
  static Result<ShmSegment> create(size_t size, const std::string& what);
  // Maps a peer's segment. `ownerRank` (when >= 0) is the rank that made it: a segment that is gone
  // means that rank failed before this one mapped it, which is then the error (naming it).
  static Result<ShmSegment> open(const std::string& name, size_t size, int ownerRank = -1);
  ShmSegment() = default;
  ~ShmSegment();
  ShmSegment(ShmSegment&& o) noexcept;
  ShmSegment& operator=(ShmSegment&& o) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  void unlink();

 private:
  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool linked_ = false;
};

// A rank's bell: ring() wakes it when it sleeps in wait().
struct Bell {
  std::atomic<uint32_t> seq;
  std::atomic<uint32_t> sleepers;
};

class BellSegment {
 public:
  static Result<BellSegment> create();
  static Result<BellSegment> open(const std::string& name);
  Bell* bell() const { return static_cast<Bell*>(seg_.data()); }
  const std::string& name() const { return seg_.name(); }
  void unlink() { seg_.unlink(); }

 private:
  ShmSegment seg_;
};

// Wakes the owner of `bell` if it sleeps. Cheap when it does not. The caller has just published
// something the sleeper waits for; ringBellAfterBarrier is for callers that published it with a
// sequentially consistent read-modify-write (a full barrier), which saves a second fence.
void ringBell(Bell* bell);
void ringBellAfterBarrier(Bell* bell);
// Sleeps on `bell` until rung or `timeout` passes, unless `stillIdle()` turns false after the
// sleeper has announced itself (no wake-up is ever lost).
template <typename F>
void sleepOnBell(Bell* bell, std::chrono::microseconds timeout, F&& stillIdle);
void futexWait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::microseconds timeout);

// The receiving end. create() makes the segment; the sender opens it by name(); finishSetup()
// waits for the sender to have mapped it and unlinks it.
class ShmRecv : public RecvConnection {
 public:
  // With `singleCopy`, the receiver checks once the sender is mapped whether it can read the
  // sender's memory (cross-memory attach, process_vm_readv) and then lets it postFrom().
  static Result<std::unique_ptr<ShmRecv>> create(size_t stepSize, Bell* peerBell, int peerRank, bool singleCopy = false);
  const std::string& name() const { return seg_.name(); }
  // True once the sender mapped the segment (then it is unlinked).
  Result<bool> finishSetup();

  size_t stepSize() const override { return stepSize_; }
  Result<const void*> peek(size_t* bytes, bool* last, int want) override;
  bool carriesLast() const override { return true; }
  Result<bool> copyOut(void* dst, const void* peeked, size_t bytes) override;
  bool peekedRemote() const override { return remoteAddr_ != 0; }
  Status release() override;
  void markFailed(int failedRank) override;
  bool carriesSignature() const override { return true; }
  uint32_t peekedTag() const override;
  std::optional<CollSignature> senderSignature(uint32_t tag) const override;

 private:
  ShmSegment seg_;
  size_t stepSize_ = 0;
  Bell* peerBell_ = nullptr;
  int peerRank_ = -1;
  bool singleCopy_ = false;
  uint64_t head_ = 0;
  uint64_t remoteAddr_ = 0;  // the peeked step's address in the sender, 0: it is in the slot
};

class ShmSend : public SendConnection {
 public:
  static Result<std::unique_ptr<ShmSend>> open(const std::string& name, size_t stepSize, Bell* peerBell, int peerRank);

  size_t stepSize() const override { return stepSize_; }
  Result<void*> acquire() override;
  Status post(size_t bytes, bool last) override;
  Result<bool> postFrom(const void* data, size_t bytes) override;
  Result<bool> drain() override;
  void markFailed(int failedRank) override;
  bool carriesSignature() const override { return true; }
  void sign(const CollSignature& sig) override;

 private:
  void publish(uint32_t size);

  ShmSegment seg_;
  size_t stepSize_ = 0;
  Bell* peerBell_ = nullptr;
  int peerRank_ = -1;
  uint64_t tail_ = 0;
  uint64_t headSeen_ = 0;  // the receiver's head when last read (it only grows)
  uint64_t fromUntil_ = 0;  // the tail after the last postFrom(): its memory is in use below it
  uint32_t tag_ = 0;        // the signature tag of the steps posted now (0: none, p2p)
  CollSignature signature_;  // the collective signed, kept in the control page after its first step
  bool signatureDue_ = false;
};

// ---- template definition -------------------------------------------------------------------

template <typename F>
void sleepOnBell(Bell* bell, std::chrono::microseconds timeout, F&& stillIdle) {
  uint32_t seq = bell->seq.load(std::memory_order_acquire);
  bell->sleepers.fetch_add(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (stillIdle()) futexWait(&bell->seq, seq, timeout);
  bell->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace weft::runtime
