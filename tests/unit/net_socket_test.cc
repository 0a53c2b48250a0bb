// The socket plugin's pure parts: NCCL's interface-name filter and default order, and how
// messages are striped over data sockets.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

#include "plugins/net-socket/config.h"
#include "plugins/net-socket/interfaces.h"
#include "plugins/net-socket/wire.h"

namespace weft::socket {
namespace {

Interface iface(const std::string& name, int family) {
  Interface i;
  i.name = name;
  i.addr.ss_family = static_cast<sa_family_t>(family);
  i.addrLen = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  return i;
}

std::vector<std::string> names(const std::vector<Interface>& list) {
  std::vector<std::string> out;
  for (const Interface& i : list) out.push_back(i.name + (i.family() == AF_INET6 ? "/6" : "/4"));
  return out;
}

TEST(SocketIfName, PrefixExactAndExcludeFollowNccl) {
  EXPECT_TRUE(matchesIfName("eth0", "eth"));
  EXPECT_TRUE(matchesIfName("eth10", "eth1"));
  EXPECT_FALSE(matchesIfName("eth10", "=eth1"));
  EXPECT_TRUE(matchesIfName("eth1", "=eth1,eth2"));
  EXPECT_FALSE(matchesIfName("ib0", "eth,en"));
  EXPECT_TRUE(matchesIfName("enp1s0", "eth,en"));
  EXPECT_FALSE(matchesIfName("docker0", "^docker,lo"));
  EXPECT_TRUE(matchesIfName("eth0", "^docker,lo"));
  EXPECT_FALSE(matchesIfName("lo", "^=lo"));
  EXPECT_TRUE(matchesIfName("lo0", "^=lo"));
  EXPECT_TRUE(matchesIfName("anything", ""));
}

TEST(SocketInterfaces, DefaultOrderPrefersIbThenRealNicsThenDockerThenLo) {
  std::vector<Interface> all = {iface("lo", AF_INET), iface("docker0", AF_INET), iface("eth0", AF_INET),
                                iface("eth0", AF_INET6), iface("virbr0", AF_INET)};
  EXPECT_EQ(names(selectInterfaces(all, "", AF_UNSPEC, 16)), std::vector<std::string>{"eth0/4"});
  all.push_back(iface("ib0", AF_INET));
  EXPECT_EQ(names(selectInterfaces(all, "", AF_UNSPEC, 16)), std::vector<std::string>{"ib0/4"});
  std::vector<Interface> noNic = {iface("lo", AF_INET), iface("docker0", AF_INET), iface("virbr0", AF_INET)};
  EXPECT_EQ(names(selectInterfaces(noNic, "", AF_UNSPEC, 16)), std::vector<std::string>{"docker0/4"});
  std::vector<Interface> onlyLo = {iface("lo", AF_INET), iface("virbr0", AF_INET)};
  EXPECT_EQ(names(selectInterfaces(onlyLo, "", AF_UNSPEC, 16)), std::vector<std::string>{"lo/4"});
}

TEST(SocketInterfaces, FamilyAndSpecAndLimit) {
  std::vector<Interface> all = {iface("lo", AF_INET), iface("lo", AF_INET6), iface("eth0", AF_INET),
                                iface("eth1", AF_INET), iface("eth2", AF_INET)};
  EXPECT_EQ(names(selectInterfaces(all, "lo", AF_INET6, 16)), std::vector<std::string>{"lo/6"});
  EXPECT_EQ(names(selectInterfaces(all, "=lo", AF_UNSPEC, 16)), std::vector<std::string>{"lo/4"});
  EXPECT_EQ(names(selectInterfaces(all, "^eth1", AF_INET, 16)), (std::vector<std::string>{"lo/4", "eth0/4", "eth2/4"}));
  EXPECT_EQ(names(selectInterfaces(all, "eth", AF_UNSPEC, 2)), (std::vector<std::string>{"eth0/4", "eth1/4"}));
  EXPECT_TRUE(selectInterfaces(all, "nosuch", AF_UNSPEC, 16).empty());
}

TEST(SocketInterfaces, LoopbackHasNoSysfsSpeedSoItIsTenGigabits) {
  EXPECT_EQ(linkSpeedMbps("lo"), 10000);
  EXPECT_EQ(linkSpeedMbps("no-such-interface"), 10000);
  EXPECT_EQ(pciPath("lo"), "");
}

TEST(SocketStripes, EveryByteOnExactlyOneSocket) {
  for (uint64_t size : {uint64_t{129}, uint64_t{65536}, uint64_t{65537}, uint64_t{1} << 20, (uint64_t{1} << 30) + 3}) {
    for (int n : {1, 2, 3, 8, 64}) {
      uint64_t next = 0;
      for (int s = 0; s < n; ++s) {
        Range r = stripeRange(size, s, n);
        if (r.length == 0) continue;
        EXPECT_EQ(r.offset, next) << size << " bytes, socket " << s << " of " << n;
        EXPECT_TRUE(r.length >= kMinChunkBytes || r.offset + r.length == size);
        next = r.offset + r.length;
      }
      EXPECT_EQ(next, size) << size << " bytes over " << n << " sockets";
    }
  }
}

TEST(SocketWire, HandleFitsNcclsLimit) { EXPECT_LE(sizeof(Handle), static_cast<size_t>(WEFT_NET_HANDLE_MAXSIZE)); }

}  // namespace
}  // namespace weft::socket

namespace weft::socket {
namespace {

// NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD as NCCL reads them: automatic per NIC vendor,
// clamped to 16 threads and 64 sockets, and no helper threads without sockets.
class SocketConfigTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v : {"NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD", "NCCL_SOCKET_FAMILY", "NCCL_SOCKET_IFNAME"})
      unsetenv(v);
  }
};

TEST_F(SocketConfigTest, AutomaticValuesFollowTheNicVendor) {
  Config other = readConfig(0x8086);
  EXPECT_EQ(other.nThreads, 0);
  EXPECT_EQ(other.nSocks, 0);
  Config aws = readConfig(0x1d0f);
  EXPECT_EQ(aws.nThreads, 2);
  EXPECT_EQ(aws.nSocks, 16);
  Config gcp = readConfig(0x1ae0);
  EXPECT_EQ(gcp.nThreads, 4);
  EXPECT_EQ(gcp.nSocks, 4);
}

TEST_F(SocketConfigTest, ExplicitValuesAreClampedToNcclsLimits) {
  setenv("NCCL_SOCKET_NTHREADS", "20", 1);
  setenv("NCCL_NSOCKS_PERTHREAD", "8", 1);
  Config c = readConfig(0);
  EXPECT_EQ(c.nThreads, 16);
  EXPECT_EQ(c.nSocks, 64);  // 16 x 4: sockets per thread cut to stay within 64
  setenv("NCCL_SOCKET_NTHREADS", "3", 1);
  setenv("NCCL_NSOCKS_PERTHREAD", "0", 1);
  c = readConfig(0);
  EXPECT_EQ(c.nSocks, 0);
  EXPECT_EQ(c.nThreads, 0);  // threads without sockets would have nothing to move
}

TEST_F(SocketConfigTest, FamilyAndInterfaceNames) {
  setenv("NCCL_SOCKET_FAMILY", "AF_INET6", 1);
  setenv("NCCL_SOCKET_IFNAME", "^docker", 1);
  Config c = readInterfaceConfig();
  EXPECT_EQ(c.family, AF_INET6);
  EXPECT_EQ(c.ifName, "^docker");
  setenv("NCCL_SOCKET_FAMILY", "AF_UNIX", 1);  // not an IP family: ignored
  EXPECT_EQ(readInterfaceConfig().family, AF_UNSPEC);
}

}  // namespace
}  // namespace weft::socket
