// NCCL's NET transport as the GPU sees it: the kernel's end of a connection to a rank on another
// host is a FIFO in pinned host memory that the kernel reaches (mapped), with its own tail and
// head, exactly as a P2P connection's; a proxy thread of the communicator moves each slot between
// that FIFO and the net plugin (runtime::NetSend/NetRecv, host-staged: one copy each way).
//
//   sender:   kernel fills slot k, stores tail (Simple) or its lines' flags (LL)
//             proxy sees it, copies the slot into the plugin's slot, posts it, stores head = k + 1
//   receiver: proxy waits for head (the kernel freed slot k - kSteps), receives slot k into the
//             FIFO, stores tail = k + 1 (Simple; LL lines carry their flags)
//
// The proxy learns the bytes of each slot from the host's plan of every launch (post()), as
// NCCL's proxy learns them from its proxy ops; a receiver that gets another size than the one
// its plan says fails the communicator naming both (the ranks called different collectives).
// It is host code: the device tests run it with the emulated runtime, the same FIFOs.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/runtime/comm.h"
#include "core/runtime/transport.h"

namespace weft::device {

// One slot of a launch on a connection: its protocol (DevProto) and bytes (LL: of lines).
struct ProxySlot {
  uint8_t proto;
  uint32_t bytes;
};

// The kernel-visible memory of one connection over the network, at host addresses.
struct ProxyFifo {
  char* simple = nullptr;  // kSteps slots of simpleBytes
  char* ll = nullptr;      // kSteps slots of llBytes of 16-byte lines; null where only Simple runs
  uint64_t* tail = nullptr;
  uint64_t* head = nullptr;
  size_t simpleBytes = 0, llBytes = 0;
};

class NetProxy {
 public:
  explicit NetProxy(runtime::Comm& comm);
  ~NetProxy();  // stops the thread; the connections go with it
  NetProxy(const NetProxy&) = delete;
  NetProxy& operator=(const NetProxy&) = delete;

  // Adds a connection (the thread starts at the first); returns its id for post().
  int addSend(std::unique_ptr<runtime::SendConnection> c, const ProxyFifo& fifo, int channel, int peer);
  int addRecv(std::unique_ptr<runtime::RecvConnection> c, const ProxyFifo& fifo, int channel, int peer);
  // Queues the slots the next launch moves on connection `id`, in the kernel's order.
  void post(int id, const std::vector<ProxySlot>& slots);

 private:
  struct Conn {
    std::unique_ptr<runtime::SendConnection> send;
    std::unique_ptr<runtime::RecvConnection> recv;
    ProxyFifo fifo;
    int channel = 0, peer = 0;
    std::deque<ProxySlot> queue;  // the proxy thread's
    uint64_t done = 0;            // slots moved
    size_t linesSeen = 0;         // LL send: lines of the next slot known to be full
    bool draining = false;        // sends posted to the plugin and not yet completed
  };
  void run();
  Status progressSend(Conn& c, bool* progressed);
  Status progressRecv(Conn& c, bool* progressed);
  int add(std::unique_ptr<Conn> c);

  runtime::Comm& comm_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Conn>> conns_;            // guarded by mu_ for adding; the thread's otherwise
  std::vector<std::pair<int, ProxySlot>> incoming_;     // posted, not yet taken by the thread
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace weft::device
