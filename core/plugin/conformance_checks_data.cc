// Checks that move data: every size up to 1 GiB, tags, grouped receives, registration, many
// requests in flight, and several connections driven from threads at once.
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
  // Receives posted for tags 7, 3, 11; sends in the order 3, 11, 7: each must land by tag.
  const int recvTags[3] = {7, 3, 11}, sendTags[3] = {3, 11, 7};
  Buffer src(3 * 1024), dst(3 * 1024);
  void* rreq[3];
  for (int i = 0; i < 3; ++i) {
    void* data = dst.data() + i * 1024;
    size_t cap = 1024;
    int tag = recvTags[i];
    rreq[i] = s.postRecv(p.recv, 1, &data, &cap, &tag, nullptr);
  }
  void* sreq[3];
  for (int i = 0; i < 3; ++i) {
    size_t size = 100 + static_cast<size_t>(sendTags[i]);  // the size says which tag it was
    fillPattern(src.data() + i * 1024, size, static_cast<uint64_t>(sendTags[i]));
    sreq[i] = s.postSend(p.send, src.data() + i * 1024, size, sendTags[i], nullptr);
  }
  // Completion is tested out of posting order on purpose.
  std::vector<Session::Pending> pending;
  for (int i = 2; i >= 0; --i) pending.push_back({rreq[i], 1, "tagged receive"});
  for (void* r : sreq) pending.push_back({r, 1, "tagged send"});
  s.waitAll(pending);
  for (int i = 2; i >= 0; --i) {
    std::vector<int>& got = pending[static_cast<size_t>(2 - i)].sizes;
    require(got[0] == 100 + recvTags[i], strprintf("receive for tag %d got %d bytes", recvTags[i], got[0]));
    require(firstMismatch(dst.data() + i * 1024, static_cast<size_t>(got[0]), static_cast<uint64_t>(recvTags[i])) < 0,
            strprintf("receive for tag %d holds another message's bytes", recvTags[i]));
  }
  s.close(p);
  return "3 messages matched by tag, completed out of order";
}

std::string checkMultiRecv(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  int n = std::min(s.props().maxRecvs, 8);
  if (n < 2) throw CheckSkipped("maxRecvs is 1: the plugin does not group receives");
  Pair p = s.connect();
  Buffer src(static_cast<size_t>(n) << 20), dst(static_cast<size_t>(n) << 20);
  std::vector<void*> data(static_cast<size_t>(n));
  std::vector<size_t> caps(static_cast<size_t>(n), size_t{1} << 20);
  std::vector<int> tags(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    data[static_cast<size_t>(i)] = dst.data() + (static_cast<size_t>(i) << 20);
    tags[static_cast<size_t>(i)] = 100 + i;
  }
  void* rreq = s.postRecv(p.recv, n, data.data(), caps.data(), tags.data(), nullptr);
  std::vector<void*> sreq;
  for (int i = n - 1; i >= 0; --i) {  // sent in reverse: each finds its slot by tag
    size_t size = (size_t{1} << 20) - static_cast<size_t>(i) * 1000;
    char* at = src.data() + (static_cast<size_t>(i) << 20);
    fillPattern(at, size, static_cast<uint64_t>(i));
    sreq.push_back(s.postSend(p.send, at, size, 100 + i, nullptr));
  }
  std::vector<Session::Pending> pending = {{rreq, n, "grouped receive"}};
  for (void* r : sreq) pending.push_back({r, 1, "send"});
  s.waitAll(pending);
  const std::vector<int>& got = pending[0].sizes;
  for (int i = 0; i < n; ++i) {
    size_t size = (size_t{1} << 20) - static_cast<size_t>(i) * 1000;
    require(got[static_cast<size_t>(i)] == static_cast<int>(size), strprintf("slot %d reported %d bytes", i, got[static_cast<size_t>(i)]));
    require(firstMismatch(dst.data() + (static_cast<size_t>(i) << 20), size, static_cast<uint64_t>(i)) < 0,
            strprintf("slot %d holds wrong bytes", i));
  }
  s.close(p);
  return strprintf("%d receives in one request, filled by tag", n);
}

std::string checkRegistration(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  Pair p = s.connect();
  Buffer b(size_t{4} << 20);
  // Many registrations of one buffer, on both comms, released in a different order.
  std::vector<void*> handles;
  for (int i = 0; i < 16; ++i) {
    void* mh = nullptr;
    requireOk(s.api().regMr(i % 2 ? p.recv : p.send, b.data(), b.size(), WEFT_PTR_HOST, &mh), "regMr");
    handles.push_back(mh);
  }
  for (int i = 15; i >= 0; --i) requireOk(s.api().deregMr(i % 2 ? p.recv : p.send, handles[static_cast<size_t>(i)]), "deregMr");
  s.transfer(p, size_t{4} << 20, 9);  // registers and deregisters around a transfer
  s.close(p);
  return "16 registrations on both comms, deregistered in reverse; transfers use registered buffers";
}

std::string checkInFlight(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  Pair p = s.connect();
  const int n = 16;  // NCCL keeps up to 8 (v6) or 32 requests per comm in flight
  const size_t size = 256 * 1024;
  Buffer src(n * size), dst(n * size);
  std::vector<void*> sreq, rreq;
  for (int i = 0; i < n; ++i) {  // all sends first: the plugin must buffer or defer them
    fillPattern(src.data() + i * size, size, static_cast<uint64_t>(i));
    sreq.push_back(s.postSend(p.send, src.data() + i * size, size, i, nullptr));
  }
  for (int i = 0; i < n; ++i) {
    void* data = dst.data() + i * size;
    size_t cap = size;
    int tag = i;
    rreq.push_back(s.postRecv(p.recv, 1, &data, &cap, &tag, nullptr));
  }
  std::vector<Session::Pending> pending;
  for (int i = n - 1; i >= 0; --i) pending.push_back({rreq[static_cast<size_t>(i)], 1, "receive"});
  for (int i = n - 1; i >= 0; --i) pending.push_back({sreq[static_cast<size_t>(i)], 1, "send"});
  s.waitAll(pending);
  for (int i = 0; i < n; ++i) {
    require(firstMismatch(dst.data() + i * size, size, static_cast<uint64_t>(i)) < 0, strprintf("message %d corrupted", i));
  }
  s.close(p);
  return strprintf("%d sends posted before their receives, completed in reverse", n);
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
    std::vector<std::jthread> threads;  // ranks as threads; each joins before the check ends
    for (int i = 0; i < nPairs; ++i)
      threads.emplace_back([&, i] { trafficOnOnePair(s, pairs[static_cast<size_t>(i)], i, errors[static_cast<size_t>(i)]); });
  }
  for (const std::string& e : errors) require(e.empty(), e);
  for (Pair& p : pairs) s.close(p);
  return strprintf("%d connections driven by %d threads at once", nPairs, nPairs);
}

}  // namespace weft::plugin::conformance
