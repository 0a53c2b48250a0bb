// A /dev/shm too small for the job's segments (Docker's 64 MiB default, or 8 MiB): every rank
// either runs every operation or ends with an error that says why (the rank that could not
// reserve its segment names /dev/shm, the bytes and the ways out; its peers name that rank) —
// never a signal, never a hang, nothing left in /dev/shm. Each case runs in a mount namespace of
// its own, made by the test (root only).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/ranks.h"

namespace weft::testing {
namespace {

bool contains(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

// Every operation kind, so that segments made later (point-to-point connections at the first
// group that needs them) are covered too. Returns 0, or 1 with what failed on stderr.
int everyOperation(weft_comm_t* comm, int rank, int n) {
  const size_t count = size_t{1} << 20;  // 4 MiB of float32: fills the slots
  std::vector<float> a(count * static_cast<size_t>(n), 1.0f), b(count * static_cast<size_t>(n));
  auto ok = [&](weft_result_t rc, const char* what) {
    if (rc == weftSuccess) return true;
    std::fprintf(stderr, "rank %d: %s: %d: %s\n", rank, what, static_cast<int>(rc), weft_last_error());
    return false;
  };
  if (!ok(weft_allreduce(a.data(), b.data(), count, weftFloat32, weftSum, comm, nullptr), "allreduce")) return 1;
  if (!ok(weft_allgather(a.data(), b.data(), count, weftFloat32, comm, nullptr), "allgather")) return 1;
  if (!ok(weft_reduce_scatter(a.data(), b.data(), count, weftFloat32, weftSum, comm, nullptr), "reduce_scatter")) return 1;
  if (!ok(weft_broadcast(a.data(), b.data(), count, weftFloat32, 0, comm, nullptr), "broadcast")) return 1;
  if (!ok(weft_alltoall(a.data(), b.data(), count, weftFloat32, comm, nullptr), "alltoall")) return 1;
  weft_group_start();
  weft_send(a.data(), count, weftFloat32, (rank + 1) % n, comm, nullptr);
  weft_recv(b.data(), count, weftFloat32, (rank + n - 1) % n, comm, nullptr);
  if (!ok(weft_group_end(), "send/recv")) return 1;
  for (size_t i = 0; i < count; ++i)
    if (b[i] != 1.0f) return std::fprintf(stderr, "rank %d: send/recv element %zu is %g\n", rank, i, b[i]), 1;
  return 0;
}

// What one case found: ranks that ran everything, ranks that failed clearly.
struct Tally {
  int ran = 0, failedWithReason = 0, namedDevShm = 0;
};

// Runs an n-rank job in this process's mount namespace (with its small /dev/shm). A rank's exit
// code says what happened: 0 ran everything, 10 failed naming /dev/shm, 11 failed naming a rank.
std::vector<RankOutcome> smallShmJob(int n) {
  JobSpec spec;
  spec.nranks = n;
  spec.deadline = std::chrono::seconds(120);
  return runJob(spec, [n](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    weft_result_t rc = weft_comm_init_rank(&comm, n, id, rank);
    int result = 0;
    if (rc == weftSuccess) result = everyOperation(comm, rank, n);
    std::string why = weft_last_error();
    if (rc != weftSuccess || result != 0) {
      if (rc == weftSuccess) {
        // The communicator's own error, where it has more to say than the failed call's.
        weft_result_t async = weftSuccess;
        weft_comm_get_async_error(comm, &async);
        std::string more = weft_last_error();
        if (async != weftSuccess && !more.empty()) why = more;
      }
      bool devShm = contains(why.c_str(), "/dev/shm") && contains(why.c_str(), "NCCL_SHM_DISABLE=1") &&
                    contains(why.c_str(), "--shm-size");
      bool namesRank = contains(why.c_str(), "rank ");
      std::fprintf(stderr, "rank %d: %s\n", rank, why.c_str());
      if (comm != nullptr) weft_comm_abort(comm);
      return devShm ? 10 : namesRank ? 11 : 1;
    }
    return weft_comm_destroy(comm) == weftSuccess ? 0 : 1;
  });
}

// This test process in a mount namespace of its own with a tmpfs of `mib` MiB on /dev/shm, for
// as long as the object lives: the destructor returns to the original namespace, so later tests of
// the same binary (run without ctest, which runs each case alone) see the real /dev/shm again.
class PrivateDevShm {
 public:
  explicit PrivateDevShm(int mib) {
    if (geteuid() != 0) {
      why_ = "needs root (mount namespaces)";
      return;
    }
    original_ = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    if (original_ < 0) {
      why_ = std::string("open /proc/self/ns/mnt: ") + std::strerror(errno);
      return;
    }
    if (unshare(CLONE_NEWNS) != 0) {
      why_ = std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
      return;
    }
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      why_ = std::string("make / private: ") + std::strerror(errno);
      return;
    }
    std::string opts = "size=" + std::to_string(mib) + "m,mode=1777";
    if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0)
      why_ = std::string("mount tmpfs on /dev/shm: ") + std::strerror(errno);
  }
  ~PrivateDevShm() {
    if (original_ < 0) return;
    if (setns(original_, CLONE_NEWNS) != 0) ADD_FAILURE() << "could not return to the original mount namespace: " << std::strerror(errno);
    close(original_);
  }
  PrivateDevShm(const PrivateDevShm&) = delete;
  PrivateDevShm& operator=(const PrivateDevShm&) = delete;
  // Empty when the private /dev/shm is in place, else why not.
  const std::string& why() const { return why_; }

 private:
  int original_ = -1;
  std::string why_;
};

void expectClearOutcomes(int mib, int n) {
  auto out = smallShmJob(n);
  Tally t;
  for (size_t r = 0; r < out.size(); ++r) {
    const RankOutcome& o = out[r];
    ASSERT_EQ(o.signal, 0) << mib << " MiB /dev/shm, " << n << " ranks: rank " << r << " died of signal " << o.signal
                           << "\n" << o.output;
    ASSERT_FALSE(o.timedOut) << "rank " << r << " hung\n" << o.output;
    ASSERT_TRUE(o.exitCode == 0 || o.exitCode == 10 || o.exitCode == 11)
        << mib << " MiB, " << n << " ranks: rank " << r << " failed without naming the cause (exit " << o.exitCode << ")\n"
        << o.output;
    t.ran += o.exitCode == 0;
    t.failedWithReason += o.exitCode != 0;
    t.namedDevShm += o.exitCode == 10;
  }
  // Either the job ran, or some rank said it was /dev/shm.
  if (t.failedWithReason > 0) {
    std::string all;
    for (const RankOutcome& o : out) all += o.output;
    EXPECT_GT(t.namedDevShm, 0) << "ranks failed, none named /dev/shm\n" << all;
  }
  // Nothing left behind in the small /dev/shm.
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    ADD_FAILURE() << "left in /dev/shm: " << e.path();
  }
  std::printf("%d MiB /dev/shm, %d ranks: %d ran every operation, %d failed (%d naming /dev/shm)\n", mib, n, t.ran,
              t.failedWithReason, t.namedDevShm);
}

class SmallDevShm : public ::testing::TestWithParam<int> {};

TEST_P(SmallDevShm, ClearErrorOrSuccessNeverASignal) {
  int mib = GetParam();
  PrivateDevShm shm(mib);
  if (!shm.why().empty()) GTEST_SKIP() << "cannot make a private /dev/shm: " << shm.why();
  for (int n : {2, 4, 8}) expectClearOutcomes(mib, n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SmallDevShm, ::testing::Values(8, 64),
                         [](const ::testing::TestParamInfo<int>& p) { return std::to_string(p.param) + "MiB"; });

// The 2-rank job that fits in 64 MiB really runs there (so the test above is not vacuous), and
// 8 ranks in 8 MiB really fail on space.
TEST(SmallDevShmBounds, TwoRanksRunIn64MiBAndEightFailIn8MiB) {
  PrivateDevShm shm(64);
  if (!shm.why().empty()) GTEST_SKIP() << "cannot make a private /dev/shm: " << shm.why();
  auto fits = smallShmJob(2);
  EXPECT_EQ(failures(fits), "");
  ASSERT_EQ(umount("/dev/shm"), 0) << std::strerror(errno);
  ASSERT_EQ(mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=8m,mode=1777"), 0) << std::strerror(errno);
  auto full = smallShmJob(8);
  int namedDevShm = 0;
  for (const RankOutcome& o : full) namedDevShm += o.exitCode == 10;
  EXPECT_GT(namedDevShm, 0) << full[0].output;
}

}  // namespace
}  // namespace weft::testing
