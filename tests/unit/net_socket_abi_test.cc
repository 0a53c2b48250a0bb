// The built libweft-net-socket.so, opened as NCCL opens it: the exported tables have exactly
// the sizes and field positions of include/weft/net.h (checked through the ELF symbol sizes
// and through fields read at their offsets), and the libnccl-net-weft-socket.so name reaches it.
#include <dlfcn.h>

#include <cstring>
#include <string>

#include "tests/unit/net_plugin_abi.h"
#include "tests/unit/plugin_test_support.h"

namespace weft {
namespace {

const std::string kPlugin = std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libweft-net-socket.so";

class SocketAbi : public test::PluginAbi {
 protected:
  SocketAbi() : PluginAbi(kPlugin) {}
};

TEST_F(SocketAbi, ExportsV11V10AndV8Only) {
  size_t size = 0;
  for (const char* s : {"ncclNetPlugin_v11", "ncclNetPlugin_v10", "ncclNetPlugin_v8"}) EXPECT_NE(symbol(s, &size), nullptr) << s;
  for (const char* s : {"ncclNetPlugin_v12", "ncclNetPlugin_v9", "ncclNetPlugin_v7", "ncclNetPlugin_v6", "ncclCollNetPlugin_v11"})
    EXPECT_EQ(symbol(s, &size), nullptr) << s;
}

TEST_F(SocketAbi, V11TableHasNcclsSizeAndFieldPositions) {
  size_t size = 0;
  auto* t = static_cast<const weft_net_v11_t*>(symbol("ncclNetPlugin_v11", &size));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(size, 176u);  // 22 pointers: NCCL 2.28's ncclNet_v11_t
  EXPECT_EQ(size, sizeof(weft_net_v11_t));
  EXPECT_STREQ(*reinterpret_cast<const char* const*>(t), "Socket");  // offset 0
  for (const void* fn : {(const void*)t->init, (const void*)t->devices, (const void*)t->getProperties, (const void*)t->listen,
                         (const void*)t->connect, (const void*)t->accept, (const void*)t->regMr, (const void*)t->regMrDmaBuf,
                         (const void*)t->deregMr, (const void*)t->isend, (const void*)t->irecv, (const void*)t->iflush,
                         (const void*)t->test, (const void*)t->closeSend, (const void*)t->closeRecv, (const void*)t->closeListen,
                         (const void*)t->getDeviceMr, (const void*)t->irecvConsumed, (const void*)t->finalize,
                         (const void*)t->setNetAttr})
    EXPECT_TRUE(inPlugin(fn));
  // makeVDevice at offset 152 is NULL (no NIC fusion); finalize at 160 and setNetAttr at 168 exist.
  const char* base = reinterpret_cast<const char*>(t);
  EXPECT_EQ(*reinterpret_cast<void* const*>(base + 152), nullptr);
  EXPECT_TRUE(inPlugin(*reinterpret_cast<void* const*>(base + 160)));
  EXPECT_TRUE(inPlugin(*reinterpret_cast<void* const*>(base + 168)));
}

TEST_F(SocketAbi, V10AndV8TablesHaveNcclsSizes) {
  size_t size = 0;
  auto* t10 = static_cast<const weft_net_v10_t*>(symbol("ncclNetPlugin_v10", &size));
  ASSERT_NE(t10, nullptr);
  EXPECT_EQ(size, 160u);
  EXPECT_STREQ(t10->name, "Socket");
  EXPECT_EQ(t10->makeVDevice, nullptr);
  EXPECT_TRUE(inPlugin(reinterpret_cast<const void*>(t10->irecvConsumed)));  // the last slot before makeVDevice
  auto* t8 = static_cast<const weft_net_v8_t*>(symbol("ncclNetPlugin_v8", &size));
  ASSERT_NE(t8, nullptr);
  EXPECT_EQ(size, 152u);
  EXPECT_STREQ(t8->name, "Socket");
  EXPECT_TRUE(inPlugin(reinterpret_cast<const void*>(t8->irecvConsumed)));
}

TEST_F(SocketAbi, V8PropertiesKeepTheV8Layout) {
  size_t size = 0;
  auto* t8 = static_cast<const weft_net_v8_t*>(symbol("ncclNetPlugin_v8", &size));
  ASSERT_NE(t8, nullptr);
  ASSERT_EQ(t8->init(nullptr), weftSuccess);
  int n = 0;
  ASSERT_EQ(t8->devices(&n), weftSuccess);
  if (n == 0) GTEST_SKIP() << "no interface here";
  unsigned char raw[sizeof(weft_net_properties_v8_t) + 16];
  std::memset(raw, 0xcd, sizeof(raw));
  ASSERT_EQ(t8->getProperties(0, reinterpret_cast<weft_net_properties_v8_t*>(raw)), weftSuccess);
  for (size_t i = sizeof(weft_net_properties_v8_t); i < sizeof(raw); ++i) EXPECT_EQ(raw[i], 0xcd) << "wrote past the v8 struct";
  auto* p = reinterpret_cast<weft_net_properties_v8_t*>(raw);
  EXPECT_EQ(p->ptrSupport, WEFT_PTR_HOST);  // offset 24
  EXPECT_GT(p->speed, 0);                   // offset 32 (regIsGlobal at 28)
  EXPECT_EQ(p->maxRecvs, 8);                // offset 48
}

TEST(SocketAbiNames, NcclNameResolvesToWeftsPlugin) {
  auto loaded = plugin::loadNetPlugin(std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libnccl-net-weft-socket.so", test::fakeOnlyOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_EQ((*loaded)->abiVersion(), 11);
  EXPECT_STREQ((*loaded)->api().name(), "Socket");
}

}  // namespace
}  // namespace weft
