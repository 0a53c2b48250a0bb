// The OFI plugin's pure parts: which provider and which domains it picks from what libfabric
// lists, the speed fallback, the tag layout, and the checks on a received hello.
#include <gtest/gtest.h>

#include <cstring>

#include "plugins/net-ofi/config.h"
#include "plugins/net-ofi/devices.h"
#include "plugins/net-ofi/wire.h"

namespace weft::ofi {
namespace {

TEST(OfiProvider, NamesMatchWholeOrByLayerCaseInsensitively) {
  EXPECT_TRUE(providerMatches("tcp;ofi_rxm", "tcp"));
  EXPECT_TRUE(providerMatches("tcp;ofi_rxm", "ofi_rxm"));
  EXPECT_TRUE(providerMatches("tcp;ofi_rxm", "TCP;OFI_RXM"));
  EXPECT_TRUE(providerMatches("efa", " efa "));
  EXPECT_FALSE(providerMatches("tcp;ofi_rxm", "tc"));
  EXPECT_FALSE(providerMatches("verbs;ofi_rxm", "tcp"));
  EXPECT_FALSE(providerMatches("tcp", ""));
  EXPECT_TRUE(sameHostOnly("shm"));
  EXPECT_FALSE(sameHostOnly("tcp;ofi_rxm"));
}

TEST(OfiProvider, DefaultIsLibfabricsFirstThatReachesOtherHosts) {
  EXPECT_EQ(chooseProvider({"tcp;ofi_rxm", "net", "shm"}, ""), 0);
  EXPECT_EQ(chooseProvider({"shm", "efa"}, ""), 1);
  EXPECT_EQ(chooseProvider({"shm"}, ""), -1);
  EXPECT_EQ(chooseProvider({}, ""), -1);
}

TEST(OfiProvider, PreferenceListPicksTheFirstAvailableEntry) {
  std::vector<std::string> available = {"tcp;ofi_rxm", "udp;ofi_rxd", "shm", "sockets"};
  EXPECT_EQ(chooseProvider(available, "efa,sockets,tcp"), 3);  // efa absent; sockets before tcp in the list
  EXPECT_EQ(chooseProvider(available, "udp"), 1);
  EXPECT_EQ(chooseProvider(available, "shm"), 2);  // asked for by name: allowed
  EXPECT_EQ(chooseProvider(available, "efa,cxi"), -1);
}

TEST(OfiDevices, OneDevicePerDomainOfTheChosenProviderInOrder) {
  // What fi_getinfo lists on the development VM: each domain once per address family and
  // endpoint variant, several providers.
  std::vector<InfoSummary> infos = {{"tcp;ofi_rxm", "eth0"}, {"tcp;ofi_rxm", "eth0"}, {"tcp;ofi_rxm", "lo"},
                                    {"tcp;ofi_rxm", "lo"},   {"net", "eth0"},        {"tcp;ofi_rxm", "eth0"},
                                    {"shm", "shm"}};
  EXPECT_EQ(providersOf(infos), (std::vector<std::string>{"tcp;ofi_rxm", "net", "shm"}));
  EXPECT_EQ(firstEntryPerDomain(infos, "tcp;ofi_rxm"), (std::vector<size_t>{0, 2}));
  EXPECT_EQ(firstEntryPerDomain(infos, "net"), (std::vector<size_t>{4}));
  EXPECT_TRUE(firstEntryPerDomain(infos, "efa").empty());
  // lo is left out while another domain remains; alone, it stays (one-host runs on loopback).
  EXPECT_EQ(withoutLoopback(infos, {0, 2}), (std::vector<size_t>{0}));
  EXPECT_EQ(withoutLoopback(infos, {2}), (std::vector<size_t>{2}));
  std::vector<InfoSummary> docker = {{"tcp", "docker0"}, {"tcp", "ib0"}};
  EXPECT_EQ(withoutLoopback(docker, {0, 1}), (std::vector<size_t>{1}));
}

TEST(OfiDevices, SpeedFromLinkThenSysfsThenTenGigabits) {
  std::string source;
  EXPECT_EQ(chooseSpeedMbps(100000000000ULL, 25000, &source), 100000);  // 100 Gb/s link attribute
  EXPECT_EQ(source, "link");
  EXPECT_EQ(chooseSpeedMbps(0, 25000, &source), 25000);
  EXPECT_EQ(source, "sysfs");
  EXPECT_EQ(chooseSpeedMbps(0, -1, &source), kFallbackSpeedMbps);  // lo, or a VM's virtio NIC
  EXPECT_EQ(source, "fallback");
  EXPECT_EQ(kFallbackSpeedMbps, 10000);
  EXPECT_EQ(chooseSpeedMbps(400000000000000ULL, 0, &source), 400000000);  // 400 Tb/s: still an int
}

TEST(OfiDevices, GuidIsStablePerDomainAndDiffersBetweenDomains) {
  EXPECT_EQ(deviceGuid("tcp;ofi_rxm", "lo"), deviceGuid("tcp;ofi_rxm", "lo"));
  EXPECT_NE(deviceGuid("tcp;ofi_rxm", "lo"), deviceGuid("tcp;ofi_rxm", "eth0"));
  EXPECT_NE(deviceGuid("tcp;ofi_rxm", "eth0"), deviceGuid("net", "eth0"));
}

TEST(OfiTags, LayoutKeepsUserTagKeyAndControlApart) {
  auto t = TagLayout::fromFormat(0xaaaaaaaaaaaaaaaaULL);  // rxm: 64 bits
  ASSERT_TRUE(t);
  EXPECT_EQ(t->bits, 64);
  EXPECT_EQ(t->controlBit(), uint64_t{1} << 63);
  EXPECT_EQ(t->data(0x12345678, -1), 0x12345678ffffffffULL);
  EXPECT_EQ(t->data(0xffffffff, 7) & t->controlBit(), 0u);  // a key never reaches the control bit
  EXPECT_NE(t->data(1, 7), t->data(2, 7));
  EXPECT_EQ(t->control(kProbeTag), (uint64_t{1} << 63) | 3);
  auto narrow = TagLayout::fromFormat(0x5555555555555555ULL);  // 63 bits
  ASSERT_TRUE(narrow);
  EXPECT_EQ(narrow->controlBit(), uint64_t{1} << 62);
  EXPECT_EQ(narrow->data(0xffffffff, 0) & narrow->controlBit(), 0u);
  EXPECT_EQ(TagLayout::fromFormat(0)->bits, 64);  // unspecified: all 64
  EXPECT_FALSE(TagLayout::fromFormat(0xffffffffffULL));  // 40 bits: no room for a key
}

Hello validHello(HelloKind kind) {
  Hello h{};
  h.magic = kHelloMagic;
  h.version = kWireVersion;
  h.kind = kind;
  h.token = 42;
  h.connId = 7;
  h.addrLen = 16;
  return h;
}

TEST(OfiHello, ValidatesSizeMagicVersionKindTokenAndConnection) {
  const size_t full = offsetof(Hello, addr) + 16;
  Hello h = validHello(HelloKind::kConnect);
  EXPECT_FALSE(helloProblem(h, full, HelloKind::kConnect, 42, std::nullopt));
  EXPECT_NE(helloProblem(h, 8, HelloKind::kConnect, 42, std::nullopt)->find("8-byte message"), std::string::npos);
  EXPECT_NE(helloProblem(h, full, HelloKind::kConnect, 43, std::nullopt)->find("wrong token"), std::string::npos);
  EXPECT_NE(helloProblem(h, full, HelloKind::kAccept, 42, std::nullopt)->find("kind"), std::string::npos);
  EXPECT_NE(helloProblem(h, full - 1, HelloKind::kConnect, 42, std::nullopt)->find("address length"), std::string::npos);
  Hello answer = validHello(HelloKind::kAccept);
  EXPECT_FALSE(helloProblem(answer, full, HelloKind::kAccept, 42, 7));
  EXPECT_NE(helloProblem(answer, full, HelloKind::kAccept, 42, 8)->find("another connection"), std::string::npos);
  h.magic = 0x4e5a4a47;
  EXPECT_NE(helloProblem(h, full, HelloKind::kConnect, 42, std::nullopt)->find("magic"), std::string::npos);
  h = validHello(HelloKind::kConnect);
  h.version = 2;
  EXPECT_NE(helloProblem(h, full, HelloKind::kConnect, 42, std::nullopt)->find("wire version 2"), std::string::npos);
  h = validHello(HelloKind::kConnect);
  h.addrLen = 1000;
  EXPECT_TRUE(helloProblem(h, sizeof(Hello), HelloKind::kConnect, 42, std::nullopt));
}

TEST(OfiHandle, FillsExactlyTheHandleSize) {
  EXPECT_EQ(sizeof(Handle), static_cast<size_t>(WEFT_NET_HANDLE_MAXSIZE));
  EXPECT_GE(kMaxHandleAddr, 32u);  // EFA's 32-byte addresses fit
}

}  // namespace
}  // namespace weft::ofi
