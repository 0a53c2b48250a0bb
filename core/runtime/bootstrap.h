// The bootstrap network of a communicator, as NCCL 2.28's: a root that links the ranks into a
// ring, a ring allgather, tagged point-to-point messages (one connection each), a barrier. Unlike
// NCCL, every wait ends: at the init deadline (the error names the ranks that never arrived), on
// abort, or when a peer dies (the watch ring, below).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/base/status.h"
#include "core/config/settings.h"
#include "core/runtime/socket.h"

namespace weft::runtime {

// What the 128-byte unique id holds (NCCL's ncclBootstrapHandle): the job's magic and the root.
struct BootstrapHandle {
  uint64_t magic = 0;
  SockAddr addr;
};
static_assert(sizeof(BootstrapHandle) <= 128, "fits in the unique id");

// NCCL_MAGIC: the public magic of ids made from NCCL_COMM_ID.
inline constexpr uint64_t kNcclCommIdMagic = 0x0280028002800280ull;

// Starts a root thread listening on `addr` (port 0: any) for one communicator's ranks. It serves
// them until all nranks have checked in, or until `timeout` has passed (then every rank that did
// check in gets an error naming those that did not). Returns the handle to put in the id.
Result<BootstrapHandle> startRoot(const SockAddr& addr, uint64_t magic, std::chrono::milliseconds timeout);

// Waits for the root thread of `magic` started in this process, if any, to end.
void joinRoot(uint64_t magic);
// Ends the root thread of `magic` started in this process, if any (a failed or aborted init must
// not leave it waiting for ranks until its deadline).
void stopRoot(uint64_t magic);

// The bootstrap interface's address (port 0), chosen once per process. `root` (NCCL_COMM_ID)
// steers the choice to the root's subnet. Logs NCCL's "Bootstrap: Using <if>:<ip><port>" line.
Result<SockAddr> bootstrapAddress(const config::Settings& settings, const SockAddr* root);

class Bootstrap {
 public:
  // Joins the communicator through the root of `handle` and connects the ring. Every wait ends
  // at `deadline` (its abort flag is the communicator's).
  static Result<std::unique_ptr<Bootstrap>> init(const BootstrapHandle& handle, const SockAddr& local, int rank,
                                                 int nranks, const Deadline& deadline);
  ~Bootstrap();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  uint64_t magic() const { return magic_; }

  // data holds nranks slices of `size` bytes; slice `rank` is this rank's on entry, all on return.
  Status allgather(void* data, size_t size, const Deadline& deadline);
  Status barrier(const Deadline& deadline);

  // Tagged messages. send opens a connection to the peer, sends, closes; it does not wait for the
  // peer to receive. recv takes the message of (peer, tag), keeping others for later calls.
  Status send(int peer, uint32_t tag, const void* data, size_t size, const Deadline& deadline);
  Status recv(int peer, uint32_t tag, std::vector<char>& out, const Deadline& deadline);

  // The watch ring: a second pair of connections to the ring neighbours, read only by a thread.
  // It reports a neighbour that died (its connection closed without a goodbye), one that sent
  // nothing for `peerTimeout` (stopped, frozen or cut off: the thread sends a heartbeat every
  // second or so, so a healthy process is never silent however busy its caller is; 0: no
  // heartbeats), and failures passed along the ring: `onFailure(rank, text)` is called once, and
  // the failure goes on to the other neighbour. Goodbyes (an orderly close, with the number of
  // collectives the rank called) go around the ring too: `onGoodbye(rank, collectives)` is called
  // once per rank. Say goodbye() before an orderly close, fail() to report this rank's own failure
  // or abort.
  struct WatchEvents {
    std::function<void(int failedRank, const std::string& text)> onFailure;
    std::function<void(int rank, uint64_t collectives)> onGoodbye;
  };
  void startWatch(WatchEvents events, std::chrono::milliseconds peerTimeout);
  void goodbye(uint64_t collectives);
  void fail(int failedRank, const std::string& reason = "");
  void stopWatch();

 private:
  Bootstrap() = default;
  struct WatchMessage;
  void watchLoop();
  void sendWatch(char kind, int rank, uint64_t count, int onlySide = -1, const std::string& reason = "");

  int rank_ = 0;
  int nranks_ = 0;
  uint64_t magic_ = 0;
  Listener ringListen_, p2pListen_;
  Fd next_, prev_;             // ring: send to next, receive from prev
  Fd watchNext_, watchPrev_;   // watch ring
  std::vector<SockAddr> p2pAddrs_;
  struct Message {
    int peer;
    uint32_t tag;
    std::vector<char> data;
  };
  std::deque<Message> unexpected_;

  std::mutex watchMutex_;
  std::thread watch_;
  Fd stopPipeRead_, stopPipeWrite_;
  WatchEvents events_;
  std::chrono::milliseconds peerTimeout_{0};
  std::atomic<bool> failed_{false};
  std::atomic<bool> watchStopped_{true};
};

// Bootstrap tags (NCCL's values), in the high bits so that transport tags never clash.
inline constexpr uint32_t kTagConnect = 1u << 31;
inline constexpr uint32_t kTagSplit = 1u << 29;

}  // namespace weft::runtime
