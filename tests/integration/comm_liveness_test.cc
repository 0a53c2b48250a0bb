// Liveness and mismatched calls: a rank that is stopped (SIGSTOP) is declared failed by its ring
// neighbours after WEFT_PEER_TIMEOUT and every other rank's call fails naming it, and SIGCONT does
// not bring the broken communicator back; a rank merely busy for twice the timeout is not dropped
// (the heartbeat is its process's, not its caller's); a rank that leaves (finalize/destroy) after k
// collectives makes a peer's (k+1)th fail at once, naming both counts; WEFT_OP_TIMEOUT ends an
// operation that stopped moving, naming where it waits. Every job under a deadline.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ranks.h"

namespace weft::testing {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
bool contains(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

constexpr int kPeerTimeout = 3;  // seconds, for these tests (the default is 30)

// A child of this rank's process that sends it SIGCONT after `seconds`.
void resumeLater(double seconds) {
  pid_t me = getpid();
  if (fork() == 0) {
    usleep(static_cast<useconds_t>(seconds * 1e6));
    kill(me, SIGCONT);
    _exit(0);
  }
}

// n ranks; rank `stopped` stops itself (the whole process) during a large allreduce and is
// resumed after 3 timeouts. The others fail naming it within the timeout plus slack; it fails
// too once resumed, and so does its next call.
void stoppedRank(int n, const std::map<std::string, std::string>& env) {
  JobSpec spec;
  spec.nranks = n;
  spec.deadline = std::chrono::seconds(90);
  spec.env[-1] = env;
  spec.env[-1]["WEFT_PEER_TIMEOUT"] = std::to_string(kPeerTimeout);
  const int stopped = n - 1;
  auto out = runJob(spec, [n, stopped](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, n, id, rank));
    const size_t count = size_t{16} << 20;  // 64 MiB of float32: long enough to be stopped inside it
    std::vector<float> buf(count, 1.0f);
    // Everyone is connected before the stop (the first allreduce completes).
    RANK_OK(weft_allreduce(buf.data(), buf.data(), 1024, weftFloat32, weftSum, comm, nullptr));
    if (rank == stopped) {
      resumeLater(3.0 * kPeerTimeout);
      std::thread stopper([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        raise(SIGSTOP);
      });
      stopper.detach();
    }
    auto t0 = Clock::now();
    weft_result_t rc = weftSuccess;
    for (int i = 0; i < 100 && rc == weftSuccess; ++i)
      rc = weft_allreduce(buf.data(), buf.data(), count, weftFloat32, weftSum, comm, nullptr);
    double s = secondsSince(t0);
    RANK_CHECK(rc != weftSuccess, "rank %d: 100 allreduces succeeded with rank %d stopped", rank, stopped);
    if (rank != stopped) {
      RANK_CHECK(rc == weftRemoteError, "rank %d: %d: %s", rank, static_cast<int>(rc), weft_last_error());
      RANK_CHECK(contains(weft_last_error(), ("rank " + std::to_string(stopped)).c_str()),
                 "rank %d: the error does not name rank %d: %s", rank, stopped, weft_last_error());
      RANK_CHECK(s < 2.0 * kPeerTimeout + 5, "rank %d: failed after %.1f s (timeout %d s)", rank, s, kPeerTimeout);
      std::fprintf(stderr, "rank %d: failed after %.1f s: %s\n", rank, s, weft_last_error());
    }
    // No resurrection: the next call fails too, on every rank.
    rc = weft_allreduce(buf.data(), buf.data(), 16, weftFloat32, weftSum, comm, nullptr);
    RANK_CHECK(rc != weftSuccess, "rank %d: a call after the failure succeeded", rank);
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

TEST(CommLiveness, StoppedRankOfTwoOnSharedMemory) { stoppedRank(2, {}); }
TEST(CommLiveness, StoppedRankOfFourOnSharedMemory) { stoppedRank(4, {}); }
TEST(CommLiveness, StoppedRankOfFourOverTheSocketPlugin) {
  stoppedRank(4, {{"NCCL_SHM_DISABLE", "1"}, {"NCCL_SOCKET_IFNAME", "lo"}});
}

// A rank that computes for twice the timeout without calling weft is waited for, not dropped.
TEST(CommLiveness, BusyRankIsNotDropped) {
  JobSpec spec;
  spec.nranks = 3;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1]["WEFT_PEER_TIMEOUT"] = "2";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 3, id, rank));
    if (rank == 1) {
      // 4 s of work on the calling thread, no weft call.
      auto until = Clock::now() + std::chrono::seconds(4);
      volatile uint64_t x = 0;
      while (Clock::now() < until) x = x + 1;
    }
    float v = 1.0f;
    RANK_OK(weft_allreduce(&v, &v, 1, weftFloat32, weftSum, comm, nullptr));
    RANK_CHECK(v == 3.0f, "allreduce gave %g", v);
    RANK_OK(weft_comm_destroy(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

// Rank 1 calls one collective fewer than the others, then destroys its communicator: the others'
// last collective fails at once, saying how many rank 1 did and which one they are in.
TEST(CommMismatch, ARankThatLeftEarlyFailsThePeersNextCollective) {
  JobSpec spec;
  spec.nranks = 3;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1]["WEFT_PEER_TIMEOUT"] = "0";  // no heartbeats: the goodbye alone must end the wait
  SharedCounters failedRanks(1);
  auto out = runJob(spec, [&failedRanks](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 3, id, rank));
    float v = 1.0f;
    int calls = rank == 1 ? 4 : 5;
    weft_result_t rc = weftSuccess;
    auto t0 = Clock::now();
    for (int i = 0; i < calls && rc == weftSuccess; ++i) {
      t0 = Clock::now();
      rc = weft_allreduce(&v, &v, 1, weftFloat32, weftSum, comm, nullptr);
    }
    if (rank == 1) {
      RANK_CHECK(rc == weftSuccess, "rank 1: %s", weft_last_error());
      RANK_OK(weft_comm_destroy(comm));
      return 0;
    }
    RANK_CHECK(rc == weftInvalidUsage, "rank %d: the 5th allreduce returned %d: %s", rank, static_cast<int>(rc),
               weft_last_error());
    RANK_CHECK(contains(weft_last_error(), "rank 1 finalized or destroyed its communicator after 4 collectives") &&
                   contains(weft_last_error(), "5th (AllReduce)") && contains(weft_last_error(), "mismatched calls"),
               "rank %d: %s", rank, weft_last_error());
    RANK_CHECK(secondsSince(t0) < 10, "rank %d: took %.1f s", rank, secondsSince(t0));
    RANK_CHECK(failedRanks.arriveAndWait(0, 2, std::chrono::seconds(20)), "rank %d: the other rank never failed", rank);
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

// One extra collective on rank 0 alone: the others destroy their communicators after 3, and rank
// 0's 4th fails at once instead of waiting for them forever.
TEST(CommMismatch, AnExtraCollectiveOnOneRankFailsAtOnce) {
  JobSpec spec;
  spec.nranks = 3;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1]["WEFT_PEER_TIMEOUT"] = "0";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 3, id, rank));
    int v = 1;
    for (int i = 0; i < 3; ++i) RANK_OK(weft_allreduce(&v, &v, 1, weftInt32, weftSum, comm, nullptr));
    if (rank != 0) {
      RANK_OK(weft_comm_finalize(comm));
      RANK_OK(weft_comm_destroy(comm));
      return 0;
    }
    auto t0 = Clock::now();
    // (A collective that only sends, like a broadcast from this rank, may complete into the
    // peers' buffers, as in NCCL; one that receives must not wait forever.)
    weft_result_t rc = weft_allreduce(&v, &v, 1, weftInt32, weftSum, comm, nullptr);
    RANK_CHECK(rc == weftInvalidUsage, "the extra allreduce returned %d: %s", static_cast<int>(rc), weft_last_error());
    RANK_CHECK(contains(weft_last_error(), "after 3 collectives") && contains(weft_last_error(), "4th (AllReduce)"), "%s",
               weft_last_error());
    RANK_CHECK(secondsSince(t0) < 10, "took %.1f s", secondsSince(t0));
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

// Rank 1 of the timeout tests: alive (its heartbeats go on) but absent from rank 0's operation,
// until rank 0 gave up (its failure reaches this rank through the watch ring).
int stayAwayUntilBroken(weft_comm_t* comm) {
  weft_result_t state = weftSuccess;
  auto until = Clock::now() + std::chrono::seconds(30);
  while (state == weftSuccess && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    RANK_OK(weft_comm_get_async_error(comm, &state));
  }
  RANK_CHECK(state != weftSuccess, "rank 1 never learnt that rank 0 gave up");
  RANK_OK(weft_comm_abort(comm));
  return 0;
}

// WEFT_OP_TIMEOUT: rank 0 waits in a collective rank 1 never calls (rank 1 sits in another
// process's business, alive and heartbeating); rank 0 fails after the timeout naming the channel,
// step and peers, and its communicator is broken.
TEST(CommOpTimeout, ACollectiveWithoutProgressFailsNamingWhereItWaits) {
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(60);
  spec.env[0]["WEFT_OP_TIMEOUT"] = "2";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    float v[64] = {};
    if (rank == 1) return stayAwayUntilBroken(comm);
    auto t0 = Clock::now();
    weft_result_t rc = weft_allreduce(v, v, 64, weftFloat32, weftSum, comm, nullptr);
    double s = secondsSince(t0);
    RANK_CHECK(rc == weftSystemError, "returned %d after %.1f s: %s", static_cast<int>(rc), s, weft_last_error());
    RANK_CHECK(s >= 1.9 && s < 10, "took %.1f s with WEFT_OP_TIMEOUT=2", s);
    RANK_CHECK(contains(weft_last_error(), "AllReduce #1 made no progress") && contains(weft_last_error(), "channel 0") &&
                   contains(weft_last_error(), "rank 1") && contains(weft_last_error(), "must be aborted"),
               "%s", weft_last_error());
    std::fprintf(stderr, "%s\n", weft_last_error());
    weft_result_t async = weftSuccess;
    RANK_OK(weft_comm_get_async_error(comm, &async));
    RANK_CHECK(async == weftSystemError, "async error %d after the timeout", static_cast<int>(async));
    RANK_CHECK(weft_allreduce(v, v, 1, weftFloat32, weftSum, comm, nullptr) != weftSuccess, "the broken comm still works");
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

// The same for a receive whose sender never sends (the connection exists), and for the first
// receive from a peer that never connects.
TEST(CommOpTimeout, AReceiveWithoutASenderFailsNamingThePeer) {
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(60);
  spec.env[0]["WEFT_OP_TIMEOUT"] = "2";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    char b[256] = {};
    // One message goes through first, so that the connection exists and the wait below is the
    // transfer's, not the connect's.
    if (rank == 1) RANK_OK(weft_send(b, sizeof(b), weftInt8, 0, comm, nullptr));
    else RANK_OK(weft_recv(b, sizeof(b), weftInt8, 1, comm, nullptr));
    if (rank == 1) return stayAwayUntilBroken(comm);
    weft_result_t rc = weft_recv(b, sizeof(b), weftInt8, 1, comm, nullptr);
    RANK_CHECK(rc == weftSystemError, "returned %d: %s", static_cast<int>(rc), weft_last_error());
    RANK_CHECK(contains(weft_last_error(), "receiving from rank 1 made no progress") &&
                   contains(weft_last_error(), "0 of 256 bytes moved"),
               "%s", weft_last_error());
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

TEST(CommOpTimeout, AConnectToAPeerThatNeverSendsFailsNamingIt) {
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(60);
  spec.env[0]["WEFT_OP_TIMEOUT"] = "2";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    char b[64];
    if (rank == 1) return stayAwayUntilBroken(comm);
    weft_result_t rc = weft_recv(b, sizeof(b), weftInt8, 1, comm, nullptr);
    RANK_CHECK(rc == weftSystemError, "returned %d: %s", static_cast<int>(rc), weft_last_error());
    RANK_CHECK(contains(weft_last_error(), "timed out connecting rank 0 to rank 1 (WEFT_OP_TIMEOUT=2 s"), "%s",
               weft_last_error());
    weft_result_t async = weftSuccess;
    RANK_OK(weft_comm_get_async_error(comm, &async));
    RANK_CHECK(async == weftSystemError, "the communicator is not broken after the timeout: %d", static_cast<int>(async));
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

}  // namespace
}  // namespace weft::testing
