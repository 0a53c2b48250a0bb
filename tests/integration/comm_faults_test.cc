// Bad input and faults: every bad argument is an error that says what and where; a peer killed
// mid-transfer, an abort from another thread, ranks that never arrive, strangers on the
// listening ports and a second job on the same host end in a clear error or go unnoticed, never
// in a hang, and leave nothing in /dev/shm.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ranks.h"

namespace weft::testing {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

bool contains(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

// ---- arguments ---------------------------------------------------------------------------------

TEST(CommArguments, EveryBadArgumentSaysWhatAndWhere) {
  weft_unique_id_t id;
  ASSERT_EQ(weft_get_unique_id(&id), weftSuccess) << weft_last_error();
  weft_comm_t* comm = nullptr;
  EXPECT_EQ(weft_get_unique_id(nullptr), weftInvalidArgument);
  EXPECT_EQ(weft_comm_init_rank(nullptr, 1, id, 0), weftInvalidArgument);
  EXPECT_EQ(weft_comm_init_rank(&comm, 0, id, 0), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "nranks = 0")) << weft_last_error();
  EXPECT_EQ(weft_comm_init_rank(&comm, 2, id, 2), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "Invalid rank requested : 2/2")) << weft_last_error();
  EXPECT_EQ(weft_comm_init_rank(&comm, 2, id, -1), weftInvalidArgument);
  weft_unique_id_t zero{};
  EXPECT_EQ(weft_comm_init_rank(&comm, 1, zero, 0), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "unique id")) << weft_last_error();
  weft_config_t bad = WEFT_CONFIG_INITIALIZER;
  bad.magic = 0;
  EXPECT_EQ(weft_comm_init_rank_config(&comm, 1, id, 0, &bad), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "WEFT_CONFIG_INITIALIZER")) << weft_last_error();
  weft_config_t ctas = WEFT_CONFIG_INITIALIZER;
  ctas.min_ctas = 8;
  ctas.max_ctas = 2;
  EXPECT_EQ(weft_comm_init_rank_config(&comm, 1, id, 0, &ctas), weftInvalidArgument);
  EXPECT_EQ(weft_group_end(), weftInvalidUsage);
  EXPECT_TRUE(contains(weft_last_error(), "not in a group call")) << weft_last_error();

  // A one-rank communicator for the per-call checks.
  ASSERT_EQ(weft_comm_init_rank(&comm, 1, id, 0), weftSuccess) << weft_last_error();
  char buf[64];
  EXPECT_EQ(weft_send(buf, 1, weftInt8, 0, nullptr, nullptr), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "comm is NULL")) << weft_last_error();
  EXPECT_EQ(weft_send(buf, 1, static_cast<weft_datatype_t>(12), 0, comm, nullptr), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "unknown datatype 12")) << weft_last_error();
  EXPECT_EQ(weft_send(buf, SIZE_MAX / 2, weftInt32, 0, comm, nullptr), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "overflows")) << weft_last_error();
  EXPECT_EQ(weft_recv(buf, 1, weftInt8, 1, comm, nullptr), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "peer 1 is not a rank")) << weft_last_error();
  EXPECT_EQ(weft_recv(buf, 1, weftInt8, -1, comm, nullptr), weftInvalidArgument);
  EXPECT_EQ(weft_send(nullptr, 4, weftInt8, 0, comm, nullptr), weftInvalidArgument);
  int stream = 0;
  EXPECT_EQ(weft_send(buf, 1, weftInt8, 0, comm, &stream), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "stream")) << weft_last_error();
  EXPECT_EQ(weft_comm_count(comm, nullptr), weftInvalidArgument);
  EXPECT_EQ(weft_comm_finalize(comm), weftSuccess);
  EXPECT_EQ(weft_comm_finalize(comm), weftInvalidArgument);
  EXPECT_EQ(weft_comm_destroy(comm), weftSuccess);
  EXPECT_EQ(weft_comm_destroy(comm), weftInvalidArgument);
  EXPECT_TRUE(contains(weft_last_error(), "already been destroyed")) << weft_last_error();
  EXPECT_EQ(weft_send(buf, 1, weftInt8, 0, comm, nullptr), weftInvalidArgument);
  EXPECT_EQ(weft_comm_init_all(nullptr, 2, nullptr), weftInvalidArgument);
  weft_comm_t* comms[2];
  int dup[2] = {1, 1};
  EXPECT_EQ(weft_comm_init_all(comms, 2, dup), weftInvalidUsage);
  EXPECT_TRUE(contains(weft_last_error(), "device 1 appears twice")) << weft_last_error();
}

// Ranks that disagree on nranks, or claim the same rank, fail init with the root's reason.
TEST(CommArguments, MismatchedNranksAndTheSameRankTwiceFailInit) {
  JobSpec spec;
  spec.nranks = 2;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    weft_result_t rc = weft_comm_init_rank(&comm, rank == 0 ? 2 : 3, id, rank);
    RANK_CHECK(rc == weftInvalidUsage, "init returned %d: %s", static_cast<int>(rc), weft_last_error());
    RANK_CHECK(contains(weft_last_error(), "mismatch"), "message: %s", weft_last_error());
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  out = runJob(spec, [](int, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    weft_result_t rc = weft_comm_init_rank(&comm, 2, id, 0);
    RANK_CHECK(rc == weftInvalidUsage, "init returned %d: %s", static_cast<int>(rc), weft_last_error());
    RANK_CHECK(contains(weft_last_error(), "already checked in"), "message: %s", weft_last_error());
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

TEST(CommInitTimeout, NamesTheRanksThatNeverArrived) {
  JobSpec spec;
  spec.nranks = 2;
  spec.env[-1]["WEFT_INIT_TIMEOUT"] = "2";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    auto t0 = Clock::now();
    weft_result_t rc = weft_comm_init_rank(&comm, 5, id, rank);
    double s = secondsSince(t0);
    RANK_CHECK(rc != weftSuccess, "init of 5 ranks with 2 present succeeded");
    RANK_CHECK(contains(weft_last_error(), "ranks 2-4 never arrived"), "message: %s", weft_last_error());
    RANK_CHECK(s < 6, "took %.1f s with WEFT_INIT_TIMEOUT=2", s);
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

// ---- peers that die, aborts ---------------------------------------------------------------------

// Rank 2 is killed while sending 256 MiB to rank 1. Rank 1's receive and rank 0's next operation
// (with a live peer) fail within 10 s naming rank 2; abort then frees everything.
void peerKilled(const std::map<std::string, std::string>& env) {
  JobSpec spec;
  spec.nranks = 3;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1] = env;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 3, id, rank));
    const size_t bytes = size_t{256} << 20;
    std::vector<char> buf(bytes, 1);
    if (rank == 2) {
      std::thread killer([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        raise(SIGKILL);
      });
      for (;;) (void)weft_send(buf.data(), bytes, weftInt8, 1, comm, nullptr);
    }
    auto t0 = Clock::now();
    weft_result_t rc = weftSuccess;
    if (rank == 1) {
      // Whole messages may get through before the kill: receive until the error (at most 200).
      for (int i = 0; i < 200 && rc == weftSuccess; ++i) rc = weft_recv(buf.data(), bytes, weftInt8, 2, comm, nullptr);
    } else {
      // Rank 0 waits on rank 1, which is alive but will never send.
      rc = weft_recv(buf.data(), 16, weftInt8, 1, comm, nullptr);
    }
    double s = secondsSince(t0);
    RANK_CHECK(rc == weftRemoteError, "rank %d: returned %d after %.1f s: %s", rank, static_cast<int>(rc), s, weft_last_error());
    RANK_CHECK(contains(weft_last_error(), "rank 2"), "rank %d: message does not name rank 2: %s", rank, weft_last_error());
    RANK_CHECK(s < 10, "rank %d: took %.1f s", rank, s);
    weft_result_t async = weftSuccess;
    RANK_OK(weft_comm_get_async_error(comm, &async));
    RANK_CHECK(async == weftRemoteError, "async error %d", static_cast<int>(async));
    rc = weft_send(buf.data(), 1, weftInt8, 0, comm, nullptr);
    RANK_CHECK(rc == weftRemoteError, "next call returned %d", static_cast<int>(rc));
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].signal, SIGKILL) << out[2].output;
  out.pop_back();
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

TEST(CommFaults, PeerKilledDuringASharedMemoryTransfer) { peerKilled({}); }

TEST(CommFaults, PeerKilledDuringANetTransfer) {
  peerKilled({{"NCCL_SHM_DISABLE", "1"}, {"NCCL_SOCKET_IFNAME", "lo"}});
}

TEST(CommFaults, AbortFromAnotherThreadEndsANonBlockingInit) {
  weft_unique_id_t id;
  ASSERT_EQ(weft_get_unique_id(&id), weftSuccess) << weft_last_error();
  weft_config_t cfg = WEFT_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  weft_comm_t* comm = nullptr;
  ASSERT_EQ(weft_comm_init_rank_config(&comm, 2, id, 0, &cfg), weftInProgress) << weft_last_error();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  weft_result_t state = weftSuccess;
  ASSERT_EQ(weft_comm_get_async_error(comm, &state), weftSuccess);
  EXPECT_EQ(state, weftInProgress);
  auto t0 = Clock::now();
  std::thread aborter([comm] { EXPECT_EQ(weft_comm_abort(comm), weftSuccess); });
  aborter.join();
  EXPECT_LT(secondsSince(t0), 1.0);
  EXPECT_TRUE(shmLeftovers(getpid()).empty());
}

TEST(CommFaults, AbortFromAnotherThreadEndsABlockedReceive) {
  JobSpec spec;
  spec.nranks = 2;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    char buf[16];
    auto t0 = Clock::now();
    if (rank == 0) {
      std::atomic<double> abortedAt{0};
      std::thread aborter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        abortedAt = secondsSince(t0);
        (void)weft_comm_abort(comm);
      });
      weft_result_t rc = weft_recv(buf, sizeof(buf), weftInt8, 1, comm, nullptr);
      double s = secondsSince(t0);
      aborter.join();
      RANK_CHECK(rc != weftSuccess, "receive succeeded");
      RANK_CHECK(s - abortedAt.load() < 1.0, "receive returned %.2f s after the abort", s - abortedAt.load());
      return 0;
    }
    // Rank 1 waits on rank 0, which aborts: it learns within 10 s.
    weft_result_t rc = weft_recv(buf, sizeof(buf), weftInt8, 0, comm, nullptr);
    double s = secondsSince(t0);
    RANK_CHECK(rc == weftRemoteError, "returned %d: %s", static_cast<int>(rc), weft_last_error());
    RANK_CHECK(contains(weft_last_error(), "rank 0"), "message: %s", weft_last_error());
    RANK_CHECK(s < 10, "took %.1f s", s);
    RANK_OK(weft_comm_destroy(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

// ---- strangers and neighbours ------------------------------------------------------------------

// TCP ports this process listens on (from /proc: its socket inodes in LISTEN state).
std::vector<int> listeningPorts() {
  std::set<std::string> inodes;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      char target[256] = {};
      std::string link = std::string("/proc/self/fd/") + e->d_name;
      ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
      if (n > 0 && std::strncmp(target, "socket:[", 8) == 0) inodes.insert(std::string(target + 8, strlen(target + 8) - 1));
    }
    closedir(d);
  }
  std::vector<int> ports;
  for (const char* file : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::istringstream ss(line);
      std::string sl, local, remote, st, queues, tr, retr, uid, timeout, inode;
      ss >> sl >> local >> remote >> st >> queues >> tr >> retr >> uid >> timeout >> inode;
      if (st != "0A" || inodes.count(inode) == 0) continue;  // 0A: LISTEN
      ports.push_back(std::stoi(local.substr(local.find(':') + 1), nullptr, 16));
    }
  }
  return ports;
}

// Connects to 127.0.0.1 or the given address: sends `bytes` (may be empty) and keeps the socket.
int stranger(const sockaddr_storage& to, const std::string& bytes) {
  int fd = socket(to.ss_family, SOCK_STREAM, 0);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&to), to.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6)) != 0) {
    close(fd);
    return -1;
  }
  if (!bytes.empty()) (void)send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  return fd;
}

TEST(CommStrangers, GarbageAndSilentConnectionsOnEveryListeningPortAreIgnored) {
  JobSpec spec;
  spec.nranks = 3;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    std::vector<int> fds;
    sockaddr_storage root{};
    std::memcpy(&root, id.internal + 8, 28);
    if (rank == 1) {
      // The root port, before anyone checked in: garbage, a wrong magic, and silence.
      fds.push_back(stranger(root, "GET / HTTP/1.0\r\n\r\n"));
      fds.push_back(stranger(root, std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x01\x00\x00\x00", 12)));
      fds.push_back(stranger(root, ""));
    }
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 3, id, rank));
    std::vector<int> ports = listeningPorts();
    RANK_CHECK(!ports.empty(), "found no listening port of this rank");
    for (int port : ports) {
      sockaddr_storage to = root;
      reinterpret_cast<sockaddr_in*>(&to)->sin_port = htons(static_cast<uint16_t>(port));
      if (to.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&to)->sin6_port = htons(static_cast<uint16_t>(port));
      fds.push_back(stranger(to, std::string(64, 'x')));
      fds.push_back(stranger(to, ""));
    }
    // Send/recv connects lazily through the bootstrap's listener, where strangers now wait.
    std::vector<int> s(1 << 18, rank), r(1 << 18, -1);
    int next = (rank + 1) % 3;
    int prev = (rank + 2) % 3;
    RANK_OK(weft_group_start());
    RANK_OK(weft_send(s.data(), s.size(), weftInt32, next, comm, nullptr));
    RANK_OK(weft_recv(r.data(), r.size(), weftInt32, prev, comm, nullptr));
    RANK_OK(weft_group_end());
    for (int v : r) RANK_CHECK(v == prev, "got %d from rank %d", v, prev);
    RANK_OK(weft_comm_destroy(comm));
    for (int fd : fds)
      if (fd >= 0) close(fd);
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

TEST(CommJobs, TwoJobsSideBySideNeverCross) {
  auto job = [](int tag) {
    Job j;
    j.spec.nranks = 2;
    j.fn = [tag](int rank, const weft_unique_id_t& id) {
      weft_comm_t* comm = nullptr;
      RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
      std::vector<int> s(1 << 20, tag * 10 + rank), r(1 << 20, -1);
      for (int i = 0; i < 20; ++i) {
        RANK_OK(weft_group_start());
        RANK_OK(weft_send(s.data(), s.size(), weftInt32, 1 - rank, comm, nullptr));
        RANK_OK(weft_recv(r.data(), r.size(), weftInt32, 1 - rank, comm, nullptr));
        RANK_OK(weft_group_end());
        RANK_CHECK(r[0] == tag * 10 + 1 - rank && r.back() == r[0], "job %d rank %d got %d", tag, rank, r[0]);
      }
      RANK_OK(weft_comm_destroy(comm));
      return 0;
    };
    return j;
  };
  std::vector<std::vector<RankOutcome>> out = runJobs({job(1), job(2)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(failures(out[0]), "");
  EXPECT_EQ(failures(out[1]), "");
}

TEST(CommFaults, ReceiveCountThatDiffersFromTheSendIsAnError) {
  JobSpec spec;
  spec.nranks = 2;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    std::vector<char> buf(1 << 20);
    if (rank == 0) {
      RANK_OK(weft_send(buf.data(), 1000, weftInt8, 1, comm, nullptr));
      // Rank 1's failure reaches this rank through the watch ring.
      weft_result_t async = weftSuccess;
      auto until = Clock::now() + std::chrono::seconds(10);
      while (async == weftSuccess && Clock::now() < until) {
        RANK_OK(weft_comm_get_async_error(comm, &async));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      RANK_CHECK(async == weftRemoteError, "async error %d", static_cast<int>(async));
      RANK_CHECK(contains(weft_last_error(), "rank 1"), "message: %s", weft_last_error());
    } else {
      weft_result_t rc = weft_recv(buf.data(), 2000, weftInt8, 0, comm, nullptr);
      RANK_CHECK(rc == weftInvalidUsage, "returned %d: %s", static_cast<int>(rc), weft_last_error());
      RANK_CHECK(contains(weft_last_error(), "count differs"), "message: %s", weft_last_error());
    }
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

}  // namespace
}  // namespace weft::testing
