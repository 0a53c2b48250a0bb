// Every ABI adapter, v6 … v11, driven through a fake plugin exporting that version: properties
// arrive field by field with NCCL's defaults for missing fields, and data moves through
// connect/accept, multi-receive and test.
#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/plugin/net_adapter.h"
#include "tests/unit/plugin_test_support.h"

namespace weft::plugin {
namespace {

class AdapterTest : public test::PluginLogTest, public ::testing::WithParamInterface<int> {
 protected:
  std::shared_ptr<LoadedNet> load() {
    auto p = loadNetPlugin(test::fakePlugin("libnccl-net-fakev" + std::to_string(GetParam()) + ".so"),
                           test::fakeOnlyOptions());
    EXPECT_TRUE(p.isOk()) << p.status().toString();
    return p.isOk() ? *p : nullptr;
  }
};

TEST_P(AdapterTest, ProbesTheExportedVersion) {
  auto p = load();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->abiVersion(), GetParam());
  EXPECT_EQ(p->symbol(), "ncclNetPlugin_v" + std::to_string(GetParam()));
  EXPECT_EQ(std::string(p->api().name()), "FakeV" + std::to_string(GetParam()));
}

TEST_P(AdapterTest, ConvertsPropertiesFieldByField) {
  auto p = load();
  ASSERT_TRUE(p);
  auto inst = initNet(p, 1);
  ASSERT_TRUE(inst.isOk()) << inst.status().toString();
  EXPECT_EQ((*inst)->deviceCount(), 2);
  NetProperties props;
  ASSERT_TRUE(p->api().getProperties(1, &props).isOk());
  const int v = GetParam();
  EXPECT_EQ(props.name, "fake0");
  EXPECT_EQ(props.guid, 0x1001u);
  EXPECT_EQ(props.ptrSupport, WEFT_PTR_HOST);
  EXPECT_EQ(props.speedMbps, 12345);
  EXPECT_EQ(props.port, 2);
  EXPECT_FLOAT_EQ(props.latency, 1.5f);
  EXPECT_EQ(props.maxComms, 1000);
  EXPECT_EQ(props.maxRecvs, 4);
  EXPECT_EQ(props.regIsGlobal, v >= 8 ? 1 : 0);  // v8 introduced it
  EXPECT_EQ(props.vdevs, std::vector<int>{1});
  EXPECT_EQ(props.maxP2pBytes, v >= 9 ? 7777777u : size_t{1} << 30);
  EXPECT_EQ(props.maxCollBytes, v >= 9 ? 8888888u : size_t{512} << 20);
  EXPECT_EQ(props.maxMultiRequestSize, v >= 11 ? 3 : 1);
  EXPECT_EQ(props.netDeviceType, WEFT_NET_DEVICE_HOST);
}

// Connects dev 0 to itself, looping as the ABI requires ("not yet" answers are normal).
void connectPair(NetApi& api, void* ctx, void** send, void** recv, void** listen) {
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  ASSERT_TRUE(api.listen(ctx, 0, handle, listen).isOk());
  *send = *recv = nullptr;
  weft_net_device_handle_v11_t* dev = nullptr;
  for (int i = 0; i < 100 && (*send == nullptr || *recv == nullptr); ++i) {
    if (*send == nullptr) { ASSERT_TRUE(api.connect(ctx, 0, handle, send, &dev).isOk()); }
    if (*recv == nullptr) { ASSERT_TRUE(api.accept(*listen, recv, &dev).isOk()); }
  }
  ASSERT_NE(*send, nullptr);
  ASSERT_NE(*recv, nullptr);
}

TEST_P(AdapterTest, MovesTaggedMessagesThroughMultiReceive) {
  auto p = load();
  ASSERT_TRUE(p);
  auto inst = initNet(p, 2);
  ASSERT_TRUE(inst.isOk()) << inst.status().toString();
  NetApi& api = p->api();
  void *send, *recv, *listen;
  connectPair(api, (*inst)->ctx(), &send, &recv, &listen);

  char a[] = "first", b[] = "second!";
  char ra[16] = {}, rb[16] = {};
  void* mh = nullptr;
  ASSERT_TRUE(api.regMr(send, a, sizeof(a), WEFT_PTR_HOST, &mh).isOk());
  void *sreqB, *sreqA, *rreq;
  // Sent in the opposite order of the receive slots: matching must go by tag.
  ASSERT_TRUE(api.isend(send, b, sizeof(b), 2, mh, nullptr, &sreqB).isOk());
  ASSERT_TRUE(api.isend(send, a, sizeof(a), 1, mh, nullptr, &sreqA).isOk());
  void* bufs[2] = {ra, rb};
  size_t sizes[2] = {sizeof(ra), sizeof(rb)};
  int tags[2] = {1, 2};
  void* mhs[2] = {nullptr, nullptr};
  ASSERT_TRUE(api.irecv(recv, 2, bufs, sizes, tags, mhs, nullptr, &rreq).isOk());
  int done = 0, got[2] = {-1, -1};
  ASSERT_TRUE(api.test(rreq, &done, got).isOk());
  ASSERT_EQ(done, 1);
  EXPECT_EQ(got[0], static_cast<int>(sizeof(a)));
  EXPECT_EQ(got[1], static_cast<int>(sizeof(b)));
  EXPECT_STREQ(ra, "first");
  EXPECT_STREQ(rb, "second!");
  for (void* r : {sreqA, sreqB}) {
    int sent = -1;
    ASSERT_TRUE(api.test(r, &done, &sent).isOk());
    EXPECT_EQ(done, 1);
  }
  EXPECT_TRUE(api.deregMr(send, mh).isOk());
  EXPECT_TRUE(api.closeSend(send).isOk());
  EXPECT_TRUE(api.closeRecv(recv).isOk());
  EXPECT_TRUE(api.closeListen(listen).isOk());
}

TEST_P(AdapterTest, RejectsSizesTheVersionCannotCarry) {
  auto p = load();
  ASSERT_TRUE(p);
  void* req = nullptr;
  // No comm is needed: the adapter refuses before calling the plugin, or the fake rejects null.
  Status s = p->api().isend(nullptr, nullptr, size_t{1} << 33, 0, nullptr, nullptr, &req);
  EXPECT_FALSE(s.isOk());
  if (GetParam() < 9) { EXPECT_NE(s.message().find("does not fit the int"), std::string::npos) << s.message(); }
}

TEST_P(AdapterTest, CallsPreV11InitOncePerProcess) {
  auto p = load();
  ASSERT_TRUE(p);
  void* handle = dlopen(p->path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto calls = reinterpret_cast<int (*)()>(dlsym(handle, "fakeNetInitCalls"));
  ASSERT_NE(calls, nullptr);
  int before = calls();
  auto a = initNet(p, 10);
  auto b = initNet(p, 11);
  ASSERT_TRUE(a.isOk() && b.isOk());
  // NCCL's shims call init once for v6 … v10; v11 takes one context per communicator.
  int expected = GetParam() >= 11 ? before + 2 : std::max(before, 1);
  EXPECT_EQ(calls(), expected);
  dlclose(handle);
}

INSTANTIATE_TEST_SUITE_P(Versions, AdapterTest, ::testing::Values(6, 7, 8, 9, 10, 11),
                         [](const ::testing::TestParamInfo<int>& i) { return "V" + std::to_string(i.param); });

}  // namespace
}  // namespace weft::plugin
