// Mismatched collective calls: every collective's first step on each connection carries its
// signature (operation, datatype, count, op, root, call number), so ranks that call different
// things fail naming both calls instead of mixing unrelated bytes (float32 against int32 has the
// same sizes) or waiting forever. Over shared memory (the tag in each slot's header) and over the
// socket plugin (a signature step). Every job under a deadline; no rank may hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ranks.h"

namespace weft::testing {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
bool contains(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

const std::map<std::string, std::string> kOverSocket = {{"NCCL_SHM_DISABLE", "1"}, {"NCCL_SOCKET_IFNAME", "lo"}};

struct MismatchCase {
  int nranks = 2;
  std::map<std::string, std::string> env;
  // The call that does not match on every rank; returns its result.
  std::function<weft_result_t(int rank, weft_comm_t* comm)> call;
  // What the error of a rank that saw the mismatch says (besides "mismatched calls").
  std::vector<const char*> says;
};

// Every rank makes one matching allreduce (connected, and a good call passes the check), then the
// case's call. A rank whose call fails must fail within seconds; one whose call returned (its
// part needed nothing from the rank that differs) must see the communicator broken soon after,
// by the rank that found the mismatch. At least one rank must name it, with both calls.
void expectMismatchFound(const MismatchCase& c) {
  JobSpec spec;
  spec.nranks = c.nranks;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1] = c.env;
  spec.env[-1]["WEFT_PEER_TIMEOUT"] = "0";  // the check alone must end every wait
  SharedCounters found(1);
  auto out = runJob(spec, [&c, &found](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, c.nranks, id, rank));
    float warm = 1.0f;
    RANK_OK(weft_allreduce(&warm, &warm, 1, weftFloat32, weftSum, comm, nullptr));
    RANK_CHECK(warm == static_cast<float>(c.nranks), "the matching allreduce gave %g", static_cast<double>(warm));
    auto t0 = Clock::now();
    weft_result_t rc = c.call(rank, comm);
    if (rc == weftSuccess) {
      weft_result_t state = weftSuccess;
      while (state == weftSuccess && secondsSince(t0) < 20) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        RANK_OK(weft_comm_get_async_error(comm, &state));
      }
      RANK_CHECK(state != weftSuccess, "rank %d: its call returned and the communicator never broke", rank);
    } else {
      const char* why = weft_last_error();
      RANK_CHECK(secondsSince(t0) < 10, "rank %d: the error took %.1f s: %s", rank, secondsSince(t0), why);
      RANK_CHECK(contains(why, "rank "), "rank %d: the error names no rank: %s", rank, why);
      // A failure passed on around the watch ring carries the reason the failing rank gave.
      if (contains(why, "failed or aborted (passed on by"))
        RANK_CHECK(contains(why, "mismatched calls"), "rank %d: a failure passed on without its reason: %s", rank, why);
      if (contains(why, "mismatched calls") && !contains(why, "(passed on by")) {  // the rank that found it
        RANK_CHECK(rc == weftInvalidUsage, "rank %d: returned %d for %s", rank, static_cast<int>(rc), why);
        for (const char* part : c.says) RANK_CHECK(contains(why, part), "rank %d: no \"%s\" in: %s", rank, part, why);
        found.add(0);
      }
    }
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  EXPECT_GE(found.get(0), 1) << "no rank reported the mismatched calls";
  expectNoLeftovers(out);
}

// float32 on rank 0, int32 (same size: same steps) on rank 1.
MismatchCase datatypeCase(size_t count) {
  MismatchCase c;
  c.call = [count](int rank, weft_comm_t* comm) {
    std::vector<float> buf(count, 1.0f);
    return weft_allreduce(buf.data(), buf.data(), count, rank == 0 ? weftFloat32 : weftInt32, weftSum, comm, nullptr);
  };
  c.says = {"AllReduce #2", "Float32", "Int32", "the datatype differs"};
  return c;
}

TEST(CommSignature, ADatatypeOfTheSameSizeFailsOverSharedMemory) { expectMismatchFound(datatypeCase(1024)); }

TEST(CommSignature, ADatatypeOfTheSameSizeFailsOverTheSocketPlugin) {
  MismatchCase c = datatypeCase(1024);
  c.env = kOverSocket;
  expectMismatchFound(c);
}

// 4 MiB: the net path that sends from and receives into the caller's buffers (postAhead).
TEST(CommSignature, ALargeCallWithAnotherDatatypeFailsOverTheSocketPlugin) {
  MismatchCase c = datatypeCase(size_t{1} << 20);
  c.env = kOverSocket;
  expectMismatchFound(c);
}

MismatchCase opCase() {
  MismatchCase c;
  c.nranks = 3;
  c.call = [](int rank, weft_comm_t* comm) {
    std::vector<int> buf(64, rank);
    return weft_allreduce(buf.data(), buf.data(), buf.size(), weftInt32, rank == 2 ? weftMax : weftSum, comm, nullptr);
  };
  c.says = {"sum", "max", "the op differs"};
  return c;
}

TEST(CommSignature, AnotherOpFailsOverSharedMemory) { expectMismatchFound(opCase()); }

TEST(CommSignature, AnotherOpFailsOverTheSocketPlugin) {
  MismatchCase c = opCase();
  c.env = kOverSocket;
  expectMismatchFound(c);
}

// Ranks 0 and 1 broadcast from rank 0, rank 2 from rank 1: rank 2 receives rank 1's forward of
// rank 0's data and must not take it for rank 1's own.
MismatchCase rootCase() {
  MismatchCase c;
  c.nranks = 3;
  c.call = [](int rank, weft_comm_t* comm) {
    std::vector<double> buf(256, rank);
    return weft_broadcast(buf.data(), buf.data(), buf.size(), weftFloat64, rank == 2 ? 1 : 0, comm, nullptr);
  };
  c.says = {"Broadcast #2", "root 0", "root 1", "the root differs"};
  return c;
}

TEST(CommSignature, AnotherRootFailsOverSharedMemory) { expectMismatchFound(rootCase()); }

TEST(CommSignature, AnotherRootFailsOverTheSocketPlugin) {
  MismatchCase c = rootCase();
  c.env = kOverSocket;
  expectMismatchFound(c);
}

// An allreduce on rank 0 against a reduce to rank 0 on rank 1: same count and datatype.
TEST(CommSignature, AnotherOperationFails) {
  MismatchCase c;
  c.call = [](int rank, weft_comm_t* comm) {
    std::vector<float> buf(512, 1.0f);
    if (rank == 0) return weft_allreduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum, comm, nullptr);
    return weft_reduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum, 0, comm, nullptr);
  };
  c.says = {"AllReduce #2", "Reduce #2", "the operation"};
  expectMismatchFound(c);
}

// Matching calls of every kind pass the check, over both transports, and give the right sums
// (the signature, a step of its own or at the end of the first data step, must not be taken for
// data, nor data for it).
void matchingCallsPass(const std::map<std::string, std::string>& env) {
  JobSpec spec;
  spec.nranks = 3;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1] = env;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 3, id, rank));
    // Small and large calls in turn: a receive posted ahead by one call must not take the next
    // call's first step (the large ones post their receives themselves).
    for (size_t count : {size_t{1}, size_t{1000}, size_t{1} << 20, size_t{2}, size_t{1} << 20, size_t{1} << 18, size_t{3}}) {
      std::vector<int> buf(count * 3, rank + 1);
      RANK_OK(weft_allreduce(buf.data(), buf.data(), count, weftInt32, weftSum, comm, nullptr));
      RANK_CHECK(buf[0] == 6 && buf[count - 1] == 6, "allreduce of %zu gave %d", count, buf[0]);
      std::vector<int> one(count, rank + 1);
      RANK_OK(weft_broadcast(one.data(), one.data(), count, weftInt32, 2, comm, nullptr));
      RANK_CHECK(one[0] == 3 && one[count - 1] == 3, "broadcast of %zu gave %d", count, one[0]);
      std::vector<int> all(count * 3, 0), mine(count, rank + 1);
      RANK_OK(weft_allgather(mine.data(), all.data(), count, weftInt32, comm, nullptr));
      RANK_CHECK(all[0] == 1 && all[count * 3 - 1] == 3, "allgather of %zu gave %d..%d", count, all[0], all[count * 3 - 1]);
    }
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

// 4 ranks on 2 hosts (NCCL_HOSTID), small broadcasts from rank 0 along the ring 0 -> 1 -> 2 -> 3,
// rank 3 late: rank 2 receives over the socket plugin (the signature at the end of each call's
// first data step) while its slots toward rank 3 are full, so it peeks a step it cannot pass on
// yet and peeks it again later. The second look must still leave the signature out (it once took
// "a step of 48 bytes ... where 8 were expected" for a mismatch: bench/comm netcoll broadcast).
TEST(CommSignature, SmallBroadcastsAcrossHostsPastALateRankKeepTheirSignature) {
  JobSpec spec;
  spec.nranks = 4;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1] = {{"NCCL_SOCKET_IFNAME", "lo"}, {"NCCL_NET", "Socket"}};
  for (int r = 0; r < 4; ++r) spec.env[r]["NCCL_HOSTID"] = r < 2 ? "sig-hostA" : "sig-hostB";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 4, id, rank));
    if (rank == 3) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (int i = 0; i < 64; ++i) {
      int64_t v = rank == 0 ? 1000 + i : -1;
      RANK_OK(weft_broadcast(&v, &v, 1, weftInt64, 0, comm, nullptr));
      RANK_CHECK(v == 1000 + i, "rank %d: broadcast %d gave %lld", rank, i, static_cast<long long>(v));
    }
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

// 2 ranks, 4 B and 1 MiB allreduces in turn over the socket plugin: the small calls' signatures
// ride on their first data step, the large ones' come as steps of their own into receives the
// runner posts itself; no receive may be left over from one call for the next.
TEST(CommSignature, SmallAndLargeCallsInTurnPassOverTheSocketPlugin) {
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(60);
  spec.env[-1] = kOverSocket;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    std::vector<float> big(size_t{1} << 18);
    for (int i = 0; i < 40; ++i) {
      // One element: on 2 ranks one of its steps is empty (a signature step of its own then).
      float small = static_cast<float>(i);
      RANK_OK(weft_allreduce(&small, &small, 1, weftFloat32, weftSum, comm, nullptr));
      RANK_CHECK(small == 2.0f * static_cast<float>(i), "call %d: small allreduce gave %g", i, static_cast<double>(small));
      std::fill(big.begin(), big.end(), static_cast<float>(rank + i));
      RANK_OK(weft_allreduce(big.data(), big.data(), big.size(), weftFloat32, weftSum, comm, nullptr));
      RANK_CHECK(big.front() == static_cast<float>(2 * i + 1) && big.back() == static_cast<float>(2 * i + 1),
                 "call %d: large allreduce gave %g", i, static_cast<double>(big.front()));
    }
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

TEST(CommSignature, MatchingCallsPassOverSharedMemory) { matchingCallsPass({}); }
TEST(CommSignature, MatchingCallsPassOverTheSocketPlugin) { matchingCallsPass(kOverSocket); }

}  // namespace
}  // namespace weft::testing
