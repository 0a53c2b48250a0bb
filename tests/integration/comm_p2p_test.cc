// Communicators of real processes on one host: init, ring exchanges, every size class and
// datatype, groups, self sends, split, non-blocking init, NCCL_COMM_ID, and ranks as threads.
// Every byte received is checked; every job runs under a deadline.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/support/ranks.h"

namespace weft::testing {
namespace {

// Each rank sends `count` elements to next and receives from prev, in one group (receive first
// when `recvFirst`).
int ringExchange(weft_comm_t* comm, size_t count, weft_datatype_t type, int msg, bool recvFirst = false) {
  int rank = 0;
  int n = 0;
  RANK_OK(weft_comm_user_rank(comm, &rank));
  RANK_OK(weft_comm_count(comm, &n));
  size_t bytes = count * weft_datatype_size(type);
  std::vector<uint8_t> s(bytes), r(bytes, 0);
  fill(s.data(), bytes, rank, msg);
  int next = (rank + 1) % n;
  int prev = (rank - 1 + n) % n;
  RANK_OK(weft_group_start());
  if (recvFirst) RANK_OK(weft_recv(r.data(), count, type, prev, comm, nullptr));
  RANK_OK(weft_send(s.data(), count, type, next, comm, nullptr));
  if (!recvFirst) RANK_OK(weft_recv(r.data(), count, type, prev, comm, nullptr));
  RANK_OK(weft_group_end());
  long bad = firstWrong(r.data(), bytes, prev, msg);
  RANK_CHECK(bad < 0, "rank %d: byte %ld of %zu from rank %d is wrong", rank, bad, bytes, prev);
  return 0;
}

int initComm(weft_comm_t** comm, int nranks, const weft_unique_id_t& id, int rank) {
  RANK_OK(weft_comm_init_rank(comm, nranks, id, rank));
  return 0;
}

class CommRanks : public ::testing::TestWithParam<int> {};

TEST_P(CommRanks, ProcessesInitExchangeAndLeaveNothingInDevShm) {
  JobSpec spec;
  spec.nranks = GetParam();
  int n = spec.nranks;
  auto out = runJob(spec, [n](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    if (initComm(&comm, n, id, rank)) return 1;
    int count = 0;
    int me = -1;
    RANK_OK(weft_comm_count(comm, &count));
    RANK_OK(weft_comm_user_rank(comm, &me));
    RANK_CHECK(count == n && me == rank, "count %d rank %d", count, me);
    int msg = 0;
    for (size_t bytes : {size_t{1}, size_t{4096}, size_t{3} << 20})
      if (ringExchange(comm, bytes, weftUint8, ++msg) != 0) return 1;
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
  expectNoLeftovers(out);
}

INSTANTIATE_TEST_SUITE_P(OneHost, CommRanks, ::testing::Values(1, 2, 3, 4, 8),
                         [](const auto& p) { return std::to_string(p.param) + "ranks"; });

// 0 B to 256 MiB between two processes, including sizes around the 512 KiB step and odd ones.
TEST(CommSendRecv, SizesFromZeroTo256MiB) {
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(240);
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    if (initComm(&comm, 2, id, rank)) return 1;
    const size_t step = 512 * 1024;
    int msg = 0;
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, step - 1, step, step + 1, 8 * step, 8 * step + 3,
                         size_t{64} << 20, size_t{256} << 20})
      if (ringExchange(comm, bytes, weftInt8, ++msg) != 0) return 1;
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

TEST(CommSendRecv, EveryDatatypeAndBothOrdersInAGroup) {
  JobSpec spec;
  spec.nranks = 3;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    if (initComm(&comm, 3, id, rank)) return 1;
    RANK_CHECK(weft_datatype_size(static_cast<weft_datatype_t>(12)) == 0, "type 12 has a size");
    for (int t = 0; t < 12; ++t) {
      auto type = static_cast<weft_datatype_t>(t);
      if (ringExchange(comm, 100003, type, t, t % 2 == 1) != 0) return 1;
    }
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

// Several messages to one peer in one group arrive in the order they were posted; a rank may
// send to and receive from the same peer in either order without deadlock.
TEST(CommSendRecv, MessagesToOnePeerKeepTheirOrder) {
  JobSpec spec;
  spec.nranks = 2;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    if (initComm(&comm, 2, id, rank)) return 1;
    int peer = 1 - rank;
    const std::vector<size_t> sizes = {10, 1 << 20, 3, 5 << 20, 0, 777};
    std::vector<std::vector<uint8_t>> s, r;
    for (size_t i = 0; i < sizes.size(); ++i) {
      s.emplace_back(sizes[i]);
      r.emplace_back(sizes[i], 0);
      fill(s.back().data(), sizes[i], rank, static_cast<int>(i));
    }
    RANK_OK(weft_group_start());
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (rank == 0) RANK_OK(weft_recv(r[i].data(), sizes[i], weftUint8, peer, comm, nullptr));
      RANK_OK(weft_send(s[i].data(), sizes[i], weftUint8, peer, comm, nullptr));
      if (rank == 1) RANK_OK(weft_recv(r[i].data(), sizes[i], weftUint8, peer, comm, nullptr));
    }
    RANK_OK(weft_group_end());
    for (size_t i = 0; i < sizes.size(); ++i) {
      long bad = firstWrong(r[i].data(), sizes[i], peer, static_cast<int>(i));
      RANK_CHECK(bad < 0, "message %zu: byte %ld wrong", i, bad);
    }
    // Outside a group, blocking calls alternate.
    std::vector<uint8_t> a(1000), b(1000);
    fill(a.data(), a.size(), rank, 99);
    if (rank == 0) {
      RANK_OK(weft_send(a.data(), a.size(), weftUint8, 1, comm, nullptr));
      RANK_OK(weft_recv(b.data(), b.size(), weftUint8, 1, comm, nullptr));
    } else {
      RANK_OK(weft_recv(b.data(), b.size(), weftUint8, 0, comm, nullptr));
      RANK_OK(weft_send(a.data(), a.size(), weftUint8, 0, comm, nullptr));
    }
    RANK_CHECK(firstWrong(b.data(), b.size(), peer, 99) < 0, "blocking exchange wrong");
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

TEST(CommSendRecv, SelfSendNeedsAMatchingReceive) {
  JobSpec spec;
  spec.nranks = 2;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    if (initComm(&comm, 2, id, rank)) return 1;
    std::vector<uint8_t> s(3 << 20), r(3 << 20, 0);
    fill(s.data(), s.size(), rank, 5);
    RANK_OK(weft_group_start());
    RANK_OK(weft_send(s.data(), s.size(), weftUint8, rank, comm, nullptr));
    RANK_OK(weft_recv(r.data(), r.size(), weftUint8, rank, comm, nullptr));
    RANK_OK(weft_group_end());
    RANK_CHECK(firstWrong(r.data(), r.size(), rank, 5) < 0, "self copy wrong");
    RANK_OK(weft_group_start());
    RANK_OK(weft_send(s.data(), 10, weftUint8, rank, comm, nullptr));
    weft_result_t rc = weft_group_end();
    RANK_CHECK(rc == weftInvalidUsage, "unmatched self send returned %d", static_cast<int>(rc));
    RANK_CHECK(std::strstr(weft_last_error(), "without a matching recv") != nullptr, "message: %s", weft_last_error());
    RANK_OK(weft_comm_destroy(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

TEST(CommSplit, ColorsFormCommunicatorsOrderedByKey) {
  JobSpec spec;
  spec.nranks = 5;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    if (initComm(&comm, 5, id, rank)) return 1;
    // Ranks 0, 2 (color 0) and 1, 3 (color 1); rank 4 stays out. Keys reverse the order.
    int color = rank == 4 ? WEFT_SPLIT_NOCOLOR : rank % 2;
    weft_comm_t* sub = nullptr;
    RANK_OK(weft_comm_split(comm, color, -rank, &sub, nullptr));
    if (rank == 4) {
      RANK_CHECK(sub == nullptr, "NOCOLOR got a communicator");
    } else {
      int n = 0;
      int me = -1;
      RANK_OK(weft_comm_count(sub, &n));
      RANK_OK(weft_comm_user_rank(sub, &me));
      RANK_CHECK(n == 2 && me == (rank < 2 ? 1 : 0), "rank %d: sub rank %d of %d", rank, me, n);
      if (ringExchange(sub, 50000, weftFloat32, 3) != 0) return 1;
      if (closeComm(sub)) return 1;
    }
    if (ringExchange(comm, 1000, weftInt64, 4) != 0) return 1;
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

TEST(CommInit, NonBlockingInitReturnsInProgressThenSucceeds) {
  JobSpec spec;
  spec.nranks = 3;
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_config_t cfg = WEFT_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    weft_comm_t* comm = nullptr;
    weft_result_t rc = weft_comm_init_rank_config(&comm, 3, id, rank, &cfg);
    RANK_CHECK(rc == weftInProgress, "init returned %d: %s", static_cast<int>(rc), weft_last_error());
    weft_result_t state = weftInProgress;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (state == weftInProgress && std::chrono::steady_clock::now() < until) {
      RANK_OK(weft_comm_get_async_error(comm, &state));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    RANK_CHECK(state == weftSuccess, "state %d: %s", static_cast<int>(state), weft_last_error());
    if (ringExchange(comm, 12345, weftInt32, 1) != 0) return 1;
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

// The device a rank plays: config.device, else WEFT_DEVICE, else its index on its host.
TEST(CommInit, DeviceFromConfigThenWeftDeviceThenLocalRank) {
  JobSpec spec;
  spec.nranks = 3;
  spec.env[1]["WEFT_DEVICE"] = "5";
  spec.env[2]["WEFT_DEVICE"] = "6";
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_config_t cfg = WEFT_CONFIG_INITIALIZER;
    if (rank == 2) cfg.device = 7;  // wins over WEFT_DEVICE=6
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank_config(&comm, 3, id, rank, &cfg));
    int dev = -1;
    RANK_OK(weft_comm_cu_device(comm, &dev));
    const int want[] = {0, 5, 7};
    RANK_CHECK(dev == want[rank], "rank %d plays device %d, expected %d", rank, dev, want[rank]);
    if (ringExchange(comm, 4096, weftInt32, 1) != 0) return 1;
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// With NCCL_COMM_ID every process computes the same id by itself; rank 0 runs the root there.
TEST(CommInit, NcclCommIdNeedsNoSideChannel) {
  JobSpec spec;
  spec.nranks = 3;
  spec.shareId = false;
  spec.env[-1]["NCCL_COMM_ID"] = "127.0.0.1:" + std::to_string(freePort());
  auto out = runJob(spec, [](int rank, const weft_unique_id_t&) {
    weft_unique_id_t id;
    RANK_OK(weft_get_unique_id(&id));
    weft_comm_t* comm = nullptr;
    if (initComm(&comm, 3, id, rank)) return 1;
    if (ringExchange(comm, 4097, weftUint8, 2) != 0) return 1;
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
}

class CommThreads : public ::testing::TestWithParam<int> {};

// weft_comm_init_all: n ranks as threads of one process; one thread drives every rank's sends
// and receives in one group.
TEST_P(CommThreads, InitAllAndOneGroupAcrossRanks) {
  int n = GetParam();
  std::vector<weft_comm_t*> comms(static_cast<size_t>(n), nullptr);
  ASSERT_EQ(weft_comm_init_all(comms.data(), n, nullptr), weftSuccess) << weft_last_error();
  const size_t bytes = (2 << 20) + 5;
  std::vector<std::vector<uint8_t>> s(static_cast<size_t>(n)), r(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    s[static_cast<size_t>(i)].resize(bytes);
    r[static_cast<size_t>(i)].assign(bytes, 0);
    fill(s[static_cast<size_t>(i)].data(), bytes, i, 1);
  }
  ASSERT_EQ(weft_group_start(), weftSuccess);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(weft_send(s[static_cast<size_t>(i)].data(), bytes, weftUint8, (i + 1) % n, comms[static_cast<size_t>(i)], nullptr),
              weftSuccess);
    ASSERT_EQ(weft_recv(r[static_cast<size_t>(i)].data(), bytes, weftUint8, (i - 1 + n) % n, comms[static_cast<size_t>(i)],
                        nullptr),
              weftSuccess);
  }
  ASSERT_EQ(weft_group_end(), weftSuccess) << weft_last_error();
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(firstWrong(r[static_cast<size_t>(i)].data(), bytes, (i - 1 + n) % n, 1), -1) << "rank " << i;
  for (weft_comm_t* c : comms) EXPECT_EQ(weft_comm_destroy(c), weftSuccess);
  EXPECT_TRUE(shmLeftovers(getpid()).empty());
}

INSTANTIATE_TEST_SUITE_P(OneProcess, CommThreads, ::testing::Values(1, 2, 4, 8),
                         [](const auto& p) { return std::to_string(p.param) + "ranks"; });

}  // namespace
}  // namespace weft::testing
