// A communicator at run time: its bootstrap, its peers, the channels weft's topology core built
// for it, and the connections (shared memory or net plugin) that carry data. The C API
// (core/api/comm_api.cc) is a thin shell over these functions.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/base/status.h"
#include "core/config/settings.h"
#include "core/connect/connection.h"
#include "core/plugin/net_loader.h"
#include "core/runtime/bootstrap.h"
#include "core/runtime/shm.h"
#include "core/runtime/transport.h"
#include "core/tune/model.h"

namespace weft::runtime {

// What every rank tells the others at init (fixed size: it travels in one allgather).
struct PeerInfo {
  int32_t rank = 0;
  int32_t dev = -1;    // the (emulated) GPU this rank plays (-1 in the exchange: its local rank)
  int32_t pid = 0;
  int32_t emulated = 0;  // 1: NCCL_TOPO_FILE devices, 0: CPU endpoints
  uint64_t hostHash = 0;
  uint64_t shmDev = 0;   // st_dev of /dev/shm: equal only where segments can be shared
  uint64_t topoHash = 0; // hash of the topology file's path and size (emulated mode)
  char bellName[64] = {};
  SockAddr statusAddr;   // this process's status service (`weft status` asks every rank there)
  // The CPUs this process may run on (its affinity mask, CPUs 0-1023): a host's ranks together
  // may use the union of theirs (placeRanks: oversubscribed).
  uint64_t cpuMask[16] = {};
};

// NCCL's tuning of an emulated communicator (NCCL_TOPO_FILE): the model's inputs and tables, as
// NCCL's init leaves them, and the tuner plugin (NCCL_TUNER_PLUGIN) when one was loaded.
struct Tuning {
  tune::CommInputs inputs;
  tune::TuneSettings settings;
  tune::Model model;
  std::unique_ptr<tune::TunerHook> tuner;  // null: none
};

// Where the communicator's channels come from.
enum class DeviceMode { kEmulated, kCpu };

struct CommOptions {
  bool blocking = true;
  int minCTAs = 1;
  int maxCTAs = 64;
  std::string netName;  // "" : any
  int device = -1;      // -1: the rank's index on its host (or WEFT_DEVICE)
};

class Comm {
 public:
  Comm() = default;
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // Identity
  int rank = 0;
  int nranks = 0;
  int dev = 0;
  int node = 0;
  int nNodes = 1;
  int localRank = 0;
  int localRanks = 1;
  // Some host has more ranks than CPUs they may run on together (the union of their affinity
  // masks): a step there costs a context switch. Every rank computes the same from the exchange.
  bool oversubscribed = false;
  uint64_t commHash = 0;
  CommOptions options;
  config::Settings settings;
  config::Selection algorithms;  // NCCL_ALGO, parsed once at init
  DeviceMode mode = DeviceMode::kCpu;

  // Peers
  std::vector<PeerInfo> peers;
  std::vector<int> rankNode;       // node of every rank
  std::unique_ptr<Bootstrap> bootstrap;
  std::optional<BellSegment> myBell;
  std::vector<std::optional<BellSegment>> peerBells;  // same-host ranks only
  std::unique_ptr<plugin::NetInstance> net;
  size_t stepSize = 512 * 1024;

  // Channels and their connections: [connIndex 0 collectives, 1 p2p][channel][peer].
  connect::Connection channels;
  // Emulated devices: the topology file's NET device where each ring channel of this rank's node
  // leaves it (send) and enters it (receive), by ring-graph channel; empty on CPU endpoints.
  std::vector<int> ringNetSend, ringNetRecv;
  // Emulated devices: NCCL's model picks each collective's algorithm and channels; CPU endpoints
  // (null) use weft's size rule (core/coll/algorithm.h).
  std::unique_ptr<Tuning> tuning;
  // CPU endpoints with NCCL_TUNER_PLUGIN set: the tuner, which may override the size rule.
  std::unique_ptr<tune::TunerHook> hostTuner;
  struct Key {
    int connIndex, channel, peer;
    bool operator<(const Key& o) const {
      return connIndex != o.connIndex ? connIndex < o.connIndex : channel != o.channel ? channel < o.channel : peer < o.peer;
    }
  };
  std::map<Key, std::unique_ptr<SendConnection>> sends;
  std::map<Key, std::unique_ptr<RecvConnection>> recvs;
  uint64_t connEpoch = 0;        // bumped whenever sends/recvs change (plans cached on them)
  std::shared_ptr<void> collCache;  // core/coll's last plan on this communicator (run.cc)
  // Collectives on GPU buffers (core/device/comm_device.cc): the device connections, made at the
  // first such collective; null until then.
  std::shared_ptr<void> deviceState;
  // The kernels' abort flag (pinned host memory they poll): stopAll stores 1 so that a kernel
  // waiting for a failed or aborted peer leaves.
  std::atomic<uint64_t*> deviceAbort{nullptr};
  bool treesConnected = false;  // tree peers are connected at the first Tree collective
  bool doublingConnected = false;  // recursive doubling's peers, at the first such collective
  // CPU endpoints: how allreduce picks recursive doubling (core/coll/algorithm.cc reads
  // WEFT_HOST_ALGO and NCCL_ALGO once, at the first allreduce): -1 not read yet, 0 never, 1 by
  // the cost model, 2 always.
  int hostDoubling = -1;
  std::atomic<uint64_t> opCount{0};  // collectives called (NCCL's opCount in its COLL line; read by `weft status`)
  std::chrono::seconds opTimeout{0};  // WEFT_OP_TIMEOUT: an operation without progress this long fails (0: never)
  // The collective running now: its number (opCount when it was called, 1-based; 0: none) and
  // name, read by the watch thread when a peer says goodbye.
  std::atomic<uint64_t> collRunning{0};
  std::atomic<const char*> collRunningName{nullptr};
  // Ranks that left in order (finalize/destroy), with the number of collectives each called.
  std::mutex departedMutex;
  std::map<int, uint64_t> departed;
  // Set (seq_cst) once `departed` has an entry: startCollective skips the lock until then. With
  // collRunning it forms a Dekker pair: a goodbye and a starting collective see one another.
  std::atomic<bool> anyDeparted{false};

  // State. `stop` ends every wait (abort, or a failure anywhere); `error` says why.
  std::atomic<bool> stop{false};
  std::atomic<bool> aborting{false};
  std::atomic<int> state{static_cast<int>(Code::kInProgress)};
  std::mutex errorMutex;
  Status error;
  std::thread initThread;
  std::atomic<int> activeCalls{0};
  bool finalized = false;
  uint64_t rootMagic = 0;  // the root this rank started (NCCL_COMM_ID), joined after init
  std::atomic<bool> closed{false};  // finalized: its connections are gone
  uint64_t jobMagic = 0;   // the id's magic: this process may run its root
  void* apiHandle = nullptr;  // the C API's weft_comm_t holding this communicator
  // weft_redop_create_pre_mul_sum's ops: op weftNumOps + i is userOps[i] (type, scalar bytes).
  struct UserOp {
    bool live = false;
    int type = 0;
    uint64_t scalar = 0;
  };
  std::vector<UserOp> userOps;

  Bell* bellOf(int peer) const;
  bool sameHost(int peer) const { return peers[static_cast<size_t>(peer)].hostHash == peers[static_cast<size_t>(rank)].hostHash; }
  bool useShm(int peer) const;
  // Records the first failure, stops every wait and tells the peers (watch ring, SHM flags).
  void fail(const Status& why, int failedRank);
  // Stops every wait of this rank and tells the peers that `failedRank` failed (shared-memory
  // flags, the watch ring): fail's second half, and all of an abort.
  // `reason` (what failed, in a few words) travels with the report on the watch ring.
  void stopAll(int failedRank, const std::string& reason = "");
  // The error to return after a wait was stopped: the recorded one, or "aborted".
  Status stoppedStatus(const std::string& what);
  // A peer's goodbye (watch thread): fails the collective running now if the peer left before it.
  void noteGoodbye(int peer, uint64_t collectives);
  // Marks collective `seq` (1-based) as running; an error (and the communicator failed) if a rank
  // already left before calling it: mismatched calls, which would otherwise wait forever.
  Status startCollective(uint64_t seq, const char* name);
  void endCollective() { collRunning.store(0); }
  // The device path's startCollective: collective `seq` is being enqueued on GPU buffers (it runs
  // later, in a kernel); an error if a rank already left before calling it. A goodbye that comes
  // later fails the communicator while an enqueued collective is past the peer's last (its
  // kernel leaves at the abort flag).
  Status enqueueingOnDevice(uint64_t seq, const char* name);
  // An error if a rank left before calling collective `seq`.
  Status departedBefore(uint64_t seq, const char* name);
  std::atomic<uint64_t> deviceSeq{0};              // the last collective enqueued on GPU buffers
  std::atomic<const char*> deviceSeqName{nullptr};
  // The deadline of a wait inside an operation (connecting peers at the first send/recv, a split):
  // WEFT_OP_TIMEOUT when set, else none (abortable).
  Deadline opDeadline(const std::string& what) {
    if (opTimeout.count() == 0) return Deadline::never(&stop, what);
    return Deadline::in(opTimeout, &stop,
                        what + " (WEFT_OP_TIMEOUT=" + std::to_string(opTimeout.count()) + " s; the communicator must be aborted)");
  }
  // A transport error that does not say who failed (a net plugin's "remote error": the peer
  // closed the connection because something failed somewhere), or that names another rank but
  // not why (a failure flag in a shared-memory segment), is usually followed within milliseconds
  // by the watch ring's report naming the rank that failed first, with its reason: waits up to
  // 200 ms for that report and returns it, else `s`. Passing on `s` instead would hand the other
  // ranks this rank's guess in place of the failing rank's reason.
  Status rootCause(Status s);
  // A failure of this rank alone: its waits stop and its calls fail, but nothing is passed to the
  // peers (each finds the same cause itself, and would otherwise get this rank's name instead).
  void failLocally(const Status& why);
};

// Init of one rank; runs in the caller's thread (blocking) or the comm's init thread.
Status initComm(Comm& comm, const BootstrapHandle& handle, int nranks, int rank);

// Creates the connections (connIndex, channel, peer) listed, on every communicator at once: all
// receive sides first, then all send sides, then every connection is finished together, so one
// thread can connect several ranks of one communicator (weft_comm_init_all) without deadlock.
struct ConnectRequest {
  Comm* comm;
  int connIndex;
  int channel;
  int peer;
  bool send;
};
// `deadline` bounds the waits (init's WEFT_INIT_TIMEOUT); null: each communicator's operation
// deadline (abortable, unbounded, as a point-to-point call waits for its peer).
// `beforeCleanup` (if any) sees a failure while the connections made so far still exist: a
// shared-memory segment is unlinked when its connection goes, and a peer that then finds it gone
// reports this rank as failed; recording the local error first keeps the root cause here.
Status connectAll(const std::vector<ConnectRequest>& requests, const Deadline* deadline = nullptr,
                  const std::function<void(const Status&)>& beforeCleanup = {});

// Split: a collective over `parent` (see weft_comm_split). Returns nullopt for
// WEFT_SPLIT_NOCOLOR, else the new communicator's bootstrap handle, size and this rank's rank;
// `rootMagic` is set where this rank started the new root (initComm joins it).
struct SplitPlan {
  BootstrapHandle handle;
  int nranks = 0;
  int rank = 0;
  uint64_t rootMagic = 0;
};
Result<std::optional<SplitPlan>> planSplit(Comm& parent, int color, int key);

// Orderly teardown (finalize): says goodbye on the watch ring and closes connections.
void closeComm(Comm& comm);

}  // namespace weft::runtime
