// `weft status`: a running job answers, from any of its hosts, what every rank of every
// communicator is doing. Each process that has a communicator runs one small service (a thread):
// a Unix socket in a directory only its user can enter (for the `weft status` command on this
// host), and a TCP port on the bootstrap interface (for the other ranks' services, which must
// prove they belong to the job with its magic; anyone else gets nothing). Asked locally, the
// service reports this process's communicators, each with every rank's own report, gathered from
// the ranks' services in parallel with a deadline: a rank that does not answer in time is
// stopped, frozen or unreachable, and is reported as such.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/runtime/socket.h"

namespace weft::runtime {

class Comm;

inline constexpr uint32_t kStatusVersion = 1;

// One rank's state, as that rank's process reports it.
struct RankReport {
  int32_t rank = -1;
  int32_t nranks = 0;
  int32_t pid = 0;
  int32_t state = 0;         // a Code: 0 healthy, 7 initializing, else the failure that broke it
  uint64_t collectives = 0;  // collectives called
  uint64_t running = 0;      // the number of the collective running now (0: none)
  int32_t finalized = 0;
  char runningName[28] = {};
  char host[64] = {};
  char error[256] = {};
};

// What a local query returns per communicator: every rank's report, or none in time.
struct RankEntry {
  int32_t answered = 0;
  float millis = 0;  // how long the rank took to answer
  SockAddr statusAddr;
  RankReport report;
};
struct CommStatus {
  uint64_t commHash = 0;
  int32_t nranks = 0;
  int32_t askedRank = 0;  // the rank of this process that gathered the reports
  std::vector<RankEntry> ranks;
};

// The directory of the Unix sockets: WEFT_STATUS_DIR, else $XDG_RUNTIME_DIR/weft, else
// /tmp/weft-<uid>.
std::string statusDir();

// Registers a communicator once its peers are known (starts the service on first use; its
// address goes into the PeerInfo this rank publishes) and removes it before it is freed.
Result<SockAddr> statusServiceAddress(const SockAddr& bootstrapAddr);
void registerForStatus(Comm* comm);
void unregisterForStatus(Comm* comm);

// The client side (the `weft status` command): asks the service of process `pid` through its
// socket in `dir`, waiting at most `timeout`.
Result<std::vector<CommStatus>> queryStatus(const std::string& dir, int pid, std::chrono::milliseconds timeout);
// The pids of this user's processes with a status socket in `dir` (stale sockets of processes
// that are gone are removed).
std::vector<int> statusProcesses(const std::string& dir);

}  // namespace weft::runtime
