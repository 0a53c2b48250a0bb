// The Settings object: values with provenance, precedence, older names, typed getters.
#include <gtest/gtest.h>

#include "core/config/settings.h"
#include "tests/support/log_capture.h"

namespace weft::config {
namespace {

using SettingsTest = weft::test::WeftTest;

const SettingDef& def(std::string_view name) { return *findDef(name); }

TEST_F(SettingsTest, DefaultsWithoutAnySource) {
  Settings s;
  EXPECT_EQ(s.integer("NCCL_CROSS_NIC"), 2);
  EXPECT_FALSE(s.isSet("NCCL_CROSS_NIC"));
  EXPECT_EQ(s.integerIfSet("NCCL_CROSS_NIC"), std::nullopt);
  ASSERT_NE(s.lookup("CROSS_NIC"), nullptr);
  EXPECT_EQ(s.lookup("CROSS_NIC")->source, Source::kDefault);
  EXPECT_EQ(s.lookup("NCCL_TOPO_FILE"), nullptr);  // unset, no default
  EXPECT_EQ(s.string("NCCL_TOPO_FILE"), "");
  EXPECT_EQ(s.pathLevel("NCCL_P2P_LEVEL"), std::nullopt);
  EXPECT_TRUE(s.algorithms().empty());
  EXPECT_TRUE(s.interfaceList("NCCL_SOCKET_IFNAME").empty());
  EXPECT_EQ(s.netFallback(), NetFallback::kAllow);
  EXPECT_EQ(s.netDevsPolicy().kind, NetDevsPolicy::Kind::kAuto);
}

TEST_F(SettingsTest, SetChecksNameAndValue) {
  Settings s;
  EXPECT_TRUE(s.set("NCCL_CROSS_NIC", "0x1").isOk());
  EXPECT_EQ(s.integer("NCCL_CROSS_NIC"), 1);
  EXPECT_EQ(s.integerIfSet("CROSS_NIC"), 1);
  Status bad = s.set("NCCL_CROSS_NIC", "7", Source::kOverride, "test");
  EXPECT_EQ(bad.message(), "test: NCCL_CROSS_NIC: bad value \"7\": out of range; expected an integer 0-2");
  Status unknown = s.set("NCCL_CROSS_NICK", "1");
  EXPECT_EQ(unknown.code(), Code::kInvalidUsage);
  EXPECT_EQ(unknown.message(), "unknown setting NCCL_CROSS_NICK (did you mean NCCL_CROSS_NIC?)");
  EXPECT_EQ(s.integer("NCCL_CROSS_NIC"), 1);  // a rejected value changes nothing
}

TEST_F(SettingsTest, HigherSourcesWinWhateverTheOrderTheyArrive) {
  Settings s;
  s.add(def("NCCL_MAX_NCHANNELS"), Value{"8", Source::kYaml, "p.yaml:3"});
  s.add(def("NCCL_MAX_NCHANNELS"), Value{"32", Source::kEnv, "env"});
  s.add(def("NCCL_MAX_NCHANNELS"), Value{"4", Source::kEtcConf, "/etc/nccl.conf:1"});
  s.add(def("NCCL_MAX_NCHANNELS"), Value{"16", Source::kYamlProfile, "profile[0] p.yaml:9", 0});
  EXPECT_EQ(s.integer("NCCL_MAX_NCHANNELS"), 32);
  std::vector<Value> h = s.history("NCCL_MAX_NCHANNELS");
  ASSERT_EQ(h.size(), 5u);
  EXPECT_EQ(h[0].where, "env");
  EXPECT_EQ(h[1].where, "profile[0] p.yaml:9");
  EXPECT_EQ(h[2].where, "p.yaml:3");
  EXPECT_EQ(h[3].where, "/etc/nccl.conf:1");
  EXPECT_EQ(h[4].source, Source::kDefault);
  EXPECT_EQ(h[4].text, "-2");
}

TEST_F(SettingsTest, LaterProfilesWinAndTheSameSourceReplaces) {
  Settings s;
  s.add(def("NCCL_ALGO"), Value{"Tree", Source::kYamlProfile, "profile[1] p.yaml:20", 1});
  s.add(def("NCCL_ALGO"), Value{"Ring", Source::kYamlProfile, "profile[0] p.yaml:10", 0});
  EXPECT_EQ(s.string("NCCL_ALGO"), "Tree");
  EXPECT_TRUE(s.set("NCCL_ALGO", "NVLS").isOk());
  EXPECT_TRUE(s.set("NCCL_ALGO", "PAT").isOk());  // the same source again: replaces
  EXPECT_EQ(s.string("NCCL_ALGO"), "PAT");
  EXPECT_EQ(s.history("NCCL_ALGO").size(), 4u);  // override, two profiles, default
}

TEST_F(SettingsTest, NewNameWinsOverOldNameFromAnySource) {
  // NCCL reads NCCL_MAX_NRINGS, then NCCL_MAX_NCHANNELS over it, after the conf files were
  // merged into the environment: the new name wins even from a lower source.
  Settings s;
  EXPECT_TRUE(s.set("NCCL_MAX_NRINGS", "4", Source::kEnv, "env").isOk());
  EXPECT_EQ(s.integer("NCCL_MAX_NCHANNELS"), 4);
  s.add(def("NCCL_MAX_NCHANNELS"), Value{"12", Source::kEtcConf, "/etc/nccl.conf:2"});
  EXPECT_EQ(s.integer("NCCL_MAX_NCHANNELS"), 12);
  const Value* w = s.winner(def("NCCL_MAX_NCHANNELS"));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->where, "/etc/nccl.conf:2");
  EXPECT_TRUE(s.history("MAX_NCHANNELS")[1].alias);
  EXPECT_EQ(s.history("MAX_NCHANNELS")[1].setAs, "NCCL_MAX_NRINGS");
}

TEST_F(SettingsTest, EmptyValueMeansDefaultButShadowsLowerSources) {
  Settings s;
  s.add(def("NCCL_CROSS_NIC"), Value{"1", Source::kEtcConf, "/etc/nccl.conf:1"});
  s.add(def("NCCL_CROSS_NIC"), Value{"", Source::kEnv, "env"});
  EXPECT_EQ(s.integer("NCCL_CROSS_NIC"), 2);
  EXPECT_FALSE(s.isSet("NCCL_CROSS_NIC"));
  EXPECT_EQ(s.lookup("NCCL_CROSS_NIC")->source, Source::kDefault);
  EXPECT_EQ(s.winner(def("NCCL_CROSS_NIC"))->where, "env");
}

TEST_F(SettingsTest, TypedGettersParseOnce) {
  Settings s;
  ASSERT_TRUE(s.set("NCCL_P2P_LEVEL", "3").isOk());
  ASSERT_TRUE(s.set("NCCL_SOCKET_IFNAME", "^docker,lo").isOk());
  ASSERT_TRUE(s.set("NCCL_ALGO", "ring;allreduce:tree").isOk());
  ASSERT_TRUE(s.set("NCCL_PROTO", "^LL128").isOk());
  ASSERT_TRUE(s.set("NCCL_NET_PLUGIN", "ofi,socket").isOk());
  ASSERT_TRUE(s.set("NCCL_NETDEVS_POLICY", "MAX:2").isOk());
  ASSERT_TRUE(s.set("NET_FALLBACK", "deny").isOk());
  ASSERT_TRUE(s.set("NCCL_NVB_DISABLE", "1").isOk());
  EXPECT_EQ(s.pathLevel("NCCL_P2P_LEVEL"), 8);  // old level 3 = PHB
  EXPECT_TRUE(s.interfaceList("NCCL_SOCKET_IFNAME").exclude);
  EXPECT_FALSE(s.interfaceList("NCCL_SOCKET_IFNAME").matches("lo"));
  EXPECT_TRUE(s.algorithms().allows(Func::kAllReduce, static_cast<int>(Algo::kTree)));
  EXPECT_FALSE(s.algorithms().allows(Func::kAllReduce, static_cast<int>(Algo::kRing)));
  EXPECT_FALSE(s.protocols().allows(Func::kAllGather, static_cast<int>(Proto::kLL128)));
  EXPECT_EQ(s.list("NCCL_NET_PLUGIN"), (std::vector<std::string>{"ofi", "socket"}));
  EXPECT_EQ(s.netDevsPolicy().max, 2);
  EXPECT_EQ(s.netFallback(), NetFallback::kDeny);
  EXPECT_TRUE(s.flag("NCCL_NVB_DISABLE"));
}

TEST_F(SettingsTest, PluginEnvironmentCarriesPolicyValuesToPlugins) {
  Settings s;
  s.add(def("NCCL_IB_HCA"), Value{"mlx5_0:1", Source::kYaml, "p.yaml:2"});
  s.add(def("NCCL_SOCKET_NTHREADS"), Value{"4", Source::kEnv, "env"});  // already in the environment
  s.add(def("NCCL_CROSS_NIC"), Value{"1", Source::kYaml, "p.yaml:3"});  // not a plugin's
  auto env = s.pluginEnvironment();
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0].first, "NCCL_IB_HCA");
  EXPECT_EQ(env[0].second, "mlx5_0:1");
}

}  // namespace
}  // namespace weft::config
