// One direction of one connection between two ranks, whatever carries it (shared memory or a net
// plugin): NCCL's slot ring of NCCL_STEPS (8) slots of stepSize bytes with head/tail credits.
// Schedules (p2p rounds now, collectives later) move data by filling the sender's slots and
// draining the receiver's; they never see the transport. Every call is non-blocking: waiting is
// the caller's (see wait.h), so one thread can drive many connections at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "core/base/status.h"

namespace weft::runtime {

inline constexpr int kSteps = 8;  // NCCL_STEPS

// What every rank's call of one collective must agree on. The first step of a collective on each
// connection carries it (coll/run.cc), so a rank whose peer called something else fails naming
// both calls instead of mixing unrelated bytes (float32 against int32 has the same step sizes) or
// waiting forever.
struct CollSignature {
  static constexpr uint64_t kMagic = 0x3167697374666577ull;  // "weftsig1": a step that is one
  uint64_t magic = kMagic;
  uint64_t seq = 0;    // the communicator's collective number, 1-based
  uint64_t count = 0;  // the API's count
  int32_t coll = 0;    // coll::Coll
  int32_t type = 0;    // weft_datatype_t
  int32_t op = -1;     // the caller's weft_redop_t (weftNumOps for any PreMulSum op), -1: none
  int32_t root = -1;   // broadcast and reduce, -1: none
  bool operator==(const CollSignature&) const = default;
};
static_assert(sizeof(CollSignature) == 40);

// A 32-bit digest of a signature, never 0 (0: a step without one, as p2p's). A few multiplies:
// it is computed for every collective.
inline uint32_t signatureTag(const CollSignature& s) {
  auto pack = [](int32_t a, int32_t b) { return static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32 | static_cast<uint32_t>(b); };
  uint64_t h = (s.seq * 0x9e3779b97f4a7c15ull) ^ s.count;
  h = ((h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull) ^ pack(s.coll, s.type);
  h = ((h ^ (h >> 32)) * 0x94d049bb133111ebull) ^ pack(s.op, s.root);
  h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
  uint32_t t = static_cast<uint32_t>(h >> 32);
  return t != 0 ? t : 1;
}

class SendConnection {
 public:
  virtual ~SendConnection() = default;
  virtual size_t stepSize() const = 0;
  // A free slot of stepSize() bytes to fill, or nullptr while all slots are in flight.
  virtual Result<void*> acquire() = 0;
  // Publishes the slot acquire() returned, holding `bytes`; `last` marks a message's last step.
  virtual Status post(size_t bytes, bool last) = 0;
  // Drives transfers in flight; true when none is left (every posted step reached the peer's
  // buffers or the wire).
  virtual Result<bool> drain() = 0;
  // Tells the peer this rank failed (so it stops waiting at once), where the transport can.
  virtual void markFailed(int failedRank) = 0;

  // Whether every step carries the signature tag of the collective it belongs to (sign()), so
  // the receiver checks each step for free. Where not, a collective's first step on this
  // connection is its signature itself (coll/run.cc).
  virtual bool carriesSignature() const { return false; }
  // The collective whose steps follow, until the next sign(); kept where the receiver can read
  // it back (RecvConnection::senderSignature) for its message.
  virtual void sign(const CollSignature& /*sig*/) {}

  // Optional single-copy step: instead of filling the slot acquire() returned, publishes `bytes`
  // at `data` in this process's memory for the peer to copy straight from (RecvConnection::
  // copyOut). `data` must stay put and unchanged until drain() returns true. False when the
  // transport, the peer or the size does not allow it: then fill the slot and post().
  virtual Result<bool> postFrom(const void* data, size_t bytes) { return false; }

  // Optional zero-copy step (collectives over a net plugin): as acquire() + filling the slot +
  // post(bytes, false), but the step goes to the wire straight from `data`, which lies in the
  // caller's buffer [base, base + baseBytes) and must stay unchanged until drain() says idle; the
  // peer receives an ordinary step. Only right after acquire() returned a slot. False, with
  // nothing posted, where the transport has no such path: then fill the slot and post().
  virtual Result<bool> sendFrom(const void* data, size_t bytes, const void* base, size_t baseBytes) { return false; }
  // Gives back what sendFrom registered; once drain() said idle (the end of a collective).
  virtual void endSendFrom() {}

  // Optional zero-copy path for a whole message that stays put until it is done (p2p): steps go
  // straight from `data` (registered once) instead of through the slots. The wire is the same,
  // so the peer may use either path. begin returns false when the transport has no such path.
  virtual Result<bool> beginDirect(const void* data, size_t bytes) { return false; }
  // Drives it; true when every step has left; *progressed when anything moved. Only between
  // beginDirect and true.
  virtual Result<bool> progressDirect(bool* progressed) { return true; }
};

class RecvConnection {
 public:
  virtual ~RecvConnection() = default;
  virtual size_t stepSize() const = 0;
  // The oldest step that arrived, or nullptr. `want` is how many more steps the caller expects
  // (a net connection posts that many receives ahead, at most kSteps).
  virtual Result<const void*> peek(size_t* bytes, bool* last, int want) = 0;
  // Whether peek's `last` is the sender's mark (shared memory) or always false (net plugins carry
  // sizes only; the receiver then checks each step's size).
  virtual bool carriesLast() const = 0;
  // Copies the step peek() returned (`bytes` of it) into `dst`: from the slot, or from the
  // sender's memory when it posted the step with postFrom(). Only there is such a step readable:
  // peekedRemote() says whether peek's pointer is the data. False when the sender's memory is
  // gone (its process exited): the step stays peeked, and the communicator's failure detection,
  // which names the rank that died, ends the wait.
  virtual Result<bool> copyOut(void* dst, const void* peeked, size_t bytes);
  virtual bool peekedRemote() const { return false; }
  // Gives the slot peek() returned back to the sender.
  virtual Status release() = 0;
  virtual void markFailed(int failedRank) = 0;

  // As SendConnection::carriesSignature; then peekedTag() is the signatureTag of the step peek()
  // returned (0: the sender signed none) and senderSignature() the sender's signature with that
  // tag, if it is still among the last ones it signed.
  virtual bool carriesSignature() const { return false; }
  virtual uint32_t peekedTag() const { return 0; }
  virtual std::optional<CollSignature> senderSignature(uint32_t /*tag*/) const { return std::nullopt; }

  // Optional receives posted by the caller (collectives), for transports that post them ahead
  // (net plugins): whether this connection takes them.
  virtual bool postsInto() const { return false; }
  // Posts the receive of the next step: straight into `data` (in the caller's buffer [base, base
  // + baseBytes), `bytes` long), or into the next slot when `data` is null. From the first call
  // until endInto() the caller posts every step peek() returns (peek posts none itself). False,
  // with nothing posted, while the transport is busy: try again later.
  virtual Result<bool> postInto(void* data, size_t bytes, const void* base, size_t baseBytes) { return false; }
  // Ends postInto's mode and gives back its registrations; once every posted step was released.
  virtual void endInto() {}

  // Optional zero-copy path, as SendConnection's: steps land straight in `data`.
  virtual Result<bool> beginDirect(void* data, size_t bytes) { return false; }
  // Drives it; true when every step arrived (each the size the sender's step must have).
  virtual Result<bool> progressDirect(bool* progressed) { return true; }
};

inline Result<bool> RecvConnection::copyOut(void* dst, const void* peeked, size_t bytes) {
  if (dst != peeked) std::memcpy(dst, peeked, bytes);  // a step posted into place (postInto) is there
  return true;
}

}  // namespace weft::runtime
