#include "core/coll/run.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/coll/algorithm.h"
#include "core/runtime/waiter.h"

namespace weft::coll {

namespace {

using runtime::Comm;
using runtime::CollSignature;

// NCCL's chunk is stepSize * chunkSteps (calcCollChunking): 4 steps for ring Simple AllReduce,
// AllGather and ReduceScatter (2 slices of 2 steps: 2 MiB at the default NCCL_BUFFSIZE), one
// step for broadcast, reduce and trees. It follows NCCL_BUFFSIZE: a primitive may take at most
// kSteps slots before its peer frees one, so a fixed chunk larger than the buffer deadlocks.
constexpr size_t kRingChunkSteps = 4;
constexpr size_t kBytesPerChannel = size_t{512} << 10;
// From this buffer size on, net connections send steps straight from the caller's buffers
// (sendFrom: registered once per collective) instead of copying them into their slots first: as
// p2p's zero-copy messages (runtime::kDirectMinBytes), registering costs more than copying a few
// small steps.
constexpr size_t kFromUserMinBytes = size_t{1} << 20;

// One lane of one channel of one collective: its steps, its connections, and how far it got.
struct ChannelRun {
  int channel = 0;
  std::vector<Step> steps;
  std::vector<runtime::SendConnection*> sends;
  std::vector<runtime::RecvConnection*> recvs;
  std::vector<int> sendPeers, recvPeers;  // the ranks of sends and recvs (for messages)
  size_t slotBytes = 0;  // the smallest step of its connections
  bool stepPeers = false;  // its steps name their peer (Step::peer): a doubling lane
  size_t step = 0;  // current step
  size_t done = 0;  // elements of it moved
  // Receives the runner posts itself (Runner::postAhead): the next chunk to post, and how many
  // were posted and taken.
  size_t postStep = 0, postDone = 0;
  uint64_t postedChunks = 0, takenChunks = 0;
  // On connections whose steps carry no signature tag, the collective's first step carries its
  // signature (after its data, or alone): bit i set once it went out on sends[i] / was checked on
  // recvs[i]; and whether postAhead posted the receive of a signature step of its own.
  uint32_t sigSent = 0, sigTaken = 0;
  bool sigPosted = false;
  // Bit i: the step peeked on recvs[i] is the first data step with the signature at its end, not
  // released yet (a step whose sends had no free slot is peeked again at the next pass).
  uint32_t sigInline = 0;
  // Bit i: sends[i] / recvs[i] carry a tag on every step instead (carriesSignature, fixed at plan).
  uint32_t sendsTagged = 0, recvsTagged = 0;
  void rewind() {
    step = done = postStep = postDone = 0;
    postedChunks = takenChunks = 0;
    sigSent = sigTaken = sigInline = 0;
    sigPosted = false;
  }
};

// A tree rank has at most 3 children (NCCL_MAX_TREE_ARITY): a primitive touches that many slots.
constexpr size_t kMaxPeers = connect::kMaxTreeArity;
using RecvSlots = std::array<const void*, kMaxPeers>;
using SendSlots = std::array<void*, kMaxPeers>;

bool readsRecv(Prim p) { return p != Prim::kSend && p != Prim::kCopySend; }
bool writesSend(Prim p) { return p != Prim::kRecv && p != Prim::kRecvReduceCopy; }

void copyBytes(void* dst, const void* src, size_t n) {
  if (dst != src) std::memmove(dst, src, n);
}

// Drives a lane's net sends in flight; true when none is left.
Result<bool> drainSends(ChannelRun& ch) {
  bool all = true;
  for (runtime::SendConnection* s : ch.sends) {
    WEFT_ASSIGN_OR_RETURN(bool idle, s->drain());
    all = all && idle;
  }
  return all;
}

const char* opName(int op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg", "a PreMulSum op"};
  return op >= 0 && op <= weftNumOps ? kNames[op] : "no op";
}

// "AllReduce #3 (count 4, Float32, sum)": a call as its signature has it.
std::string describe(const CollSignature& s) {
  std::string text = strprintf("%s #%llu (count %llu, %s", config::funcName(funcOf(static_cast<Coll>(s.coll))),
                               static_cast<unsigned long long>(s.seq), static_cast<unsigned long long>(s.count),
                               ncclTypeName(static_cast<weft_datatype_t>(s.type)) + 4);
  if (s.op >= 0) text += std::string(", ") + opName(s.op);
  if (s.root >= 0) text += strprintf(", root %d", s.root);
  return text + ")";
}

// What differs between two signatures, for the message: "the datatype and the op".
std::string differences(const CollSignature& mine, const CollSignature& theirs) {
  std::vector<const char*> what;
  if (mine.coll != theirs.coll) what.push_back("the operation");
  if (mine.type != theirs.type) what.push_back("the datatype");
  if (mine.count != theirs.count) what.push_back("the count");
  if (mine.op != theirs.op) what.push_back("the op");
  if (mine.root != theirs.root) what.push_back("the root");
  if (mine.seq != theirs.seq) what.push_back("the call's number (a call missing or extra on one rank)");
  std::string text;
  for (size_t i = 0; i < what.size(); ++i) text += std::string(i == 0 ? "" : i + 1 == what.size() ? " and " : ", ") + what[i];
  return text;
}

// A step from `peer` that belongs to another call than this rank's: both calls named where the
// peer's is known (`theirs`), else what arrived instead.
Status mismatch(const Comm& comm, int peer, int channel, const CollSignature& mine, const CollSignature* theirs,
                const std::string& instead) {
  std::string peerCall = theirs != nullptr ? "rank " + std::to_string(peer) + " called " + describe(*theirs) : instead;
  std::string differ;
  if (theirs != nullptr) {
    std::string what = differences(mine, *theirs);
    differ = "; " + what + (what.find(" and ") == std::string::npos ? " differs" : " differ");
  }
  return invalidUsage(strprintf("mismatched calls: rank %d called %s but %s (seen on channel %d)%s; every rank must make "
                                "the same collective calls in the same order",
                                comm.rank, describe(mine).c_str(), peerCall.c_str(), channel, differ.c_str()));
}

CollSignature signatureOf(const CollArgs& a) {
  CollSignature s;
  s.seq = a.seq;
  s.count = a.count;
  s.coll = static_cast<int32_t>(a.coll);
  s.type = static_cast<int32_t>(a.type);
  s.op = a.userOp;
  s.root = a.coll == Coll::kBroadcast || a.coll == Coll::kReduce ? a.root : -1;
  return s;
}

class Runner {
 public:
  // `tag` is signatureTag(sig), 0 for an unnumbered collective (no check).
  Runner(Comm& comm, const CollArgs& a, const CollSignature& sig, uint32_t tag)
      : comm_(comm), a_(a), sig_(sig), tag_(tag), elt_(typeSize(a.type)),
        singleCopy_(a.coll == Coll::kAllGather || a.coll == Coll::kBroadcast) {
    bool perRank = countIsPerRank(a.coll);
    size_t one = a.count * elt_, all = one * (perRank ? static_cast<size_t>(comm.nranks) : 1);
    sendBytes_ = a.coll == Coll::kReduceScatter ? all : one;
    recvBytes_ = a.coll == Coll::kAllGather ? all : one;
    fromUser_ = std::max(sendBytes_, recvBytes_) >= kFromUserMinBytes;
  }

  // One slot of `ch`'s current step, if its connections allow. True when something moved.
  Result<bool> advance(ChannelRun& ch) {
    bool moved = false;
    // A net plugin moves posted sends only while it is called: keep them going even when this
    // channel now waits to receive (its peer may be waiting for exactly those sends).
    WEFT_ASSIGN_OR_RETURN(bool idle, drainSends(ch));
    (void)idle;
    if (drives(ch)) WEFT_TRY(postAhead(ch));
    const size_t slotElems = ch.slotBytes / elt_;
    while (ch.step < ch.steps.size()) {
      const Step& s = ch.steps[ch.step];
      size_t m = std::min(slotElems, s.count - ch.done);
      RecvSlots rslots{};
      SendSlots sslots{};
      Conns<runtime::RecvConnection> rconns = stepConns(ch.recvs, s, readsRecv(s.prim));
      Conns<runtime::SendConnection> sconns = stepConns(ch.sends, s, writesSend(s.prim));
      size_t nr = rconns.n, ns = sconns.n;
      size_t left = (s.count - ch.done + slotElems - 1) / slotElems;
      for (size_t i = 0; i < nr; ++i) {
        size_t bytes = 0;
        size_t c = connIndex(s, i);
        if (sigStepIn(ch, c)) {
          WEFT_ASSIGN_OR_RETURN(rslots[i], peekSigned(ch, c, left, &bytes, &moved));
        } else {
          bool last = false;
          WEFT_ASSIGN_OR_RETURN(rslots[i], rconns.at[i]->peek(&bytes, &last, static_cast<int>(std::min<size_t>(left, runtime::kSteps))));
          // The first data step, its signature checked at an earlier pass, peeked again.
          if (rslots[i] != nullptr && (ch.sigInline >> c & 1) != 0 && bytes >= sizeof(CollSignature))
            bytes -= sizeof(CollSignature);
        }
        if (rslots[i] == nullptr) return moved;
        if (tag_ != 0 && (ch.recvsTagged >> c & 1) != 0 && ch.recvs[c]->peekedTag() != tag_) return tagMismatch(ch, c);
        if (bytes != m * elt_)
          return internalError(strprintf("channel %d, %s: a step of %zu bytes arrived where %zu were expected (do all "
                                         "ranks call the same collective with the same count?)",
                                         ch.channel, primName(s.prim), bytes, m * elt_));
      }
      for (size_t i = 0; i < ns; ++i) {
        size_t c = connIndex(s, i);
        if (sigStepOut(ch, c) && !inlineSignature(ch, c, m * elt_)) {
          WEFT_ASSIGN_OR_RETURN(bool signedOff, sendSignatureStep(ch, c, &moved));
          if (!signedOff) return moved;
        }
        WEFT_ASSIGN_OR_RETURN(sslots[i], sconns.at[i]->acquire());
        if (sslots[i] == nullptr) return moved;
      }
      if (nr > 0 && rconns.at[0]->peekedRemote() && s.prim != Prim::kRecv && s.prim != Prim::kRecvCopySend)
        return internalError(strprintf("channel %d, %s: a step in the sender's memory arrived where a slot was expected",
                                       ch.channel, primName(s.prim)));
      WEFT_ASSIGN_OR_RETURN(Sent sent, apply(s, ch.done, m, rconns.at[0], rslots, nr, sslots));
      if (sent.unread) return moved;  // the step stays peeked (its sender's process is gone)
      for (size_t i = 0; i < ns; ++i) {
        size_t c = connIndex(s, i);
        if (sigStepOut(ch, c)) WEFT_TRY(sendSigned(ch, c, sslots[i], sent.data, m * elt_));
        else WEFT_TRY(send(*sconns.at[i], sslots[i], sent, m * elt_));
      }
      for (size_t i = 0; i < nr; ++i) {
        WEFT_TRY(rconns.at[i]->release());
        ch.sigInline &= ~(1u << connIndex(s, i));
      }
      if (nr > 0) ++ch.takenChunks;
      moved = true;
      ch.done += m;
      if (ch.done == s.count) {
        ++ch.step;
        ch.done = 0;
      }
    }
    return moved;
  }

 private:
  // Whether the collective's first step on recvs[i] / sends[i] is its signature (a transport
  // without tags) and still to be taken / sent.
  bool sigStepIn(const ChannelRun& ch, size_t i) const {
    return tag_ != 0 && ((ch.sigTaken | ch.recvsTagged) >> i & 1) == 0;
  }
  bool sigStepOut(const ChannelRun& ch, size_t i) const {
    return tag_ != 0 && ((ch.sigSent | ch.sendsTagged) >> i & 1) == 0;
  }

  // Whether the signature rides at the end of the first data step (`bytes`) on sends[i] instead
  // of a step of its own: a small collective's step through a slot with room for it. Not when the
  // caller's buffers are sent from and received into (postAhead posts the first receive into a
  // slot only for a step of its own). Which way, the receiver tells by the step's size.
  bool inlineSignature(const ChannelRun& ch, size_t i, size_t bytes) const {
    return !fromUser_ && bytes > 0 && bytes + sizeof(CollSignature) <= ch.sends[i]->stepSize();
  }

  // The first data step of recvs[i] (peek), or null while none arrived, on a connection without
  // tags: checks the signature first, the whole step (then released, and the next one peeked) or
  // the last sizeof(CollSignature) bytes of the data step (then left out of *bytes).
  Result<const void*> peekSigned(ChannelRun& ch, size_t i, size_t left, size_t* bytes, bool* moved) const {
    runtime::RecvConnection& recv = *ch.recvs[i];
    bool last = false;
    for (;;) {
      // Only the data steps are posted ahead: whether the signature comes as a step of its own
      // is the sender's choice, and a receive posted beyond this collective would take the next
      // one's first step.
      bool sig = sigStepIn(ch, i);
      WEFT_ASSIGN_OR_RETURN(const void* p, recv.peek(bytes, &last, static_cast<int>(std::min<size_t>(left, runtime::kSteps))));
      if (p == nullptr || !sig) return p;
      WEFT_TRY(checkSignature(ch, i, p, *bytes));
      ch.sigTaken |= 1u << i;
      if (*bytes > sizeof(CollSignature)) {
        *bytes -= sizeof(CollSignature);
        ch.sigInline |= 1u << i;
        return p;
      }
      WEFT_TRY(recv.release());
      ++ch.takenChunks;
      *moved = true;
    }
  }

  // The signature at the end of a step of `bytes` that arrived on recvs[i] must be this call's.
  Status checkSignature(const ChannelRun& ch, size_t i, const void* p, size_t bytes) const {
    CollSignature theirs{};
    theirs.magic = 0;
    if (bytes >= sizeof(theirs) && !ch.recvs[i]->peekedRemote())
      std::memcpy(&theirs, static_cast<const char*>(p) + bytes - sizeof(theirs), sizeof(theirs));
    int peer = ch.recvPeers[i];
    if (theirs.magic != CollSignature::kMagic)
      return mismatch(comm_, peer, ch.channel, sig_, nullptr,
                      strprintf("rank %d sent a %zu-byte step of an earlier call where this call's first step was due", peer, bytes));
    if (theirs != sig_) return mismatch(comm_, peer, ch.channel, sig_, &theirs, "");
    return Status::ok();
  }

  // Sends this collective's signature as a step of its own on sends[i] (where it cannot ride on
  // the first data step); false while no slot is free.
  Result<bool> sendSignatureStep(ChannelRun& ch, size_t i, bool* moved) const {
    WEFT_ASSIGN_OR_RETURN(void* slot, ch.sends[i]->acquire());
    if (slot == nullptr) return false;
    std::memcpy(slot, &sig_, sizeof(sig_));
    WEFT_TRY(ch.sends[i]->post(sizeof(sig_), false));
    ch.sigSent |= 1u << i;
    *moved = true;
    return true;
  }

  // The first data step on sends[i], through its slot, with the signature after the data.
  Status sendSigned(ChannelRun& ch, size_t i, void* slot, const void* data, size_t bytes) const {
    if (slot != data) std::memcpy(slot, data, bytes);
    std::memcpy(static_cast<char*>(slot) + bytes, &sig_, sizeof(sig_));
    ch.sigSent |= 1u << i;
    return ch.sends[i]->post(bytes + sizeof(sig_), false);
  }

  // The step peeked on recvs[i] (a transport with tags) carries another call's tag.
  Status tagMismatch(const ChannelRun& ch, size_t i) const {
    uint32_t tag = ch.recvs[i]->peekedTag();
    std::optional<CollSignature> theirs = ch.recvs[i]->senderSignature(tag);
    int peer = ch.recvPeers[i];
    return mismatch(comm_, peer, ch.channel, sig_, theirs ? &*theirs : nullptr,
                    strprintf("rank %d sent a step of another call (tag %08x where this call's is %08x)", peer, tag, tag_));
  }

  // Whether the runner posts `ch`'s receives itself (postAhead): a large collective on a lane
  // with one receive connection that takes them (a net plugin's).
  bool drives(const ChannelRun& ch) const {
    return fromUser_ && !ch.stepPeers && ch.recvs.size() == 1 && ch.recvs[0]->postsInto();
  }

  // The connections a step uses: all of the lane's, or the one its `peer` names; none where the
  // primitive does not use that side.
  template <class C>
  struct Conns {
    std::array<C*, kMaxPeers> at{};
    size_t n = 0;
  };
  // The index in the lane's sends/recvs of a step's i-th connection.
  static size_t connIndex(const Step& s, size_t i) { return s.peer >= 0 ? static_cast<size_t>(s.peer) : i; }
  template <class C>
  static Conns<C> stepConns(const std::vector<C*>& all, const Step& s, bool used) {
    Conns<C> out;
    if (!used) return out;
    if (s.peer >= 0) {
      out.at[0] = all[static_cast<size_t>(s.peer)];
      out.n = 1;
      return out;
    }
    for (C* c : all) out.at[out.n++] = c;
    return out;
  }

  // Posts the receives of the lane's next chunks, up to kSteps ahead: those whose bytes only go
  // to the output (recv, recvCopySend) straight there, the ones to reduce into slots.
  Status postAhead(ChannelRun& ch) const {
    const size_t slotElems = ch.slotBytes / elt_;
    while (ch.postedChunks - ch.takenChunks < static_cast<uint64_t>(runtime::kSteps)) {
      while (ch.postStep < ch.steps.size() && !readsRecv(ch.steps[ch.postStep].prim)) {
        ++ch.postStep;
        ch.postDone = 0;
      }
      if (ch.postStep == ch.steps.size()) break;
      if (!ch.sigPosted && sigStepIn(ch, 0)) {  // the lane receives: its signature step first, in a slot
        WEFT_ASSIGN_OR_RETURN(bool posted, ch.recvs[0]->postInto(nullptr, sizeof(CollSignature), a_.recv, recvBytes_));
        if (!posted) break;
        ch.sigPosted = true;
        ++ch.postedChunks;
        continue;
      }
      const Step& s = ch.steps[ch.postStep];
      size_t m = std::min(slotElems, s.count - ch.postDone);
      bool toOutput = s.prim == Prim::kRecv || s.prim == Prim::kRecvCopySend;
      WEFT_ASSIGN_OR_RETURN(bool posted, ch.recvs[0]->postInto(toOutput ? out(s, ch.postDone) : nullptr, m * elt_,
                                                               a_.recv, recvBytes_));
      if (!posted) break;
      ++ch.postedChunks;
      ch.postDone += m;
      if (ch.postDone == s.count) {
        ++ch.postStep;
        ch.postDone = 0;
      }
    }
    return Status::ok();
  }

  const char* in(const Step& s, size_t done) const {
    return static_cast<const char*>(a_.send) + (s.in + done) * elt_;
  }
  char* out(const Step& s, size_t done) const { return static_cast<char*>(a_.recv) + (s.out + done) * elt_; }

  // local (+) every received slot, in order, into dst; the last reduction applies the post-op
  // (kRecvReduceSend leaves it to the root) and only the first scales the local input (`pre`:
  // the user's input, not a partial result). `remoteFirst` (one slot): received (+) local.
  void reduceAll(void* dst, const void* local, const RecvSlots& r, size_t nr, size_t m, bool post, bool pre = true,
                 bool remoteFirst = false) const {
    if (remoteFirst && nr == 1) {
      // The operator scales its first operand: scale the local input on its own first.
      if (pre && a_.op.kind == RedKind::kPreMulSum) {
        copyWith(a_.op, dst, local, m, true, false);
        local = dst;
      }
      reduceInto(a_.op, dst, r[0], local, m, false, post);
      return;
    }
    for (size_t i = 0; i < nr; ++i) reduceInto(a_.op, dst, i == 0 ? local : dst, r[i], m, pre && i == 0, post && i + 1 == nr);
  }

  // What a step's sends carry: `data`, which is in the user's buffers (`user`: it stays put
  // until the collective returns) or in the first send slot.
  struct Sent {
    const void* data = nullptr;
    bool user = false;
    bool unread = false;  // the received step could not be read (RecvConnection::copyOut)
  };

  // Copies the step received on `recv` into `dst`; then the sends carry `dst`.
  static Result<Sent> copyIn(runtime::RecvConnection& recv, void* dst, const void* peeked, size_t bytes) {
    WEFT_ASSIGN_OR_RETURN(bool read, recv.copyOut(dst, peeked, bytes));
    return Sent{dst, true, !read};
  }

  // The data movement of one slot: the only place that touches bytes. Every send slot gets the
  // same bytes (a tree forwards one result to all its children). A received step is copied out
  // of its slot (or the sender's memory, RecvConnection::copyOut) into the output first, so a
  // forward goes from the output; where postAhead had it land in the output, nothing is copied.
  // Steps that name their peer (doubling) rewrite the output after sending from it: they always
  // send through the slots, never from the caller's buffers.
  Result<Sent> apply(const Step& s, size_t done, size_t m, runtime::RecvConnection* recv, const RecvSlots& r, size_t nr,
                     const SendSlots& w) const {
    size_t bytes = m * elt_;
    switch (s.prim) {
      case Prim::kSend:
        if (s.fromOutput) {  // a partial result: already scaled
          std::memcpy(w[0], out(s, done), bytes);
          return Sent{w[0], false};
        }
        // The input goes as it is unless the operator scales it first (PreMulSum).
        if (fromUser_ && s.peer < 0 && a_.op.kind != RedKind::kPreMulSum) return Sent{in(s, done), true};
        copyWith(a_.op, w[0], in(s, done), m, true, false);
        return Sent{w[0], false};
      case Prim::kCopySend:
        copyBytes(out(s, done), in(s, done), bytes);
        return Sent{in(s, done), true};
      case Prim::kRecv:
        return copyIn(*recv, out(s, done), r[0], bytes);
      case Prim::kRecvReduceSend:
        reduceAll(w[0], in(s, done), r, nr, m, false);
        return Sent{w[0], false};
      case Prim::kRecvReduceCopySend:
        reduceAll(out(s, done), in(s, done), r, nr, m, true);
        return Sent{out(s, done), true};
      case Prim::kRecvCopySend:
        return copyIn(*recv, out(s, done), r[0], bytes);
      case Prim::kRecvReduceCopy:
        reduceAll(out(s, done), s.fromOutput ? out(s, done) : in(s, done), r, nr, m, !s.partial, !s.fromOutput,
                  s.remoteFirst);
        return Sent{};
    }
    return Sent{};
  }

  // One send of a step: straight from the user's buffer where the transport allows, else through
  // the slot. Shared memory lets the receiver read it (postFrom: AllGather and Broadcast only,
  // whose receivers copy every step into their output and never reduce from a slot); a net
  // plugin sends it from there (sendFrom: any collective of at least kFromUserMinBytes; the
  // receiver sees an ordinary step).
  Status send(runtime::SendConnection& conn, void* slot, const Sent& sent, size_t bytes) const {
    if (sent.user && singleCopy_) {
      WEFT_ASSIGN_OR_RETURN(bool posted, conn.postFrom(sent.data, bytes));
      if (posted) return Status::ok();
    }
    if (sent.user && fromUser_) {
      // The buffer that holds the whole step (in place, the input and the output overlap).
      const char* p = static_cast<const char*>(sent.data);
      auto holds = [&](const void* base, size_t n) {
        const char* b = static_cast<const char*>(base);
        return b != nullptr && p >= b && p + bytes <= b + n;
      };
      bool inRecv = holds(a_.recv, recvBytes_);
      if (inRecv || holds(a_.send, sendBytes_)) {
        WEFT_ASSIGN_OR_RETURN(bool posted, conn.sendFrom(p, bytes, inRecv ? a_.recv : a_.send, inRecv ? recvBytes_ : sendBytes_));
        if (posted) return Status::ok();
      }
    }
    if (slot != sent.data) std::memcpy(slot, sent.data, bytes);
    return conn.post(bytes, false);
  }

  Comm& comm_;
  const CollArgs& a_;
  const CollSignature& sig_;
  uint32_t tag_;
  size_t elt_;
  bool singleCopy_;
  size_t sendBytes_ = 0, recvBytes_ = 0;  // the caller's buffers
  bool fromUser_ = false;                 // steps may be sent from them (sendFrom) and received into them (postInto)
};

// Where this rank sits in channel c's ring.
RingView ringView(const Comm& comm, int c) {
  RingView v;
  v.nranks = comm.nranks;
  v.userRanks = connect::ringFrom(comm.channels, c, comm.rank);
  std::vector<int> fromZero = connect::ringFrom(comm.channels, c, 0);
  v.index = static_cast<int>(std::find(fromZero.begin(), fromZero.end(), comm.rank) - fromZero.begin());
  return v;
}

Status oneRank(const CollArgs& a) {
  size_t elt = typeSize(a.type);
  size_t total = a.count * elt;
  switch (a.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce:
    case Coll::kReduceScatter:
      copyWith(a.op, a.recv, a.send, a.count, true, true);
      break;
    case Coll::kAllGather:
    case Coll::kBroadcast:
      copyBytes(a.recv, a.send, total);
      break;
  }
  return Status::ok();
}


// Where this rank sits in channel c's tree (tree 0 or tree 1, by the channel).
TreeView treeView(const Comm& comm, int c) {
  connect::ChannelLinks l = connect::channelOf(comm.channels, comm.rank, c);
  TreeView v;
  v.up = l.treeUp;
  for (int d : l.treeDown)
    if (d >= 0) v.down.push_back(d);
  return v;
}

// The lanes of channel c: one ring lane, or a tree's.
std::vector<Lane> lanesOf(const Comm& comm, const CollArgs& a, const ScheduleArgs& sa, int c, Part part) {
  if (a.doubling) return {doublingAllReduce(sa, comm.rank, comm.nranks, part)};
  if (a.algo == config::Algo::kTree) return treeAllReduce(sa, treeView(comm, c), part);
  Lane ring;
  ring.recvFrom = {comm.channels.ringPrevOf(c, comm.rank)};
  ring.sendTo = {comm.channels.ringNextOf(c, comm.rank)};
  ring.steps = ringSchedule(sa, ringView(comm, c), part);
  std::vector<Lane> lanes;
  lanes.push_back(std::move(ring));
  return lanes;
}

}  // namespace

std::vector<PlannedLane> planLanes(const Comm& comm, const CollArgs& a, size_t slotBytes, bool oneStepChunks,
                                   size_t* nParts) {
  size_t elt = typeSize(a.type);
  ScheduleArgs sa;
  sa.coll = a.coll;
  sa.countPerRank = a.count;
  bool stepChunks = oneStepChunks || a.doubling || a.algo == config::Algo::kTree || a.coll == Coll::kBroadcast ||
                    a.coll == Coll::kReduce;
  sa.chunkElems = std::max<size_t>(1, slotBytes * (stepChunks ? 1 : kRingChunkSteps) / elt);
  sa.alignElems = std::max<size_t>(1, 16 / elt);
  sa.root = a.root;
  bool perRank = countIsPerRank(a.coll);
  size_t traffic = a.count * elt * (perRank ? static_cast<size_t>(comm.nranks) : 1);
  int tpb = a.coll == Coll::kAllReduce ? 2 : perRank ? comm.nranks : 1;  // NCCL's traffic per byte
  int budget = a.channels > 0 ? a.channels : channelsFor(comm, traffic);
  std::vector<Part> parts = channelParts(a.count, elt, tpb, budget, comm.channels.nChannels);
  *nParts = parts.size();
  std::vector<PlannedLane> out;
  for (int c = 0; c < static_cast<int>(parts.size()); ++c)
    for (Lane& lane : lanesOf(comm, a, sa, c, parts[static_cast<size_t>(c)]))
      if (!lane.steps.empty()) out.push_back(PlannedLane{c, std::move(lane)});
  return out;
}

void logTuning(const Comm& comm, const CollArgs& a, size_t nParts) {
  if (comm.rank != 0 || nParts == 0) return;
  // NCCL's line (enqueue.cc, rank 0), with its upper-case names (and weft's RECURSIVE_DOUBLING).
  static const char* const kProto[] = {"LL", "LL128", "SIMPLE"};
  const char* algo = a.doubling ? "RECURSIVE_DOUBLING" : a.algo == config::Algo::kTree ? "TREE" : "RING";
  WEFT_INFO(log::kTuning, "%s: %zu Bytes -> Algo %s proto %s channel{Lo..Hi}={0..%zu}",
            config::funcName(funcOf(a.coll)), a.count * typeSize(a.type), algo, kProto[static_cast<int>(a.proto)],
            nParts - 1);
}

namespace {

Result<std::vector<ChannelRun>> plan(Comm& comm, const CollArgs& a, bool* allShm, size_t* nParts) {
  std::vector<ChannelRun> runs;
  *allShm = true;
  for (PlannedLane& pl : planLanes(comm, a, comm.stepSize, false, nParts)) {
    const int c = pl.channel;
    Lane& lane = pl.lane;
    {
      ChannelRun r;
      r.channel = c;
      r.steps = std::move(lane.steps);
      r.slotBytes = SIZE_MAX;
      r.sendPeers = lane.sendTo;
      r.recvPeers = lane.recvFrom;
      r.stepPeers = std::any_of(r.steps.begin(), r.steps.end(), [](const Step& s) { return s.peer >= 0; });
      for (int peer : lane.sendTo) {
        auto it = comm.sends.find({0, c, peer});
        if (it == comm.sends.end())
          return internalError(strprintf("rank %d: channel %d has no connection to send to rank %d", comm.rank, c, peer));
        if (it->second->carriesSignature()) r.sendsTagged |= 1u << r.sends.size();
        r.sends.push_back(it->second.get());
        r.slotBytes = std::min(r.slotBytes, it->second->stepSize());
        *allShm = *allShm && comm.useShm(peer);
      }
      for (int peer : lane.recvFrom) {
        auto it = comm.recvs.find({0, c, peer});
        if (it == comm.recvs.end())
          return internalError(strprintf("rank %d: channel %d has no connection to receive from rank %d", comm.rank, c, peer));
        if (it->second->carriesSignature()) r.recvsTagged |= 1u << r.recvs.size();
        r.recvs.push_back(it->second.get());
        r.slotBytes = std::min(r.slotBytes, it->second->stepSize());
        *allShm = *allShm && comm.useShm(peer);
      }
      runs.push_back(std::move(r));
    }
  }
  return runs;
}

// The last plan run on a communicator, kept for the next collective: a loop of the same call
// (same collective, count, type, root and algorithm: the steps do not depend on the buffers or
// the operator) reuses its steps and connections instead of building them again.
struct PlanCache {
  struct Key {
    Coll coll = Coll::kAllReduce;
    size_t count = 0;
    weft_datatype_t type = weftInt8;
    int root = 0;
    config::Algo algo = config::Algo::kRing;
    bool doubling = false;
    int channels = 0;
    uint64_t connEpoch = 0;
    bool operator==(const Key&) const = default;
  };
  bool valid = false;
  Key key;
  std::vector<ChannelRun> runs;
  bool allShm = true;
  size_t nParts = 0;  // channels the buffer was cut over
};

Result<std::vector<ChannelRun>*> cachedPlan(Comm& comm, const CollArgs& a, bool* allShm) {
  if (!comm.collCache) comm.collCache = std::make_shared<PlanCache>();
  auto* cache = static_cast<PlanCache*>(comm.collCache.get());
  PlanCache::Key key{a.coll, a.count, a.type, a.root, a.algo, a.doubling, a.channels, comm.connEpoch};
  if (cache->valid && cache->key == key) {
    for (ChannelRun& r : cache->runs) r.rewind();
  } else {
    cache->valid = false;
    WEFT_ASSIGN_OR_RETURN(cache->runs, plan(comm, a, &cache->allShm, &cache->nParts));
    cache->key = key;
    cache->valid = true;
  }
  logTuning(comm, a, cache->nParts);
  *allShm = cache->allShm;
  return &cache->runs;
}

}  // namespace

int channelsFor(const runtime::Comm& comm, size_t bytes) {
  size_t want = (bytes + kBytesPerChannel - 1) / kBytesPerChannel;
  return static_cast<int>(std::clamp<size_t>(want, 1, static_cast<size_t>(std::max(1, comm.channels.nChannels))));
}

namespace {

// One collective on its way: planned when its turn on its communicator comes.
struct Active {
  const CollTask* task = nullptr;
  CollSignature sig;  // what every rank's call must match (signatureOf)
  uint32_t tag = 0;   // signatureTag(sig); 0: unnumbered, not checked
  std::vector<ChannelRun>* runs = nullptr;  // the communicator's cached plan (PlanCache)
  bool allShm = true;
  bool planned = false;
  bool draining = false;
  bool done = false;
};

Status failOn(Comm& comm, Status s) {
  if (comm.stop.load()) s = comm.stoppedStatus("running a collective");
  else s = comm.rootCause(std::move(s));
  // Peers are told who failed first: the rank a peer's report named, else this one.
  comm.fail(s, s.failedRank() >= 0 ? s.failedRank() : comm.rank);
  return s;
}

// One pass over a collective: plan it, move what its connections allow, then drain net sends.
Result<bool> pass(Active& act) {
  Comm& comm = *act.task->comm;
  const CollArgs& a = act.task->args;
  if (!act.planned) {
    act.planned = true;
    if (comm.stop.load()) return comm.stoppedStatus("starting a collective");
    if (a.seq != 0) {
      if (Status s = comm.startCollective(a.seq, config::funcName(funcOf(a.coll))); !s.isOk()) {
        comm.failLocally(s);  // the other ranks find the same departure themselves
        return comm.stoppedStatus("starting a collective");
      }
    }
    if (comm.nranks == 1) {
      WEFT_TRY(oneRank(a));
      act.done = true;
      comm.endCollective();
      return true;
    }
    WEFT_ASSIGN_OR_RETURN(act.runs, cachedPlan(comm, a, &act.allShm));
    act.sig = signatureOf(a);
    act.tag = a.seq != 0 ? runtime::signatureTag(act.sig) : 0;
    if (act.tag != 0)
      for (ChannelRun& r : *act.runs)
        for (runtime::SendConnection* s : r.sends) s->sign(act.sig);
  }
  bool moved = false;
  if (!act.draining) {
    Runner runner(comm, a, act.sig, act.tag);
    bool left = false;
    for (ChannelRun& ch : *act.runs) {
      if (ch.step == ch.steps.size()) {
        // A finished lane's last sends still need the plugin's calls while the channel's other
        // lane waits (a tree leaf's reduce-up is done before its broadcast-down gets anything).
        WEFT_ASSIGN_OR_RETURN(bool idle, drainSends(ch));
        (void)idle;
        continue;
      }
      WEFT_ASSIGN_OR_RETURN(bool m, runner.advance(ch));
      moved = moved || m;
      left = left || ch.step < ch.steps.size();
    }
    if (left) return moved;
    act.draining = true;
  }
  // Net sends are in flight until the plugin says they left.
  for (ChannelRun& ch : *act.runs) {
    WEFT_ASSIGN_OR_RETURN(bool idle, drainSends(ch));
    if (!idle) return moved;
  }
  // Then the caller's buffers are no longer read: their registrations go.
  for (ChannelRun& ch : *act.runs) {
    for (runtime::SendConnection* s : ch.sends) s->endSendFrom();
    for (runtime::RecvConnection* r : ch.recvs) r->endInto();
  }
  act.done = true;
  comm.endCollective();
  return true;
}

// NCCL connects an algorithm's peers when it is first used (runtime connect): here the tree peers
// of every channel, for each communicator whose first Tree collective is among `tasks`. Every
// rank gets here with the same call, so both sides of each connection ask for it.
// The same for recursive doubling's peers (doublingPeers) at a communicator's first doubling
// collective.
Status connectAlgorithm(std::span<const CollTask> tasks, bool doubling) {
  std::vector<runtime::ConnectRequest> reqs;
  std::vector<Comm*> comms;
  for (const CollTask& t : tasks) {
    Comm& c = *t.comm;
    bool uses = doubling ? t.args.doubling : !t.args.doubling && t.args.algo == config::Algo::kTree;
    bool done = doubling ? c.doublingConnected : c.treesConnected;
    if (!uses || done || c.nranks == 1 || std::find(comms.begin(), comms.end(), &c) != comms.end()) continue;
    comms.push_back(&c);
    for (int ch = 0; ch < c.channels.nChannels; ++ch) {
      std::vector<int> peers;
      if (doubling) {
        peers = doublingPeers(c.rank, c.nranks);
      } else {
        TreeView v = treeView(c, ch);
        peers = v.down;
        if (v.up >= 0) peers.push_back(v.up);
      }
      for (int peer : peers) {
        if (c.sends.count({0, ch, peer}) == 0) reqs.push_back({&c, 0, ch, peer, true});
        if (c.recvs.count({0, ch, peer}) == 0) reqs.push_back({&c, 0, ch, peer, false});
      }
    }
  }
  if (comms.empty()) return Status::ok();
  const char* what = doubling ? "recursive doubling" : "the trees";
  auto failAll = [&](const Status& failed) {
    Status s = failed;
    s = std::move(s).withContext(strprintf("connecting %s", what));
    for (Comm* c : comms) (void)failOn(*c, s);
  };
  if (Status s = runtime::connectAll(reqs, nullptr, failAll); !s.isOk()) return std::move(s).withContext(strprintf("connecting %s", what));
  for (Comm* c : comms) {
    (doubling ? c->doublingConnected : c->treesConnected) = true;
    WEFT_INFO(log::kInit, "Connected all %s", doubling ? "recursive doubling peers" : "trees");
  }
  return Status::ok();
}

}  // namespace

// Where a collective that stopped moving waits: each unfinished channel's step and peers.
std::string whereStuck(const Active& act) {
  std::string where;
  int shown = 0;
  for (const ChannelRun& ch : *act.runs) {
    if (ch.step >= ch.steps.size()) continue;
    if (++shown > 4) {
      where += "; …";
      break;
    }
    auto ranks = [](const std::vector<int>& v) {
      std::string out;
      for (int r : v) out += (out.empty() ? "" : ",") + std::to_string(r);
      return out;
    };
    const Step& st = ch.steps[ch.step];
    Prim p = st.prim;
    auto peersOf = [&](const std::vector<int>& all) {  // a step that names its peer uses that one
      return st.peer >= 0 ? std::vector<int>{all[static_cast<size_t>(st.peer)]} : all;
    };
    where += strprintf("%schannel %d at step %zu of %zu (%s)", where.empty() ? "" : "; ", ch.channel, ch.step + 1,
                       ch.steps.size(), primName(p));
    if (readsRecv(p) && !ch.recvPeers.empty()) where += " receiving from rank " + ranks(peersOf(ch.recvPeers));
    if (writesSend(p) && !ch.sendPeers.empty())
      where += std::string(readsRecv(p) ? " and" : "") + " sending to rank " + ranks(peersOf(ch.sendPeers));
  }
  return where.empty() ? "its last sends to leave" : where;
}

// WEFT_OP_TIMEOUT: a collective of a communicator with a timeout that has not moved for that long
// fails, naming where it waits; the communicator is then broken (it must be aborted).
Status checkProgress(std::span<Active> acts, const runtime::Waiter& waiter) {
  auto idle = waiter.idleFor();
  for (Active& act : acts) {
    Comm& comm = *act.task->comm;
    if (act.done || comm.opTimeout.count() == 0 || idle < comm.opTimeout || act.runs == nullptr) continue;
    const CollArgs& a = act.task->args;
    return failOn(comm, systemError(strprintf(
                            "%s #%llu made no progress for %.1f s (WEFT_OP_TIMEOUT=%lld): %s; the communicator must be aborted",
                            config::funcName(funcOf(a.coll)), static_cast<unsigned long long>(a.seq),
                            std::chrono::duration<double>(idle).count(), static_cast<long long>(comm.opTimeout.count()),
                            whereStuck(act).c_str())));
  }
  return Status::ok();
}

Status runCollectives(std::span<const CollTask> tasks) {
  WEFT_TRY(connectAlgorithm(tasks, false));
  WEFT_TRY(connectAlgorithm(tasks, true));
  // A single collective (the common call) keeps its state on the stack.
  Active one;
  std::vector<Active> many(tasks.size() > 1 ? tasks.size() : 0);
  std::span<Active> acts = tasks.size() > 1 ? std::span<Active>(many) : std::span<Active>(&one, tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) acts[i].task = &tasks[i];
  // Only the first unfinished collective of each communicator runs.
  auto turn = [&](size_t i) {
    for (size_t j = 0; j < i; ++j)
      if (!acts[j].done && acts[j].task->comm == acts[i].task->comm) return false;
    return true;
  };
  struct Sweep {
    bool any = false;    // something moved
    bool left = false;   // something is not done
    bool allShm = true;  // everything waiting waits on shared memory…
    Comm* only = nullptr;
    bool one = true;     // …of one communicator
    Status error;
  };
  // One pass over every collective whose turn it is.
  auto sweep = [&]() {
    Sweep w;
    for (size_t i = 0; i < acts.size() && w.error.isOk(); ++i) {
      Active& act = acts[i];
      if (act.done) continue;
      w.left = true;
      if (w.only != nullptr && w.only != act.task->comm) w.one = false;
      w.only = act.task->comm;
      if (!turn(i)) continue;
      Result<bool> r = pass(act);
      if (!r.isOk()) {
        w.error = failOn(*act.task->comm, std::move(r).takeStatus());
        break;
      }
      w.any = w.any || *r;
      // Draining shared memory waits for the receivers' credits, which ring this rank's bell.
      w.allShm = w.allShm && act.allShm;
    }
    return w;
  };
  int localRanks = 1;
  for (const CollTask& t : tasks) localRanks = std::max(localRanks, t.comm->localRanks);
  runtime::Waiter waiter(localRanks);
  for (;;) {
    Sweep w = sweep();
    WEFT_TRY(w.error);
    if (!w.left) return Status::ok();
    if (w.any) {
      waiter.moved();
      continue;
    }
    // Before sleeping, one more sweep after announcing the sleep: a peer that published in
    // between either sees the sleeper and rings, or its data is seen here.
    Comm* bellOwner = w.allShm && w.one ? w.only : nullptr;
    Status inner;
    WEFT_TRY(waiter.idle(bellOwner != nullptr && bellOwner->myBell ? bellOwner->myBell->bell() : nullptr,
                         [&] {
                           for (Active& act : acts)
                             if (!act.done && act.task->comm->stop.load())
                               return failOn(*act.task->comm, act.task->comm->stoppedStatus("running a collective"));
                           return checkProgress(acts, waiter);
                         },
                         [&] {
                           Sweep again = sweep();
                           inner = again.error;
                           if (again.any) waiter.moved();
                           return inner.isOk() && !again.any && again.left;
                         }));
    WEFT_TRY(inner);
  }
}

}  // namespace weft::coll
