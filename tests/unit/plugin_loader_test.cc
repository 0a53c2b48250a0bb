// Net plugin loading and selection: name resolution, symbol probing, reference counting, and
// NCCL_NET_PLUGIN / NCCL_NET / WEFT_NET_FALLBACK across plugins that work, fail or lie.
#include <dlfcn.h>

#include <string>

#include "tests/unit/plugin_test_support.h"

namespace weft::plugin {
namespace {

using test::fakePlugin;

class LoaderTest : public test::PluginLogTest {
 protected:
  config::Settings settings(const std::string& plugins, const std::string& net = "",
                            const std::string& fallback = "") {
    config::Settings s;
    if (!plugins.empty()) { EXPECT_TRUE(s.set("NCCL_NET_PLUGIN", plugins).isOk()); }
    if (!net.empty()) { EXPECT_TRUE(s.set("NCCL_NET", net).isOk()); }
    if (!fallback.empty()) { EXPECT_TRUE(s.set("WEFT_NET_FALLBACK", fallback).isOk()); }
    return s;
  }
  Result<std::unique_ptr<NetInstance>> select(const config::Settings& s) {
    return selectNet(s, test::fakeOnlyOptions(), 42);
  }
};

TEST(CandidateFiles, FollowNcclThenWeftNaming) {
  std::vector<std::string> dirs = {"/opt/weft/lib"};
  EXPECT_EQ(candidateFiles("", dirs), std::vector<std::string>{"libnccl-net.so"});
  EXPECT_EQ(candidateFiles("/x/libfoo.so", dirs), std::vector<std::string>{"/x/libfoo.so"});
  EXPECT_EQ(candidateFiles("libnccl-net-ofi.so", dirs), std::vector<std::string>{"libnccl-net-ofi.so"});
  // weft-<kind>: NCCL's rule first (libnccl-net-weft-ofi.so), then weft's file in its folders.
  EXPECT_EQ(candidateFiles(" weft-ofi ", dirs),
            (std::vector<std::string>{"weft-ofi", "libnccl-net-weft-ofi.so", "/opt/weft/lib/libweft-net-ofi.so",
                                      "libweft-net-ofi.so"}));
  EXPECT_EQ(candidateFiles("weft-", dirs), (std::vector<std::string>{"weft-", "libnccl-net-weft-.so"}));
}

// Names without "weft-" are NCCL's alone: ofi is aws-ofi-nccl's libnccl-net-ofi.so, and weft's
// own libfabric plugin never answers to it.
TEST(CandidateFiles, BareNamesAreNcclsOnly) {
  std::vector<std::string> dirs = {"/opt/weft/lib"};
  EXPECT_EQ(candidateFiles(" ofi ", dirs), (std::vector<std::string>{"ofi", "libnccl-net-ofi.so"}));
  EXPECT_EQ(candidateFiles("socket", dirs), (std::vector<std::string>{"socket", "libnccl-net-socket.so"}));
}

TEST_F(LoaderTest, MissingPluginListsEveryNameTried) {
  auto p = loadNetPlugin("doesnotexist", test::fakeOnlyOptions());
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  EXPECT_NE(p.status().message().find("(tried doesnotexist, libnccl-net-doesnotexist.so)"), std::string::npos)
      << p.status().message();
  auto w = loadNetPlugin("weft-doesnotexist", test::fakeOnlyOptions());
  ASSERT_FALSE(w.isOk());
  EXPECT_NE(w.status().message().find("libnccl-net-weft-doesnotexist.so"), std::string::npos) << w.status().message();
  EXPECT_NE(w.status().message().find("libweft-net-doesnotexist.so"), std::string::npos) << w.status().message();
}

TEST_F(LoaderTest, NoKnownSymbolNamesWhatTheLibraryExports) {
  auto p = loadNetPlugin(fakePlugin("libnccl-net-nosymbol.so"), test::fakeOnlyOptions());
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), Code::kInternalError);
  EXPECT_NE(p.status().message().find("it exports ncclNetPlugin_v5"), std::string::npos) << p.status().message();
}

TEST_F(LoaderTest, NullTableNameIsRejectedAtLoad) {
  auto p = loadNetPlugin(fakePlugin("libnccl-net-tablenullname.so"), test::fakeOnlyOptions());
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.status().message().find("ncclNetPlugin_v8.name is NULL"), std::string::npos) << p.status().message();
}

TEST_F(LoaderTest, ResolvesBareNamesThroughNcclAndWeftPrefixes) {
  auto nccl = loadNetPlugin("fakev8", test::fakeOnlyOptions());  // libnccl-net-fakev8.so via RUNPATH
  ASSERT_TRUE(nccl.isOk()) << nccl.status().toString();
  EXPECT_EQ((*nccl)->fileName(), "libnccl-net-fakev8.so");
  auto weft = loadNetPlugin("weft-fakeweft", test::fakeOnlyOptions());  // libweft-net-fakeweft.so
  ASSERT_TRUE(weft.isOk()) << weft.status().toString();
  EXPECT_EQ((*weft)->fileName(), "libweft-net-fakeweft.so");
  // One INFO line says which file each name loaded.
  EXPECT_EQ(linesWith("NET/Plugin: 'fakev8' loads ").size(), 1u);
  EXPECT_EQ(linesWith("NET/Plugin: 'weft-fakeweft' loads ").size(), 1u);
  EXPECT_FALSE(loadNetPlugin("fakeweft", test::fakeOnlyOptions()).isOk());  // weft's names need weft-
}

TEST_F(LoaderTest, SharesOneLoadAndUnloadsAfterTheLastUser) {
  const std::string path = fakePlugin("libnccl-net-fakev7.so");
  {
    auto a = loadNetPlugin(path, test::fakeOnlyOptions());
    auto b = loadNetPlugin("fakev7", test::fakeOnlyOptions());
    ASSERT_TRUE(a.isOk() && b.isOk());
    EXPECT_EQ(a->get(), b->get());
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(h, nullptr);
    if (h) dlclose(h);
  }
  EXPECT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr) << "library still loaded";
  EXPECT_EQ(linesWith("unloading libnccl-net-fakev7.so").size(), 1u);
}

TEST_F(LoaderTest, ChoosesFirstWorkingPluginAndSaysWhichFileVersionAndDevices) {
  expectWarn("InitFails: init returned system error");
  auto n = select(settings(fakePlugin("libnccl-net-initfails.so") + "," + fakePlugin("libnccl-net-fakev9.so")));
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "FakeV9");
  auto chosen = linesWith("NET/Plugin: using");
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_NE(chosen[0].find("using FakeV9 from " + fakePlugin("libnccl-net-fakev9.so") + " (ncclNetPlugin_v9), 2 devices"),
            std::string::npos) << chosen[0];
  EXPECT_EQ(logs_.warnings().size(), 1u);
}

TEST_F(LoaderTest, DenyTurnsAFailedInitIntoAnError) {
  expectWarn("WEFT_NET_FALLBACK=deny");
  auto n = select(settings(fakePlugin("libnccl-net-initfails.so") + "," + fakePlugin("libnccl-net-fakev9.so"), "", "deny"));
  ASSERT_FALSE(n.isOk());
  EXPECT_NE(n.status().message().find("init returned system error"), std::string::npos) << n.status().message();
  EXPECT_TRUE(linesWith("NET/Plugin: using").empty());
}

TEST_F(LoaderTest, ZeroDevicesFallsThroughQuietlyOrIsAnErrorUnderDeny) {
  auto allowed = select(settings(fakePlugin("libnccl-net-nodevs.so") + "," + fakePlugin("libnccl-net-fakev10.so")));
  ASSERT_TRUE(allowed.isOk()) << allowed.status().toString();
  EXPECT_STREQ((*allowed)->api().name(), "FakeV10");
  EXPECT_EQ(linesWith("NoDevs found no device").size(), 1u);

  expectWarn("NoDevs found no device");
  auto denied = select(settings(fakePlugin("libnccl-net-nodevs.so") + "," + fakePlugin("libnccl-net-fakev10.so"), "", "deny"));
  ASSERT_FALSE(denied.isOk());
  EXPECT_NE(denied.status().message().find("found no device"), std::string::npos);
}

TEST_F(LoaderTest, LyingPluginsAreSkippedWithAWarningNamingTheCall) {
  expectWarn("devices() returned -3 devices");
  expectWarn("getProperties(0) returned a NULL name");
  auto n = select(settings(fakePlugin("libnccl-net-badcount.so") + "," + fakePlugin("libnccl-net-nullname.so") + "," +
                           fakePlugin("libnccl-net-fakev6.so")));
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "FakeV6");
  EXPECT_EQ(logs_.warnings().size(), 2u);
}

TEST_F(LoaderTest, NcclNetSelectsByNameCaseInsensitively) {
  auto n = select(settings(fakePlugin("libnccl-net-fakev9.so") + "," + fakePlugin("libnccl-net-fakev8.so"), "fAkEv8"));
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "FakeV8");
  EXPECT_EQ(linesWith("skipping libnccl-net-fakev9.so (FakeV9): NCCL_NET=fAkEv8").size(), 1u);
}

TEST_F(LoaderTest, NcclNetNamingNothingAvailableFails) {
  expectWarn("failed to initialize any NET plugin named NCCL_NET=Nope");
  auto n = select(settings(fakePlugin("libnccl-net-fakev9.so"), "Nope"));
  ASSERT_FALSE(n.isOk());
  EXPECT_EQ(n.status().code(), Code::kInvalidUsage);
}

TEST_F(LoaderTest, RequestedButMissingPluginWarnsOrFailsUnderDeny) {
  expectWarn("net plugin 'nothere' not found");
  auto allowed = select(settings("nothere," + fakePlugin("libnccl-net-fakev11.so")));
  ASSERT_TRUE(allowed.isOk()) << allowed.status().toString();
  auto denied = select(settings("nothere," + fakePlugin("libnccl-net-fakev11.so"), "", "deny"));
  EXPECT_FALSE(denied.isOk());
}

TEST_F(LoaderTest, NoneSkipsExternalPluginsAndBuiltinsFollowInOrder) {
  NetLoaderOptions o = test::fakeOnlyOptions();
  o.builtins = {"nodevs", "weft-fakeweft"};  // stand-ins for weft's ib (no device here) and socket
  config::Settings s = settings("none");
  auto n = selectNet(s, o, 1);
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "FakeWeft");
}

TEST_F(LoaderTest, UnsetPluginListTriesTheImplicitDefaultQuietly) {
  NetLoaderOptions o = test::fakeOnlyOptions();
  o.builtins = {"weft-fakeweft"};
  auto n = selectNet(config::Settings(), o, 1);
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_EQ(linesWith("'libnccl-net.so' not found").size(), 1u);  // INFO, not WARN
}

TEST_F(LoaderTest, BadFallbackValueIsAnError) {
  // The settings table types WEFT_NET_FALLBACK as allow|deny, so the bad value is refused as soon
  // as it is set (or loaded from the environment or a file), before any plugin is tried.
  config::Settings s;
  Status st = s.set("WEFT_NET_FALLBACK", "sometimes");
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("expected one of allow, deny"), std::string::npos) << st.message();
}

TEST_F(LoaderTest, PluginLogsReachTheHostLogger) {
  auto n = select(settings(fakePlugin("libnccl-net-fakev11.so")));
  ASSERT_TRUE(n.isOk());
  EXPECT_FALSE(linesWith("fake-v11: init").empty());
}

}  // namespace
}  // namespace weft::plugin

namespace weft::plugin {
namespace {

// weft's own socket plugin as the built-in after (absent) external ones, found through the
// default plugin folders, and picked by NCCL_NET=socket.
TEST_F(LoaderTest, NcclNetSocketPicksWeftsBuiltinSocketPlugin) {
  setenv("NCCL_SOCKET_IFNAME", "=lo", 1);  // loopback only
  NetLoaderOptions o;  // default folders and built-ins: ib (not built here or no device), socket
  config::Settings s = settings("none", "socket");
  auto n = selectNet(s, o, 3);
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_STREQ((*n)->api().name(), "Socket");
  EXPECT_EQ((*n)->plugin().fileName(), "libweft-net-socket.so");
  EXPECT_EQ((*n)->plugin().abiVersion(), 11);
  EXPECT_EQ(linesWith("NET/Plugin: using Socket from").size(), 1u);
}

}  // namespace
}  // namespace weft::plugin
