// The shared-memory transport's slot ring within one process (both ends map the segment): steps
// of every size class arrive in order with their sizes, bytes and last marks, small steps (in the
// slot's header line) and large ones (in the slot) alike, and the sender gets no slot while all
// kSteps are in flight, also after the ring wrapped several times. Single-copy steps (postFrom)
// are read from the sender's memory and hold its drain until the receiver released them.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/runtime/shm.h"

namespace weft::runtime {
namespace {

constexpr size_t kStep = 4096;

std::vector<unsigned char> pattern(size_t bytes, unsigned seed) {
  std::vector<unsigned char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<unsigned char>(seed * 131 + i * 7 + 1);
  return v;
}

struct Pair {
  std::unique_ptr<ShmRecv> recv;
  std::unique_ptr<ShmSend> send;
};

Pair connect(bool singleCopy = false) {
  Pair p;
  auto r = ShmRecv::create(kStep, nullptr, 1, singleCopy);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  p.recv = std::move(*r);
  auto s = ShmSend::open(p.recv->name(), kStep, nullptr, 0);
  EXPECT_TRUE(s.isOk()) << s.status().toString();
  p.send = std::move(*s);
  auto done = p.recv->finishSetup();
  EXPECT_TRUE(done.isOk() && *done);
  return p;
}

TEST(ShmTransport, StepsOfEverySizeArriveInOrderWithTheirMarks) {
  Pair p = connect();
  ASSERT_TRUE(p.recv && p.send);
  const std::vector<size_t> sizes = {0, 1, 8, 47, 48, 49, 64, 1000, kStep};
  size_t sent = 0, received = 0;
  const size_t total = sizes.size() * 5;  // wraps the 8 slots several times
  size_t bytes = 0;
  bool last = false;
  while (received < total) {
    // Fill every free slot, then check the ring is full.
    while (sent < total) {
      auto slot = p.send->acquire();
      ASSERT_TRUE(slot.isOk());
      if (*slot == nullptr) {
        EXPECT_EQ(sent - received, static_cast<size_t>(kSteps)) << "no slot although one is free";
        break;
      }
      size_t n = sizes[sent % sizes.size()];
      std::vector<unsigned char> v = pattern(n, static_cast<unsigned>(sent));
      if (n > 0) std::memcpy(*slot, v.data(), n);
      ASSERT_TRUE(p.send->post(n, sent % 3 == 0).isOk());
      ++sent;
    }
    // Drain up to three steps (so credits come back in varying batches).
    for (int k = 0; k < 3 && received < sent; ++k) {
      auto data = p.recv->peek(&bytes, &last, kSteps);
      ASSERT_TRUE(data.isOk());
      ASSERT_NE(*data, nullptr) << "step " << received << " was posted but did not arrive";
      size_t n = sizes[received % sizes.size()];
      ASSERT_EQ(bytes, n) << "step " << received;
      EXPECT_EQ(last, received % 3 == 0) << "step " << received;
      std::vector<unsigned char> v = pattern(n, static_cast<unsigned>(received));
      if (n > 0) {
        EXPECT_EQ(std::memcmp(*data, v.data(), n), 0) << "bytes of step " << received << " (" << n << " bytes)";
      }
      ASSERT_TRUE(p.recv->release().isOk());
      ++received;
    }
  }
  auto none = p.recv->peek(&bytes, &last, kSteps);
  ASSERT_TRUE(none.isOk());
  EXPECT_EQ(*none, nullptr) << "a step arrived that was never posted";
}

TEST(ShmTransport, AFailureReportedBySenderStopsTheWaitingReceiver) {
  Pair p = connect();
  ASSERT_TRUE(p.recv && p.send);
  size_t bytes = 0;
  bool last = false;
  auto nothing = p.recv->peek(&bytes, &last, 1);
  ASSERT_TRUE(nothing.isOk());
  EXPECT_EQ(*nothing, nullptr);
  p.send->markFailed(0);
  auto failed = p.recv->peek(&bytes, &last, 1);
  EXPECT_FALSE(failed.isOk());
}

TEST(ShmTransport, SingleCopyStepsAreReadFromTheSendersMemoryAndHoldItsDrain) {
  Pair p = connect(true);
  ASSERT_TRUE(p.recv && p.send);
  size_t bytes = 0;
  bool last = false;
  // Small steps go through the slot: a system call would cost more than the copy it saves.
  ASSERT_TRUE(p.send->acquire().isOk());
  auto small = p.send->postFrom(pattern(1000, 1).data(), 1000);
  ASSERT_TRUE(small.isOk());
  EXPECT_FALSE(*small);
  // A large one is published as an address (far above the slot's size: it is never copied there).
  std::vector<unsigned char> big = pattern(kStep * 20, 2);
  auto posted = p.send->postFrom(big.data(), big.size());
  ASSERT_TRUE(posted.isOk());
  ASSERT_TRUE(*posted);
  auto idle = p.send->drain();
  ASSERT_TRUE(idle.isOk());
  EXPECT_FALSE(*idle) << "the sender's memory is free before the receiver read it";
  auto data = p.recv->peek(&bytes, &last, 1);
  ASSERT_TRUE(data.isOk());
  ASSERT_NE(*data, nullptr);
  EXPECT_EQ(bytes, big.size());
  EXPECT_FALSE(last);
  EXPECT_TRUE(p.recv->peekedRemote());
  std::vector<unsigned char> got(bytes);
  auto read = p.recv->copyOut(got.data(), *data, bytes);
  ASSERT_TRUE(read.isOk() && *read);
  EXPECT_EQ(got, big);
  ASSERT_TRUE(p.recv->release().isOk());
  EXPECT_FALSE(p.recv->peekedRemote());
  idle = p.send->drain();
  ASSERT_TRUE(idle.isOk());
  EXPECT_TRUE(*idle);
}

TEST(ShmTransport, SingleCopyOffPostsThroughTheSlotsAndAFailedReceiverEndsTheDrain) {
  Pair off = connect(false);
  ASSERT_TRUE(off.recv && off.send);
  std::vector<unsigned char> big = pattern(kStep * 20, 3);
  ASSERT_TRUE(off.send->acquire().isOk());
  auto posted = off.send->postFrom(big.data(), big.size());
  ASSERT_TRUE(posted.isOk());
  EXPECT_FALSE(*posted);

  Pair on = connect(true);
  ASSERT_TRUE(on.recv && on.send);
  ASSERT_TRUE(on.send->acquire().isOk());
  posted = on.send->postFrom(big.data(), big.size());
  ASSERT_TRUE(posted.isOk() && *posted);
  on.recv->markFailed(1);
  EXPECT_FALSE(on.send->drain().isOk());
}

}  // namespace
}  // namespace weft::runtime
