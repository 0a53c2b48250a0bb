// The built libweft-net-ofi.so, opened as NCCL opens it and through weft's loader, on
// libfabric's tcp provider over loopback only: its tables, the v8/v10 adapters, NCCL_NET=ofi,
// what happens when libfabric offers no usable provider, and NCCL_NET / WEFT_NET_FALLBACK
// between it and the socket plugin.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "tests/support/scoped_env.h"
#include "tests/unit/net_plugin_abi.h"
#include "tests/unit/plugin_test_support.h"

namespace weft {
namespace {

using test::ScopedEnv;

const std::string kOfi = std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libweft-net-ofi.so";

// Every test in this program uses the tcp provider on lo only.
class LoopbackOnly : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("FI_PROVIDER", "tcp", 1);
    setenv("FI_TCP_IFACE", "lo", 1);
  }
};
const auto* const kLoopbackOnly = ::testing::AddGlobalTestEnvironment(new LoopbackOnly);

class OfiAbi : public test::PluginAbi {
 protected:
  OfiAbi() : PluginAbi(kOfi) {}
};

TEST_F(OfiAbi, ExportsV11V10AndV8NamedOfiAndNothingElse) { expectTables("OFI"); }

TEST_F(OfiAbi, V8AndV10PropertiesAreTheV11OnesFieldByField) {
  size_t size = 0;
  auto* t11 = static_cast<const weft_net_v11_t*>(symbol("ncclNetPlugin_v11", &size));
  auto* t10 = static_cast<const weft_net_v10_t*>(symbol("ncclNetPlugin_v10", &size));
  auto* t8 = static_cast<const weft_net_v8_t*>(symbol("ncclNetPlugin_v8", &size));
  ASSERT_TRUE(t11 && t10 && t8);
  ASSERT_EQ(t8->init(nullptr), weftSuccess);
  int n = 0;
  ASSERT_EQ(t8->devices(&n), weftSuccess);
  ASSERT_EQ(n, 1) << "FI_TCP_IFACE=lo gives one domain";
  weft_net_properties_v11_t p11;
  ASSERT_EQ(t11->getProperties(0, &p11), weftSuccess);
  weft_net_properties_v10_t p10;
  ASSERT_EQ(t10->getProperties(0, &p10), weftSuccess);
  unsigned char raw[sizeof(weft_net_properties_v8_t) + 16];
  std::memset(raw, 0xcd, sizeof(raw));
  ASSERT_EQ(t8->getProperties(0, reinterpret_cast<weft_net_properties_v8_t*>(raw)), weftSuccess);
  for (size_t i = sizeof(weft_net_properties_v8_t); i < sizeof(raw); ++i) EXPECT_EQ(raw[i], 0xcd) << "wrote past the v8 struct";
  auto* p8 = reinterpret_cast<weft_net_properties_v8_t*>(raw);
  EXPECT_STREQ(p11.name, "lo");
  EXPECT_STREQ(p10.name, "lo");
  EXPECT_STREQ(p8->name, "lo");
  EXPECT_EQ(p11.speed, 10000);  // tcp reports no link speed and lo has none in sysfs: the fallback
  EXPECT_EQ(p10.speed, p11.speed);
  EXPECT_EQ(p8->speed, p11.speed);
  EXPECT_EQ(p8->guid, p11.guid);
  EXPECT_EQ(p10.maxRecvs, 8);
  EXPECT_EQ(p8->maxRecvs, 8);
  EXPECT_EQ(p10.maxP2pBytes, p11.maxP2pBytes);
  EXPECT_EQ(p11.maxMultiRequestSize, 1);
  EXPECT_EQ(p8->ptrSupport, WEFT_PTR_HOST);
}

TEST_F(OfiAbi, V8RefusesNegativeSizes) {
  size_t size = 0;
  auto* t8 = static_cast<const weft_net_v8_t*>(symbol("ncclNetPlugin_v8", &size));
  ASSERT_NE(t8, nullptr);
  void* request = nullptr;
  int sizes[1] = {-5};
  void* data = nullptr;
  int tag = 0;
  EXPECT_NE(t8->isend(nullptr, nullptr, -1, 0, nullptr, &request), weftSuccess);
  EXPECT_NE(t8->irecv(nullptr, 1, &data, sizes, &tag, nullptr, &request), weftSuccess);
  EXPECT_EQ(request, nullptr);
}

class OfiLoader : public test::PluginLogTest {};

TEST_F(OfiLoader, NcclNetPluginWeftOfiPicksWeftsOfiPlugin) {
  config::Settings s;
  ASSERT_TRUE(s.set("NCCL_NET_PLUGIN", "weft-ofi").isOk());
  ASSERT_TRUE(s.set("NCCL_NET", "ofi").isOk());  // NCCL compares names case-insensitively
  auto n = plugin::selectNet(s, plugin::NetLoaderOptions{}, 5);
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "OFI");
  EXPECT_EQ((*n)->plugin().abiVersion(), 11);
  EXPECT_EQ((*n)->deviceCount(), 1);
  EXPECT_EQ(linesWith("NET/Plugin: using OFI from").size(), 1u);
  EXPECT_EQ(linesWith("NET/Plugin: 'weft-ofi' loads " + kOfi).size(), 1u);  // which file the name took
  EXPECT_EQ(linesWith("NET/OFI : Using provider tcp;ofi_rxm").size(), 1u);
}

// "ofi" is aws-ofi-nccl's name (libnccl-net-ofi.so): weft's plugin never answers to it, and the
// error for a machine without AWS's plugin says what weft's own is called.
TEST_F(OfiLoader, BareOfiIsNcclsNameForAwsPluginNotWefts) {
  auto loaded = plugin::loadNetPlugin("ofi", plugin::NetLoaderOptions{});
  if (loaded.isOk()) {
    EXPECT_NE((*loaded)->path(), kOfi);
    EXPECT_EQ((*loaded)->fileName(), "libnccl-net-ofi.so");
    return;
  }
  EXPECT_EQ(loaded.status().code(), Code::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("tried ofi, libnccl-net-ofi.so)"), std::string::npos) << loaded.status().message();
  EXPECT_NE(loaded.status().message().find("weft's own plugin of that kind is 'weft-ofi'"), std::string::npos)
      << loaded.status().message();
}

TEST_F(OfiLoader, NcclNameResolvesToWeftsPlugin) {
  auto loaded = plugin::loadNetPlugin(std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-net-weft-ofi.so", test::fakeOnlyOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_STREQ((*loaded)->api().name(), "OFI");
}

// The plugin keeps libfabric loaded for good (plugin.cc); it must not keep itself loaded.
TEST_F(OfiLoader, PluginUnloadsAfterItsLastUser) {
  {
    auto loaded = plugin::loadNetPlugin(kOfi, test::fakeOnlyOptions());
    ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
    auto n = plugin::initNet(*loaded, 7);
    ASSERT_TRUE(n.isOk()) << n.status().toString();
  }
  void* still = dlopen(kOfi.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(still, nullptr) << "libweft-net-ofi.so is still loaded";
  if (still != nullptr) dlclose(still);
}

TEST_F(OfiLoader, NoMatchingProviderMeansZeroDevicesAndOneInfoLine) {
  ScopedEnv efa("WEFT_OFI_PROVIDER", "efa");  // not on this machine
  auto loaded = plugin::loadNetPlugin(kOfi, test::fakeOnlyOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  auto n = plugin::initNet(*loaded, 6);
  ASSERT_FALSE(n.isOk());
  EXPECT_EQ(n.status().code(), Code::kInvalidUsage);
  EXPECT_NE(n.status().message().find("OFI found no device"), std::string::npos) << n.status().message();
  auto info = linesWith("NET/OFI : No device found");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_NE(info[0].find("no provider matches WEFT_OFI_PROVIDER=efa"), std::string::npos) << info[0];
}


// NCCL_NET and WEFT_NET_FALLBACK between the two plugins built here: OFI (libfabric tcp on lo)
// and socket (lo), both found by name in weft's plugin folder, in NCCL_NET_PLUGIN's order. No
// built-ins, so only the two listed plugins can answer.
class OfiSocketSelection : public OfiLoader {
 protected:
  OfiSocketSelection() { options_.builtins = {}; }
  config::Settings settings(const std::string& plugins, const std::string& net, const std::string& fallback = "") {
    config::Settings s;
    EXPECT_TRUE(s.set("NCCL_NET_PLUGIN", plugins).isOk());
    if (!net.empty()) { EXPECT_TRUE(s.set("NCCL_NET", net).isOk()); }
    if (!fallback.empty()) { EXPECT_TRUE(s.set("WEFT_NET_FALLBACK", fallback).isOk()); }
    return s;
  }
  plugin::NetLoaderOptions options_;
  ScopedEnv loopbackSockets_{"NCCL_SOCKET_IFNAME", "=lo"};
};

// Without NCCL_NET the first plugin listed wins: each test below lists the other one first.
TEST_F(OfiSocketSelection, FirstListedWorkingPluginWinsWithoutNcclNet) {
  auto n = plugin::selectNet(settings("weft-socket,weft-ofi", ""), options_, 8);
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "Socket");
}

TEST_F(OfiSocketSelection, NcclNetOfiSkipsTheSocketPluginListedFirst) {
  auto n = plugin::selectNet(settings("weft-socket,weft-ofi", "ofi"), options_, 9);
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "OFI");
  EXPECT_EQ((*n)->plugin().fileName(), "libweft-net-ofi.so");
  EXPECT_EQ(linesWith("skipping libweft-net-socket.so (Socket): NCCL_NET=ofi").size(), 1u);
  EXPECT_EQ(linesWith("NET/Plugin: using OFI from").size(), 1u);
}

TEST_F(OfiSocketSelection, NcclNetSocketSkipsTheOfiPluginListedFirst) {
  auto n = plugin::selectNet(settings("weft-ofi,weft-socket", "socket"), options_, 10);
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "Socket");
  EXPECT_EQ((*n)->plugin().fileName(), "libweft-net-socket.so");
  EXPECT_EQ(linesWith("skipping libweft-net-ofi.so (OFI): NCCL_NET=socket").size(), 1u);
  EXPECT_EQ(linesWith("NET/Plugin: using Socket from").size(), 1u);
}

TEST_F(OfiSocketSelection, OfiWithoutADeviceFallsBackToSocketUnderAllow) {
  ScopedEnv efa("WEFT_OFI_PROVIDER", "efa");  // not on this machine: OFI initialises with no device
  auto n = plugin::selectNet(settings("weft-ofi,weft-socket", "", "allow"), options_, 11);
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "Socket");
  EXPECT_EQ(linesWith("NET/OFI : No device found").size(), 1u) << "OFI was not tried";
  EXPECT_EQ(linesWith("OFI found no device; trying the next plugin").size(), 1u);
}

TEST_F(OfiSocketSelection, OfiWithoutADeviceIsAnErrorUnderDeny) {
  expectWarn("OFI found no device (WEFT_NET_FALLBACK=deny: not trying other plugins)");
  ScopedEnv efa("WEFT_OFI_PROVIDER", "efa");
  auto n = plugin::selectNet(settings("weft-ofi,weft-socket", "", "deny"), options_, 12);
  ASSERT_FALSE(n.isOk());
  EXPECT_EQ(n.status().code(), Code::kInvalidUsage);
  EXPECT_NE(n.status().message().find("net plugin 'weft-ofi' (WEFT_NET_FALLBACK=deny)"), std::string::npos)
      << n.status().message();
  EXPECT_NE(n.status().message().find("OFI found no device"), std::string::npos) << n.status().message();
  EXPECT_TRUE(linesWith("NET/Plugin: using").empty());
  EXPECT_TRUE(linesWith("libweft-net-socket.so").empty()) << "socket was tried despite deny";
}

TEST_F(OfiSocketSelection, NcclNetOfiWithoutADeviceNeverFallsBackToSocket) {
  expectWarn("failed to initialize any NET plugin named NCCL_NET=ofi");
  ScopedEnv efa("WEFT_OFI_PROVIDER", "efa");
  auto n = plugin::selectNet(settings("weft-ofi,weft-socket", "ofi", "allow"), options_, 13);
  ASSERT_FALSE(n.isOk());
  EXPECT_EQ(n.status().code(), Code::kInvalidUsage);
  EXPECT_EQ(linesWith("NET/OFI : No device found").size(), 1u) << "OFI was not tried";
  EXPECT_EQ(linesWith("skipping libweft-net-socket.so (Socket): NCCL_NET=ofi").size(), 1u);
}

TEST_F(OfiSocketSelection, DenyStillLetsNcclNetSkipAWorkingPluginByName) {
  // Skipping by name is not a failure: deny applies only to plugins that were tried and failed.
  auto n = plugin::selectNet(settings("weft-ofi,weft-socket", "socket", "deny"), options_, 14);
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "Socket");
  EXPECT_EQ(linesWith("skipping libweft-net-ofi.so (OFI): NCCL_NET=socket").size(), 1u);
}

}  // namespace
}  // namespace weft
