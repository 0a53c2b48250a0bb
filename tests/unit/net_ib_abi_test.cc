// The built libweft-net-ib.so, opened as NCCL opens it and through weft's loader: its tables
// (every function set), zero devices on a machine without RDMA hardware (one INFO line), and
// NCCL_NET=ib under both fallback policies. Where an RDMA device exists, the tests that depend
// on there being none skip and say so, and the selection test checks the device path instead.
#include <infiniband/verbs.h>

#include <cstdlib>
#include <cstring>
#include <functional>

#include "tests/support/scoped_env.h"
#include "tests/unit/net_plugin_abi.h"
#include "tests/unit/plugin_test_support.h"

namespace weft {
namespace {

using test::ScopedEnv;

const std::string kIb = std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libweft-net-ib.so";

// How many active RDMA devices this machine has, asked of libibverbs directly.
int rdmaDevices() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list != nullptr) ibv_free_device_list(list);
  return list != nullptr ? n : 0;
}

class IbAbi : public test::PluginAbi {
 protected:
  IbAbi() : PluginAbi(kIb) {}
};

TEST_F(IbAbi, ExportsV11V10AndV8NamedIbAndNothingElse) { expectTables("IB"); }

// Every function field of each table is set and points into the plugin, except makeVDevice,
// which the ABI reads as "no NIC fusion" when NULL.
template <typename Table>
void expectEveryFunctionSet(const Table* t, size_t bytes, const std::function<bool(const void*)>& inPlugin,
                            size_t makeVDeviceOffset) {
  const auto* fields = reinterpret_cast<const char*>(t);
  for (size_t at = sizeof(void*); at < bytes; at += sizeof(void*)) {
    const void* fn = nullptr;
    std::memcpy(&fn, fields + at, sizeof(fn));
    if (at == makeVDeviceOffset) {
      EXPECT_EQ(fn, nullptr) << "makeVDevice";
      continue;
    }
    EXPECT_NE(fn, nullptr) << "function at byte " << at;
    EXPECT_TRUE(inPlugin(fn)) << "function at byte " << at << " is not the plugin's";
  }
}

TEST_F(IbAbi, EveryTableHasEveryFunctionSet) {
  size_t size = 0;
  auto in = [this](const void* fn) { return inPlugin(fn); };
  auto* t11 = static_cast<const weft_net_v11_t*>(symbol("ncclNetPlugin_v11", &size));
  ASSERT_NE(t11, nullptr);
  expectEveryFunctionSet(t11, sizeof(*t11), in, offsetof(weft_net_v11_t, makeVDevice));
  auto* t10 = static_cast<const weft_net_v10_t*>(symbol("ncclNetPlugin_v10", &size));
  ASSERT_NE(t10, nullptr);
  expectEveryFunctionSet(t10, sizeof(*t10), in, offsetof(weft_net_v10_t, makeVDevice));
  auto* t8 = static_cast<const weft_net_v8_t*>(symbol("ncclNetPlugin_v8", &size));
  ASSERT_NE(t8, nullptr);
  expectEveryFunctionSet(t8, sizeof(*t8), in, size_t(-1));  // v8 has no makeVDevice
}

TEST_F(IbAbi, InitSucceedsAndDevicesMatchWhatVerbsLists) {
  size_t size = 0;
  auto* t11 = static_cast<const weft_net_v11_t*>(symbol("ncclNetPlugin_v11", &size));
  ASSERT_NE(t11, nullptr);
  void* ctx = nullptr;
  ASSERT_EQ(t11->init(&ctx, 1, nullptr, nullptr, nullptr), weftSuccess);
  int n = -1;
  ASSERT_EQ(t11->devices(&n), weftSuccess);
  if (rdmaDevices() == 0) {
    EXPECT_EQ(n, 0) << "no RDMA device here, yet the plugin reports some";
  } else {
    EXPECT_GE(n, 0);  // active ports only: an inactive HCA gives none
  }
  weft_net_properties_v11_t props;
  EXPECT_NE(t11->getProperties(n, &props), weftSuccess) << "device " << n << " is past the end";
  EXPECT_EQ(t11->finalize(ctx), weftSuccess);
}

TEST_F(IbAbi, CallsOnObjectsItNeverMadeFailCleanly) {
  size_t size = 0;
  auto* t8 = static_cast<const weft_net_v8_t*>(symbol("ncclNetPlugin_v8", &size));
  ASSERT_NE(t8, nullptr);
  ASSERT_EQ(t8->init(nullptr), weftSuccess);
  unsigned char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  void* comm = nullptr;
  EXPECT_NE(t8->listen(-1, handle, &comm), weftSuccess);
  EXPECT_NE(t8->connect(-1, handle, &comm, nullptr), weftSuccess);
  void* request = nullptr;
  int sizes[1] = {-5};
  void* data = nullptr;
  int tag = 0;
  EXPECT_NE(t8->isend(nullptr, nullptr, -1, 0, nullptr, &request), weftSuccess);
  EXPECT_NE(t8->irecv(nullptr, 1, &data, sizes, &tag, nullptr, &request), weftSuccess);
  EXPECT_EQ(request, nullptr);
}

class IbLoader : public test::PluginLogTest {
 protected:
  config::Settings settings(const char* net, const char* fallback) {
    config::Settings s;
    EXPECT_TRUE(s.set("NCCL_NET_PLUGIN", "none").isOk());  // weft's built-ins only: ib, then socket
    if (*net != '\0') { EXPECT_TRUE(s.set("NCCL_NET", net).isOk()); }
    EXPECT_TRUE(s.set("WEFT_NET_FALLBACK", fallback).isOk());
    return s;
  }
  ScopedEnv loopback_{"NCCL_SOCKET_IFNAME", "=lo"};  // the socket fallback stays on loopback
};

TEST_F(IbLoader, WithoutDevicesInitLogsOneInfoLineAndReportsZero) {
  if (rdmaDevices() > 0) GTEST_SKIP() << "this machine has an RDMA device: the zero-device path cannot run";
  auto loaded = plugin::loadNetPlugin(kIb, test::fakeOnlyOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_STREQ((*loaded)->api().name(), "IB");
  auto n = plugin::initNet(*loaded, 6);
  ASSERT_FALSE(n.isOk());
  EXPECT_EQ(n.status().code(), Code::kInvalidUsage);
  EXPECT_NE(n.status().message().find("IB found no device"), std::string::npos) << n.status().message();
  auto info = linesWith("NET/IB : ");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_NE(info[0].find("NET/IB : No device found: no RDMA device"), std::string::npos) << info[0];
}

TEST_F(IbLoader, DisabledByNcclIbDisableReportsZeroDevicesAndSaysWhy) {
  ScopedEnv off("NCCL_IB_DISABLE", "1");
  auto loaded = plugin::loadNetPlugin(kIb, test::fakeOnlyOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_FALSE(plugin::initNet(*loaded, 6).isOk());
  auto info = linesWith("NET/IB : No device found: NCCL_IB_DISABLE=1");
  EXPECT_EQ(info.size(), 1u);
}

TEST_F(IbLoader, MalformedHcaFilterWarnsAndUsesNoDevice) {
  expectWarn("NCCL_IB_HCA=mlx5_0:x");
  ScopedEnv hca("NCCL_IB_HCA", "mlx5_0:x");
  auto loaded = plugin::loadNetPlugin(kIb, test::fakeOnlyOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_FALSE(plugin::initNet(*loaded, 6).isOk());
  EXPECT_EQ(linesWith("the port must be a positive integer").size(), 2u);  // the WARN and the INFO line
}

TEST_F(IbLoader, NcclNameResolvesToWeftsPlugin) {
  auto loaded = plugin::loadNetPlugin(std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-net-weft-ib.so", test::fakeOnlyOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_STREQ((*loaded)->api().name(), "IB");
}

// NCCL_NET=ib names weft's IB plugin (the built-in after external plugins). With a device, it
// is chosen; without one, no other plugin answers to that name, so selection fails under either
// policy, and only deny stops at the IB plugin itself.
TEST_F(IbLoader, NcclNetIbSelectsTheIbPluginOrFailsWithoutDevices) {
  if (rdmaDevices() > 0) {
    auto n = plugin::selectNet(settings("ib", "deny"), plugin::NetLoaderOptions{}, 5);
    if (n.isOk()) {
      EXPECT_STREQ((*n)->api().name(), "IB");
      EXPECT_EQ((*n)->plugin().fileName(), "libweft-net-ib.so");
      EXPECT_EQ((*n)->plugin().abiVersion(), 11);
      EXPECT_EQ(linesWith("NET/Plugin: using IB from").size(), 1u);
      return;
    }
    // RDMA devices but no active port: the zero-device path below applies.
    ASSERT_NE(n.status().message().find("IB found no device"), std::string::npos) << n.status().message();
    GTEST_SKIP() << "RDMA devices without an active port: " << n.status().message();
  }
  expectWarn("failed to initialize any NET plugin named NCCL_NET=ib");
  expectWarn("IB found no device (WEFT_NET_FALLBACK=deny");
  auto allowed = plugin::selectNet(settings("ib", "allow"), plugin::NetLoaderOptions{}, 5);
  ASSERT_FALSE(allowed.isOk());
  EXPECT_NE(allowed.status().message().find("no usable net plugin named NCCL_NET=ib"), std::string::npos)
      << allowed.status().message();
  EXPECT_EQ(linesWith("IB found no device; trying the next plugin").size(), 1u) << "an INFO, not a WARN";
  EXPECT_EQ(linesWith("skipping libweft-net-socket.so (Socket): NCCL_NET=ib").size(), 1u);
  auto denied = plugin::selectNet(settings("ib", "deny"), plugin::NetLoaderOptions{}, 5);
  ASSERT_FALSE(denied.isOk());
  EXPECT_NE(denied.status().message().find("net plugin 'weft-ib' (WEFT_NET_FALLBACK=deny)"), std::string::npos)
      << denied.status().message();
  EXPECT_NE(denied.status().message().find("IB found no device"), std::string::npos) << denied.status().message();
}

// Without NCCL_NET, the IB plugin comes first among weft's built-ins: with no device, allow
// falls back to the socket plugin and deny stops there.
TEST_F(IbLoader, WithoutDevicesAllowFallsBackToSocketAndDenyStops) {
  if (rdmaDevices() > 0) GTEST_SKIP() << "this machine has an RDMA device: IB would be chosen, not fall back";
  auto allowed = plugin::selectNet(settings("", "allow"), plugin::NetLoaderOptions{}, 7);
  ASSERT_TRUE(allowed.isOk()) << allowed.status().toString();
  EXPECT_STREQ((*allowed)->api().name(), "Socket");
  EXPECT_EQ(linesWith("IB found no device; trying the next plugin").size(), 1u);
  expectWarn("IB found no device (WEFT_NET_FALLBACK=deny");
  auto denied = plugin::selectNet(settings("", "deny"), plugin::NetLoaderOptions{}, 7);
  ASSERT_FALSE(denied.isOk());
  EXPECT_NE(denied.status().message().find("IB found no device"), std::string::npos) << denied.status().message();
}

}  // namespace
}  // namespace weft
