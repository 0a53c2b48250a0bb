// Checks that move data: every size up to 1 GiB, tags, grouped receives, registration, requests
// in flight as NCCL's proxies keep them, and several connections driven from threads at once;
// and the strict extras: out-of-order tags, and many sends accepted before any receive.
#include <algorithm>
#include <cstring>
#include <thread>

#include "core/base/strings.h"
#include "core/plugin/conformance_checks.h"
#include "core/plugin/conformance_support.h"

namespace weft::plugin::conformance {

std::string checkSizes(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  Pair p = s.connect();
  size_t limit = std::min(o.maxBytes, s.props().maxP2pBytes);
  std::vector<size_t> sizes = {0, 1, 7, 8, 4095, 4096, 65537, size_t{1} << 20, (size_t{16} << 20) + 1,
                               size_t{256} << 20, size_t{1} << 30};
  size_t largest = 0;
  int n = 0;
  for (size_t size : sizes) {
    if (size > limit) continue;
    s.transfer(p, size, n++);
    largest = size;
  }
  s.close(p);
  return strprintf("%d sizes from 0 B to %s, every byte checked", n, humanBytes(largest).c_str());
}

std::string checkTags(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  Pair p = s.connect();
  // NCCL 2.28 tags every isend with the sender's rank and the irecv with the peer's, and its
  // plugin README asks only that sends and receives match in the order they were posted. Here
  // three tagged receives and three sends with the same tags, in the same order.
  const int tags[3] = {7, 3, 11};
  RegisteredBuffer src(s, p.send, 3 * 1024, "send"), dst(s, p.recv, 3 * 1024, "recv");
  std::vector<std::vector<Pending>> perComm(2);
  for (int i = 0; i < 3; ++i) {
    void* data = dst.data() + i * 1024;
    void* mh = dst.mhandle();
    size_t cap = 1024;
    int tag = tags[i];
    perComm[0].push_back({s.postRecv(p.recv, 1, &data, &cap, &tag, &mh), 1, "tagged receive"});
  }
  for (int i = 0; i < 3; ++i) {
    size_t size = 100 + static_cast<size_t>(tags[i]);  // the size says which message it was
    fillPattern(src.data() + i * 1024, size, static_cast<uint64_t>(tags[i]));
    perComm[1].push_back({s.postSend(p.send, src.data() + i * 1024, size, tags[i], src.mhandle()), 1, "tagged send"});
  }
  s.waitInOrder(perComm);
  for (int i = 0; i < 3; ++i) {
    int got = perComm[0][static_cast<size_t>(i)].sizes[0];
    require(got == 100 + tags[i], strprintf("receive %d (tag %d) got %d bytes", i, tags[i], got), nccl::kWrongData);
    require(firstMismatch(dst.data() + i * 1024, static_cast<size_t>(got), static_cast<uint64_t>(tags[i])) < 0,
            strprintf("receive %d (tag %d) holds another message's bytes", i, tags[i]), nccl::kWrongData);
  }
  src.release();
  dst.release();
  s.close(p);
  return "3 tagged messages matched in posting order, tested oldest first";
}

std::string checkTagsAnyOrder(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  Pair p = s.connect();
  // Receives posted for tags 7, 3, 11; sends in the order 3, 11, 7: each must land by tag.
  const int recvTags[3] = {7, 3, 11}, sendTags[3] = {3, 11, 7};
  RegisteredBuffer src(s, p.send, 3 * 1024, "send"), dst(s, p.recv, 3 * 1024, "recv");
  void* rreq[3];
  for (int i = 0; i < 3; ++i) {
    void* data = dst.data() + i * 1024;
    void* mh = dst.mhandle();
    size_t cap = 1024;
    int tag = recvTags[i];
    rreq[i] = s.postRecv(p.recv, 1, &data, &cap, &tag, &mh);
  }
  void* sreq[3];
  for (int i = 0; i < 3; ++i) {
    size_t size = 100 + static_cast<size_t>(sendTags[i]);  // the size says which tag it was
    fillPattern(src.data() + i * 1024, size, static_cast<uint64_t>(sendTags[i]));
    sreq[i] = s.postSend(p.send, src.data() + i * 1024, size, sendTags[i], src.mhandle());
  }
  // Completion is tested out of posting order on purpose.
  std::vector<Pending> pending;
  for (int i = 2; i >= 0; --i) pending.push_back({rreq[i], 1, "tagged receive"});
  for (void* r : sreq) pending.push_back({r, 1, "tagged send"});
  s.waitAll(pending);
  const char* ncclDoes = "NCCL matches in posting order only: every isend of a connection carries the sender's rank";
  for (int i = 2; i >= 0; --i) {
    std::vector<int>& got = pending[static_cast<size_t>(2 - i)].sizes;
    require(got[0] == 100 + recvTags[i], strprintf("receive for tag %d got %d bytes (%s)", recvTags[i], got[0], ncclDoes));
    require(firstMismatch(dst.data() + i * 1024, static_cast<size_t>(got[0]), static_cast<uint64_t>(recvTags[i])) < 0,
            strprintf("receive for tag %d holds another message's bytes (%s)", recvTags[i], ncclDoes));
  }
  src.release();
  dst.release();
  s.close(p);
  return "3 messages matched by tag out of posting order, completed out of order";
}

std::string checkMultiRecv(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  int n = std::min(s.props().maxRecvs, 8);
  if (n < 2) throw CheckSkipped("maxRecvs is 1: the plugin does not group receives (NCCL then posts one per irecv)");
  Pair p = s.connect();
  // As NCCL does: one registration per buffer, each slot an offset into it with its handle.
  RegisteredBuffer src(s, p.send, static_cast<size_t>(n) << 20, "send"), dst(s, p.recv, static_cast<size_t>(n) << 20, "recv");
  std::vector<void*> data(static_cast<size_t>(n)), mhs(static_cast<size_t>(n), dst.mhandle());
  std::vector<size_t> caps(static_cast<size_t>(n), size_t{1} << 20);
  std::vector<int> tags(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    data[static_cast<size_t>(i)] = dst.data() + (static_cast<size_t>(i) << 20);
    tags[static_cast<size_t>(i)] = 100 + i;
  }
  std::vector<std::vector<Pending>> perComm(2);
  perComm[0].push_back({s.postRecv(p.recv, n, data.data(), caps.data(), tags.data(), mhs.data()), n, "grouped receive"});
  // Sent in reverse: NCCL's README has tags assign each send to a buffer of the first grouped
  // receive in the queue.
  for (int i = n - 1; i >= 0; --i) {
    size_t size = (size_t{1} << 20) - static_cast<size_t>(i) * 1000;
    char* at = src.data() + (static_cast<size_t>(i) << 20);
    fillPattern(at, size, static_cast<uint64_t>(i));
    perComm[1].push_back({s.postSend(p.send, at, size, 100 + i, src.mhandle()), 1, "send"});
  }
  s.waitInOrder(perComm);
  const std::vector<int>& got = perComm[0][0].sizes;
  for (int i = 0; i < n; ++i) {
    size_t size = (size_t{1} << 20) - static_cast<size_t>(i) * 1000;
    require(got[static_cast<size_t>(i)] == static_cast<int>(size), strprintf("slot %d reported %d bytes", i, got[static_cast<size_t>(i)]),
            nccl::kWrongData);
    require(firstMismatch(dst.data() + (static_cast<size_t>(i) << 20), size, static_cast<uint64_t>(i)) < 0,
            strprintf("slot %d holds wrong bytes", i), nccl::kWrongData);
  }
  src.release();
  dst.release();
  s.close(p);
  return strprintf("%d receives in one request, filled by tag", n);
}

std::string checkRegistration(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  Pair p = s.connect();
  Buffer b(size_t{4} << 20);
  // Many registrations of one buffer, on both comms, released in a different order (NCCL
  // registers user buffers again inside earlier registrations when regIsGlobal is set).
  std::vector<void*> handles;
  for (int i = 0; i < 16; ++i) handles.push_back(s.regMr(i % 2 ? p.recv : p.send, b.data(), b.size(), "one of 16"));
  for (int i = 15; i >= 0; --i) s.deregMr(i % 2 ? p.recv : p.send, handles[static_cast<size_t>(i)], "one of 16");
  s.transfer(p, size_t{4} << 20, 9);  // registers and deregisters around a transfer
  s.close(p);
  return "16 registrations on both comms, deregistered in reverse; transfers use registered buffers";
}

namespace {

// NCCL's proxies on one connection: each side keeps up to NCCL_STEPS requests in flight over a
// ring of NCCL_STEPS slots in one registered buffer, posts whenever a slot is free (an isend or
// irecv that answers "not now" is tried again on the next pass), and tests its oldest request
// only. Every send carries the sender's rank as its tag. The sender goes first in each pass, so
// sends are often posted before their receives.
class ProxyPair {
 public:
  ProxyPair(Session& s, Pair& p, int messages, size_t size)
      : s_(s), p_(p), total_(messages), size_(size),
        src_(s, p.send, Session::kNcclSteps * size, "send slots"), dst_(s, p.recv, Session::kNcclSteps * size, "recv slots"),
        sendReq_(Session::kNcclSteps, nullptr), recvReq_(Session::kNcclSteps, nullptr) {}

  void run() {
    Deadline d = s_.deadline();
    while (recvDone_ < total_ || sendDone_ < total_) {
      require(!d.expired(), strprintf("%d of %d messages sent and %d received before the time limit", sendDone_, total_, recvDone_),
              nccl::kHangs);
      progressSend();
      progressRecv();
    }
    src_.release();
    dst_.release();
  }

 private:
  static constexpr int kSenderRank = 1;
  char* slot(const RegisteredBuffer& b, int step) const { return b.data() + static_cast<size_t>(step % Session::kNcclSteps) * size_; }

  void progressSend() {
    if (sendPosted_ < total_ && sendPosted_ - sendDone_ < Session::kNcclSteps) {
      char* at = slot(src_, sendPosted_);
      fillPattern(at, size_, static_cast<uint64_t>(sendPosted_));
      void* req = nullptr;
      requireOk(s_.api().isend(p_.send, at, size_, kSenderRank, src_.mhandle(), nullptr, &req),
                strprintf("isend of message %d", sendPosted_), nccl::kOpFails);
      if (req != nullptr) sendReq_[static_cast<size_t>(sendPosted_++ % Session::kNcclSteps)] = req;
    }
    if (sendDone_ < sendPosted_) {
      int done = 0, size = -1;
      requireOk(s_.api().test(sendReq_[static_cast<size_t>(sendDone_ % Session::kNcclSteps)], &done, &size),
                strprintf("test of send %d", sendDone_), nccl::kOpFails);
      if (done) ++sendDone_;
    }
  }

  void progressRecv() {
    if (recvPosted_ < total_ && recvPosted_ - recvDone_ < Session::kNcclSteps) {
      void* data = slot(dst_, recvPosted_);
      void* mh = dst_.mhandle();
      size_t cap = size_;
      int tag = kSenderRank;
      std::memset(data, 0xee, size_);
      void* req = nullptr;
      requireOk(s_.api().irecv(p_.recv, 1, &data, &cap, &tag, &mh, nullptr, &req), strprintf("irecv of message %d", recvPosted_),
                nccl::kOpFails);
      if (req != nullptr) recvReq_[static_cast<size_t>(recvPosted_++ % Session::kNcclSteps)] = req;
    }
    if (recvDone_ < recvPosted_) {
      int done = 0, size = -1;
      requireOk(s_.api().test(recvReq_[static_cast<size_t>(recvDone_ % Session::kNcclSteps)], &done, &size),
                strprintf("test of receive %d", recvDone_), nccl::kOpFails);
      if (!done) return;
      require(size == static_cast<int>(size_), strprintf("receive %d reported %d bytes", recvDone_, size), nccl::kWrongData);
      require(firstMismatch(slot(dst_, recvDone_), size_, static_cast<uint64_t>(recvDone_)) < 0,
              strprintf("message %d corrupted", recvDone_), nccl::kWrongData);
      ++recvDone_;
    }
  }

  Session& s_;
  Pair& p_;
  int total_;
  size_t size_;
  RegisteredBuffer src_, dst_;
  std::vector<void*> sendReq_, recvReq_;
  int sendPosted_ = 0, sendDone_ = 0, recvPosted_ = 0, recvDone_ = 0;
};

}  // namespace

std::string checkInFlight(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  Pair p = s.connect();
  const int messages = 4 * Session::kNcclSteps;
  ProxyPair(s, p, messages, 256 * 1024).run();
  s.close(p);
  return strprintf("%d messages of 256 KiB with up to %d requests in flight per comm, as NCCL's proxies post them",
                   messages, Session::kNcclSteps);
}

std::string checkInFlightEager(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  Pair p = s.connect();
  const int n = 16;
  const size_t size = 256 * 1024;
  RegisteredBuffer src(s, p.send, n * size, "send"), dst(s, p.recv, n * size, "recv");
  std::vector<void*> sreq, rreq;
  for (int i = 0; i < n; ++i) {  // all sends first: the plugin must accept them before any receive
    fillPattern(src.data() + i * size, size, static_cast<uint64_t>(i));
    sreq.push_back(s.postSend(p.send, src.data() + i * size, size, i, src.mhandle()));
  }
  for (int i = 0; i < n; ++i) {
    void* data = dst.data() + i * size;
    void* mh = dst.mhandle();
    size_t cap = size;
    int tag = i;
    rreq.push_back(s.postRecv(p.recv, 1, &data, &cap, &tag, &mh));
  }
  std::vector<Pending> pending;
  for (int i = n - 1; i >= 0; --i) pending.push_back({rreq[static_cast<size_t>(i)], 1, "receive"});
  for (int i = n - 1; i >= 0; --i) pending.push_back({sreq[static_cast<size_t>(i)], 1, "send"});
  s.waitAll(pending);
  for (int i = 0; i < n; ++i) {
    require(firstMismatch(dst.data() + i * size, size, static_cast<uint64_t>(i)) < 0, strprintf("message %d corrupted", i));
  }
  src.release();
  dst.release();
  s.close(p);
  return strprintf("%d sends accepted before any receive, completed in reverse (NCCL keeps %d in flight and tests oldest first)",
                   n, Session::kNcclSteps);
}

namespace {

// One connection's traffic, driven by one thread: 12 messages of mixed sizes up to 3 MiB.
void trafficOnOnePair(Session& s, Pair& p, int id, std::string& error) {
  try {
    for (int m = 0; m < 48; m += 4) {
      size_t size = static_cast<size_t>((m * 7919 + id * 104729) % (3 << 20));
      s.transfer(p, size, m);
    }
  } catch (const std::exception& e) {
    error = strprintf("connection %d: %s", id, e.what());
  }
}

}  // namespace

std::string checkInterleaved(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  const int nPairs = 4;
  std::vector<Pair> pairs;
  for (int i = 0; i < nPairs; ++i) pairs.push_back(s.connect());
  std::vector<std::string> errors(nPairs);
  {
    // As NCCL's proxy threads of several communicators in one process call the plugin at once.
    std::vector<std::jthread> threads;  // each joins before the check ends
    for (int i = 0; i < nPairs; ++i)
      threads.emplace_back([&, i] { trafficOnOnePair(s, pairs[static_cast<size_t>(i)], i, errors[static_cast<size_t>(i)]); });
  }
  for (const std::string& e : errors) require(e.empty(), e);
  for (Pair& p : pairs) s.close(p);
  return strprintf("%d connections driven by %d threads at once", nPairs, nPairs);
}

}  // namespace weft::plugin::conformance
