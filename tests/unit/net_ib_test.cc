// The IB plugin's pure parts, without a device: NCCL_IB_HCA parsing and matching, the GID
// choice on made-up GID tables, the handle and queue pair encodings, request bookkeeping, and
// port speeds.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <cstring>

#include "plugins/net-ib/bootstrap.h"
#include "plugins/net-ib/gid.h"
#include "plugins/net-ib/hca_filter.h"
#include "plugins/net-ib/requests.h"
#include "plugins/net-ib/speed.h"
#include "plugins/net-ib/wire.h"

namespace weft::ib {
namespace {

HcaFilter parse(const char* text) {
  std::string problem;
  std::optional<HcaFilter> f = parseHcaFilter(text, &problem);
  EXPECT_TRUE(f) << text << ": " << problem;
  return f.value_or(HcaFilter{});
}

TEST(IbHcaFilter, EmptySelectsEveryPort) {
  HcaFilter f = parse("");
  EXPECT_TRUE(f.selects("mlx5_0", 1));
  EXPECT_TRUE(f.selects("bnxt_re3", 2));
  EXPECT_TRUE(parse("^").selects("mlx5_0", 1));  // excluding nothing
}

TEST(IbHcaFilter, NamesArePrefixesUnlessEqualsAsksForExactNames) {
  HcaFilter prefix = parse("mlx5");
  EXPECT_TRUE(prefix.selects("mlx5_0", 1));
  EXPECT_TRUE(prefix.selects("mlx5_11", 2));
  EXPECT_FALSE(prefix.selects("mlx4_0", 1));
  HcaFilter exact = parse("=mlx5_1");
  EXPECT_TRUE(exact.selects("mlx5_1", 1));
  EXPECT_FALSE(exact.selects("mlx5_10", 1)) << "'=' must not match by prefix";
  EXPECT_FALSE(parse("mlx5_10").selects("mlx5_1", 1)) << "an entry longer than the name is no prefix of it";
}

TEST(IbHcaFilter, PortListsSelectOnlyThosePorts) {
  HcaFilter f = parse("mlx5_0:1, mlx5_1:2 ,mlx5_2");
  ASSERT_EQ(f.entries.size(), 3u);
  EXPECT_EQ(f.entries[0].port, 1);
  EXPECT_EQ(f.entries[1].name, "mlx5_1");
  EXPECT_EQ(f.entries[2].port, -1);
  EXPECT_TRUE(f.selects("mlx5_0", 1));
  EXPECT_FALSE(f.selects("mlx5_0", 2));
  EXPECT_FALSE(f.selects("mlx5_1", 1));
  EXPECT_TRUE(f.selects("mlx5_1", 2));
  EXPECT_TRUE(f.selects("mlx5_2", 2));
  EXPECT_FALSE(f.selects("mlx5_3", 1));
}

TEST(IbHcaFilter, CaretExcludesTheListWithAndWithoutExactNames) {
  HcaFilter f = parse("^mlx5_0:2,mlx5_1");
  EXPECT_TRUE(f.exclude);
  EXPECT_TRUE(f.selects("mlx5_0", 1));
  EXPECT_FALSE(f.selects("mlx5_0", 2));
  EXPECT_FALSE(f.selects("mlx5_1", 1));
  EXPECT_FALSE(f.selects("mlx5_10", 1)) << "prefix match: mlx5_1 covers mlx5_10";
  HcaFilter g = parse("^=mlx5_1");
  EXPECT_TRUE(g.exclude && g.exact);
  EXPECT_TRUE(g.selects("mlx5_10", 1));
  EXPECT_FALSE(g.selects("mlx5_1", 1));
}

TEST(IbHcaFilter, EmptyEntriesAreIgnoredAndBadPortsRejected) {
  EXPECT_EQ(parse("mlx5_0,,mlx5_1,").entries.size(), 2u);
  std::string problem;
  EXPECT_FALSE(parseHcaFilter("mlx5_0:x", &problem));
  EXPECT_NE(problem.find("'mlx5_0:x'"), std::string::npos) << problem;
  EXPECT_FALSE(parseHcaFilter("mlx5_0:0", &problem));
  EXPECT_FALSE(parseHcaFilter("mlx5_0:", &problem));
  EXPECT_FALSE(parseHcaFilter("mlx5_0:1x", &problem));
  EXPECT_FALSE(parseHcaFilter(":1", &problem));
  EXPECT_NE(problem.find("no device name"), std::string::npos) << problem;
}

std::array<uint8_t, 16> ipv4Gid(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}
std::array<uint8_t, 16> ipv6Gid(uint8_t first, uint8_t second, uint8_t last) {
  std::array<uint8_t, 16> g{};
  g[0] = first;
  g[1] = second;
  g[15] = last;
  return g;
}

// A typical RoCE port: link-local v1/v2, then an IPv4 address as v1/v2, then a global IPv6.
std::vector<GidEntry> roceTable() {
  return {{0, GidType::kRoceV1, ipv6Gid(0xfe, 0x80, 1)}, {1, GidType::kRoceV2, ipv6Gid(0xfe, 0x80, 1)},
          {2, GidType::kRoceV1, ipv4Gid(10, 0, 0, 5)},   {3, GidType::kRoceV2, ipv4Gid(10, 0, 0, 5)},
          {4, GidType::kRoceV1, ipv6Gid(0x20, 0x01, 5)}, {5, GidType::kRoceV2, ipv6Gid(0x20, 0x01, 5)}};
}

TEST(IbGid, RoceDefaultsToTheIpv4MappedRoceV2Gid) {
  std::string why;
  GidPreference want{.ethernet = true, .index = -1, .roceVersion = 2, .family = AF_INET};
  EXPECT_EQ(chooseGid(roceTable(), want, &why), 3u) << why;
  want.roceVersion = 1;
  EXPECT_EQ(chooseGid(roceTable(), want, &why), 2u) << why;
  want = {.ethernet = true, .index = -1, .roceVersion = 2, .family = AF_INET6};
  EXPECT_EQ(chooseGid(roceTable(), want, &why), 5u) << why;
}

TEST(IbGid, RoceFallsBackToAnotherFamilyThenAnotherVersionButNeverLinkLocal) {
  std::string why;
  GidPreference want{.ethernet = true, .index = -1, .roceVersion = 2, .family = AF_INET};
  std::vector<GidEntry> v6Only = {{0, GidType::kRoceV2, ipv6Gid(0xfe, 0x80, 1)}, {1, GidType::kRoceV2, ipv6Gid(0x20, 0x01, 5)}};
  EXPECT_EQ(chooseGid(v6Only, want, &why), 1u) << why;
  std::vector<GidEntry> v1Only = {{0, GidType::kRoceV1, ipv6Gid(0xfe, 0x80, 1)}, {7, GidType::kRoceV1, ipv4Gid(10, 0, 0, 5)}};
  EXPECT_EQ(chooseGid(v1Only, want, &why), 7u) << why;
  std::vector<GidEntry> linkLocal = {{0, GidType::kRoceV2, ipv6Gid(0xfe, 0x80, 1)}, {1, GidType::kRoceV2, {}}};
  EXPECT_FALSE(chooseGid(linkLocal, want, &why));
  EXPECT_NE(why.find("no routable RoCEv2 GID"), std::string::npos) << why;
}

TEST(IbGid, ExplicitIndexMustBeAValidEntry) {
  std::string why;
  GidPreference want{.ethernet = true, .index = 1, .roceVersion = 2, .family = AF_INET};
  EXPECT_EQ(chooseGid(roceTable(), want, &why), 1u) << "an explicit index wins, even link-local";
  want.index = 9;
  EXPECT_FALSE(chooseGid(roceTable(), want, &why));
  EXPECT_NE(why.find("NCCL_IB_GID_INDEX=9"), std::string::npos) << why;
}

TEST(IbGid, InfinibandUsesThePortGid) {
  std::string why;
  std::vector<GidEntry> ib = {{1, GidType::kIb, ipv6Gid(0xfe, 0x80, 2)}, {0, GidType::kIb, ipv6Gid(0xfe, 0x80, 1)}};
  EXPECT_EQ(chooseGid(ib, GidPreference{.ethernet = false}, &why), 0u) << why;
  EXPECT_FALSE(chooseGid({}, GidPreference{.ethernet = false}, &why));
}

TEST(IbGid, ClassifiesAndPrintsAddresses) {
  EXPECT_TRUE(gidIsIpv4Mapped(ipv4Gid(192, 168, 1, 2)));
  EXPECT_FALSE(gidIsIpv4Mapped(ipv6Gid(0x20, 0x01, 5)));
  EXPECT_TRUE(gidIsLinkLocal(ipv6Gid(0xfe, 0x80, 1)));
  EXPECT_TRUE(gidIsLinkLocal(ipv6Gid(0xfe, 0xbf, 1)));
  EXPECT_FALSE(gidIsLinkLocal(ipv6Gid(0xfe, 0xc0, 1)));
  EXPECT_TRUE(gidIsZero({}));
  EXPECT_EQ(gidToString(ipv4Gid(10, 0, 0, 5)), "0:0:0:0:0:ffff:a00:5");
}

Handle sampleHandle(int family) {
  Handle h;
  if (family == AF_INET) {
    h.addr.in4.sin_family = AF_INET;
    h.addr.in4.sin_port = htons(40123);
    inet_pton(AF_INET, "192.0.2.7", &h.addr.in4.sin_addr);
  } else {
    h.addr.in6.sin6_family = AF_INET6;
    h.addr.in6.sin6_port = htons(40124);
    inet_pton(AF_INET6, "2001:db8::7", &h.addr.in6.sin6_addr);
    h.addr.in6.sin6_scope_id = 3;
  }
  h.token = 0x0123456789abcdefULL;
  return h;
}

TEST(IbHandle, RoundTripsBothFamiliesInsideTheHandleSize) {
  EXPECT_LE(kHandleBytes, size_t{WEFT_NET_HANDLE_MAXSIZE});
  for (int family : {AF_INET, AF_INET6}) {
    uint8_t bytes[WEFT_NET_HANDLE_MAXSIZE];
    std::memset(bytes, 0xee, sizeof(bytes));
    Handle h = sampleHandle(family);
    encodeHandle(h, bytes);
    for (size_t i = kHandleBytes; i < sizeof(bytes); ++i) ASSERT_EQ(bytes[i], 0) << "byte " << i << " not cleared";
    std::string why;
    std::optional<Handle> back = decodeHandle(bytes, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->addr.sa.sa_family, family);
    EXPECT_EQ(back->token, h.token);
    EXPECT_EQ(back->connecting, nullptr);
    if (family == AF_INET) {
      EXPECT_EQ(back->addr.in4.sin_port, h.addr.in4.sin_port);
      EXPECT_EQ(back->addr.in4.sin_addr.s_addr, h.addr.in4.sin_addr.s_addr);
    } else {
      EXPECT_EQ(back->addr.in6.sin6_port, h.addr.in6.sin6_port);
      EXPECT_EQ(std::memcmp(&back->addr.in6.sin6_addr, &h.addr.in6.sin6_addr, 16), 0);
      EXPECT_EQ(back->addr.in6.sin6_scope_id, 3u);
    }
  }
}

TEST(IbHandle, KeepsTheConnectorsProgressPointer) {
  uint8_t bytes[WEFT_NET_HANDLE_MAXSIZE];
  encodeHandle(sampleHandle(AF_INET), bytes);
  auto* marker = reinterpret_cast<Connecting*>(bytes);  // any non-null pointer value
  storeConnecting(bytes, marker);
  std::string why;
  EXPECT_EQ(decodeHandle(bytes, &why)->connecting, marker);
}

TEST(IbHandle, RejectsGarbageWrongMagicVersionAndFamily) {
  uint8_t bytes[WEFT_NET_HANDLE_MAXSIZE];
  std::string why;
  std::memset(bytes, 0, sizeof(bytes));
  EXPECT_FALSE(decodeHandle(bytes, &why));
  EXPECT_NE(why.find("wrong magic"), std::string::npos) << why;
  std::memset(bytes, 0x5a, sizeof(bytes));
  EXPECT_FALSE(decodeHandle(bytes, &why));
  encodeHandle(sampleHandle(AF_INET), bytes);
  bytes[4] = 9;  // wire version
  EXPECT_FALSE(decodeHandle(bytes, &why));
  EXPECT_NE(why.find("wire version 9"), std::string::npos) << why;
  encodeHandle(sampleHandle(AF_INET), bytes);
  bytes[kHandleAddrOffset] = AF_UNIX;
  EXPECT_FALSE(decodeHandle(bytes, &why));
  EXPECT_NE(why.find("address family"), std::string::npos) << why;
}

QpInfo sampleQp() {
  QpInfo q;
  q.token = 77;
  q.qpn = 0x12345;
  q.psn = 0xabcdef;
  q.lid = 0x1234;
  q.linkLayer = IBV_LINK_LAYER_ETHERNET;
  q.mtu = IBV_MTU_4096;
  q.ibPort = 2;
  q.gidIndex = 3;
  q.gid = ipv4Gid(10, 0, 0, 5);
  q.fifoAddr = 0x7f0000001000ULL;
  q.fifoRkey = 0xdeadbeef;
  return q;
}

TEST(IbQpInfo, RoundTripsEveryField) {
  uint8_t bytes[kQpInfoBytes];
  QpInfo q = sampleQp();
  encodeQpInfo(q, bytes);
  std::string why;
  std::optional<QpInfo> back = decodeQpInfo(bytes, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->token, q.token);
  EXPECT_EQ(back->qpn, q.qpn);
  EXPECT_EQ(back->psn, q.psn);
  EXPECT_EQ(back->lid, q.lid);
  EXPECT_EQ(back->linkLayer, q.linkLayer);
  EXPECT_EQ(back->mtu, q.mtu);
  EXPECT_EQ(back->ibPort, q.ibPort);
  EXPECT_EQ(back->gidIndex, q.gidIndex);
  EXPECT_EQ(back->gid, q.gid);
  EXPECT_EQ(back->fifoAddr, q.fifoAddr);
  EXPECT_EQ(back->fifoRkey, q.fifoRkey);
  EXPECT_EQ(bytes[0], 0x57) << "little-endian on every host";
}

TEST(IbQpInfo, RejectsWrongMagicWidePsnBadMtuAndLinkLayer) {
  uint8_t bytes[kQpInfoBytes];
  std::string why;
  std::memset(bytes, 0, sizeof(bytes));
  EXPECT_FALSE(decodeQpInfo(bytes, &why));
  EXPECT_NE(why.find("wrong magic"), std::string::npos) << why;
  QpInfo q = sampleQp();
  q.psn = 0x1000000;
  encodeQpInfo(q, bytes);
  EXPECT_FALSE(decodeQpInfo(bytes, &why));
  EXPECT_NE(why.find("24 bits"), std::string::npos) << why;
  q = sampleQp();
  q.mtu = 9;
  encodeQpInfo(q, bytes);
  EXPECT_FALSE(decodeQpInfo(bytes, &why));
  EXPECT_NE(why.find("MTU code 9"), std::string::npos) << why;
  q = sampleQp();
  q.linkLayer = 7;
  encodeQpInfo(q, bytes);
  EXPECT_FALSE(decodeQpInfo(bytes, &why));
  EXPECT_NE(why.find("link layer 7"), std::string::npos) << why;
}

TEST(IbRequests, ReceiveSlotsFollowTheSequenceAndWaitForTheirTurn) {
  RequestTable t;
  for (int i = 0; i < kMaxRequests; ++i) ASSERT_EQ(t.acquire(RequestKind::kRecv, 1), i);
  EXPECT_EQ(t.inUse(), kMaxRequests);
  EXPECT_EQ(t.acquire(RequestKind::kRecv, 1), -1) << "slot 0 is still in use";
  t.release(5);
  EXPECT_EQ(t.acquire(RequestKind::kRecv, 1), -1) << "the next in sequence is slot 0, not the free slot 5";
  t.release(0);
  EXPECT_EQ(t.acquire(RequestKind::kRecv, 1), 0);
  EXPECT_EQ(t.sequence(), uint64_t{kMaxRequests} + 1);
  EXPECT_EQ(t.acquire(RequestKind::kRecv, 0), -1);
  EXPECT_EQ(t.acquire(RequestKind::kRecv, kMaxRecvs + 1), -1);
}

TEST(IbRequests, SendSlotsTakeAnyFreeSlot) {
  RequestTable t;
  for (int i = 0; i < kMaxRequests; ++i) ASSERT_EQ(t.acquireFree(RequestKind::kSend), i);
  EXPECT_EQ(t.acquireFree(RequestKind::kSend), -1);
  t.release(17);
  EXPECT_EQ(t.acquireFree(RequestKind::kSend), 17);
}

TEST(IbRequests, MultiReceiveCompletesWhenEveryBufferLandedAndItsFifoWriteIsDone) {
  RequestTable t;
  int slot = t.acquire(RequestKind::kRecv, 3);
  ASSERT_EQ(slot, 0);
  t.at(slot).outstanding = 1;  // the FIFO write that announced the buffers
  std::string why;
  ASSERT_TRUE(t.land(slot, 2, 300, &why)) << why;
  ASSERT_TRUE(t.land(slot, 0, 100, &why)) << why;
  EXPECT_FALSE(t.at(slot).done());
  EXPECT_FALSE(t.land(slot, 2, 5, &why)) << "buffer 2 landed twice";
  EXPECT_NE(why.find("buffer 2"), std::string::npos) << why;
  EXPECT_FALSE(t.land(slot, 3, 5, &why)) << "only 3 buffers";
  ASSERT_TRUE(t.land(slot, 1, 0, &why)) << why;
  EXPECT_FALSE(t.at(slot).done()) << "the FIFO write has not completed";
  t.at(slot).outstanding = 0;
  EXPECT_TRUE(t.at(slot).done());
  EXPECT_EQ(t.at(slot).sizes[0], 100u);
  EXPECT_EQ(t.at(slot).sizes[1], 0u);
  EXPECT_EQ(t.at(slot).sizes[2], 300u);
  EXPECT_FALSE(t.land(7, 0, 1, &why)) << "slot 7 is free";
  EXPECT_NE(why.find("not in use"), std::string::npos) << why;
}

TEST(IbSpeed, ProductOfLaneRateAndWidth) {
  EXPECT_EQ(portSpeedMbps(0x01, 0x01), 2500);     // SDR 1x
  EXPECT_EQ(portSpeedMbps(0x04, 0x02), 40000);    // QDR 4x
  EXPECT_EQ(portSpeedMbps(0x10, 0x02), 56000);    // FDR 4x
  EXPECT_EQ(portSpeedMbps(0x20, 0x02), 100000);   // EDR 4x
  EXPECT_EQ(portSpeedMbps(0x40, 0x02), 200000);   // HDR 4x
  EXPECT_EQ(portSpeedMbps(0x80, 0x02), 400000);   // NDR 4x
  EXPECT_EQ(portSpeedMbps(0x40, 0x10), 100000);   // HDR 2x (HDR100)
  EXPECT_EQ(portSpeedMbps(0x20, 0x08), 300000);   // EDR 12x
  EXPECT_EQ(portSpeedMbps(0x80, 0x04), 800000);   // NDR 8x
}

TEST(IbSpeed, UnknownBitsGiveTheSlowestEntry) {
  EXPECT_EQ(portSpeedMbps(0, 0), 2500);
  EXPECT_EQ(portSpeedMbps(0x20, 0x20), 25000);  // width bit 5 is not defined
}

}  // namespace
}  // namespace weft::ib

namespace weft::ib {
namespace {

// The TCP side channel that carries queue pair descriptions, over loopback: what connect() and
// accept() exchange before any verbs call on the peer's behalf.
SockAddr loopback() {
  SockAddr a{};
  a.in4.sin_family = AF_INET;
  a.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// Drives a non-blocking transfer to completion, with a bound so a broken one fails, not hangs.
template <typename Step>
void drive(Step step) {
  bool done = false;
  for (int i = 0; i < 1000000 && !done; ++i) ASSERT_EQ(step(&done), weftSuccess);
  ASSERT_TRUE(done) << "the transfer did not finish";
}

TEST(IbBootstrap, MovesAQueuePairDescriptionOverLoopback) {
  SockAddr addr = loopback();
  Fd listener, client;
  ASSERT_EQ(listenOn(&addr, &listener), weftSuccess);
  EXPECT_NE(addr.in4.sin_port, 0) << "the kernel's port is written back";
  EXPECT_EQ(addressToString(addr).rfind("127.0.0.1:", 0), 0u) << addressToString(addr);
  ASSERT_EQ(connectTo(addr, &client), weftSuccess);
  int accepted = -1;
  for (int i = 0; i < 1000000 && accepted < 0; ++i) accepted = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK);
  ASSERT_GE(accepted, 0);
  Fd server(accepted);
  uint8_t out[kQpInfoBytes], in[kQpInfoBytes];
  encodeQpInfo(sampleQp(), out);
  size_t sent = 0, got = 0;
  drive([&](bool* done) { return sendSome(client.get(), out, sizeof(out), &sent, done, "a QP description"); });
  drive([&](bool* done) { return recvSome(server.get(), in, sizeof(in), &got, done, "a QP description"); });
  std::string why;
  std::optional<QpInfo> q = decodeQpInfo(in, &why);
  ASSERT_TRUE(q) << why;
  EXPECT_EQ(q->qpn, sampleQp().qpn);
  EXPECT_EQ(q->fifoRkey, sampleQp().fifoRkey);
}

TEST(IbBootstrap, ReceivingFromAClosedPeerFails) {
  SockAddr addr = loopback();
  Fd listener, client;
  ASSERT_EQ(listenOn(&addr, &listener), weftSuccess);
  ASSERT_EQ(connectTo(addr, &client), weftSuccess);
  int accepted = -1;
  for (int i = 0; i < 1000000 && accepted < 0; ++i) accepted = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK);
  ASSERT_GE(accepted, 0);
  Fd server(accepted);
  client.reset();
  uint8_t in[kQpInfoBytes];
  size_t got = 0;
  bool done = false;
  weft_result_t rc = weftSuccess;
  for (int i = 0; i < 1000000 && rc == weftSuccess; ++i) rc = recvSome(server.get(), in, sizeof(in), &got, &done, "a QP description");
  EXPECT_EQ(rc, weftRemoteError);
  EXPECT_FALSE(done);
}

TEST(IbBootstrap, ConnectingToANonListeningPortFailsAtTheFirstSend) {
  SockAddr addr = loopback();
  Fd listener;
  ASSERT_EQ(listenOn(&addr, &listener), weftSuccess);
  listener.reset();  // the port is now closed
  Fd client;
  weft_result_t rc = connectTo(addr, &client);
  uint8_t out[kQpInfoBytes] = {};
  size_t sent = 0;
  bool done = false;
  for (int i = 0; i < 1000000 && rc == weftSuccess && !done; ++i) rc = sendSome(client.get(), out, sizeof(out), &sent, &done, "a QP description");
  EXPECT_EQ(rc, weftRemoteError);
}

}  // namespace
}  // namespace weft::ib
