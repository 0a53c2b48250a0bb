// The settings table itself: complete, consistent, and documented in docs/settings.md.
#include <gtest/gtest.h>

#include <set>

#include "core/config/table.h"
#include "core/config/values.h"
#include "tests/support/log_capture.h"

namespace weft::config {
namespace {

using TableTest = weft::test::WeftTest;

TEST_F(TableTest, EveryDefaultIsAValidValue) {
  for (const SettingDef& d : table()) {
    if (d.defaultValue.empty()) continue;
    Status s = validateValue(d, d.defaultValue);
    EXPECT_TRUE(s.isOk()) << d.name << " default " << d.defaultValue << ": " << s.message();
  }
}

TEST_F(TableTest, EveryRowHasDocModuleAndAValidShape) {
  for (const SettingDef& d : table()) {
    EXPECT_FALSE(d.doc.empty()) << d.name;
    EXPECT_FALSE(d.module.empty()) << d.name;
    EXPECT_TRUE(d.name.starts_with("NCCL_") || d.name.starts_with("WEFT_")) << d.name;
    EXPECT_EQ(d.type == Type::kEnum, !d.choices.empty()) << d.name;
  }
}

TEST_F(TableTest, NamesStayUniqueWithoutTheirPrefix) {
  // YAML keys drop NCCL_/WEFT_, so no two rows may share a name once it is gone.
  std::set<std::string_view> seen;
  for (const SettingDef& d : table()) {
    EXPECT_TRUE(seen.insert(shortName(d.name)).second) << d.name;
    for (std::string_view a : d.aliases) EXPECT_TRUE(seen.insert(shortName(a)).second) << a;
  }
  EXPECT_FALSE(seen.count("profiles")) << "'profiles' is the YAML policy's own key";
}

TEST_F(TableTest, CoversNcclVariablesAndWhatTheOtherModulesRead) {
  for (const char* name :
       {"NCCL_TOPO_FILE", "NCCL_TOPO_DUMP_FILE", "NCCL_TOPO_DUMP_FILE_RANK", "NCCL_GRAPH_FILE",
        "NCCL_GRAPH_DUMP_FILE", "NCCL_GRAPH_DUMP_FILE_RANK", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS",
        "NCCL_CROSS_NIC", "NCCL_P2P_LEVEL", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET_GDR_LEVEL",
        "NCCL_NET_GDR_READ", "NCCL_NET_GDR_C2C", "NCCL_PXN_DISABLE", "NCCL_PXN_C2C", "NCCL_P2P_PXN_LEVEL",
        "NCCL_NVB_DISABLE", "NCCL_IGNORE_DISABLED_P2P", "NCCL_NET_DISABLE_INTRA", "NCCL_NET",
        "NCCL_NET_PLUGIN", "WEFT_NET_FALLBACK", "NCCL_IB_DISABLE", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX",
        "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "NCCL_SOCKET_IFNAME",
        "NCCL_SOCKET_FAMILY", "NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD", "WEFT_OFI_PROVIDER",
        "NCCL_ALGO", "NCCL_PROTO", "NCCL_TUNER_PLUGIN", "NCCL_HOSTID", "NCCL_CONF_FILE",
        "NCCL_IGNORE_CPU_AFFINITY", "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE", "NCCL_COLLNET_NODE_THRESHOLD",
        "NCCL_NETDEVS_POLICY", "NCCL_MNNVL_ENABLE", "NCCL_MNNVL_SCATTER_NETS_ENABLE",
        "NCCL_MNNVL_RAIL_PER_HOST", "NCCL_NET_MERGE_LEVEL", "NCCL_NET_FORCE_MERGE", "NCCL_DEBUG",
        "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "WEFT_CONFIG"}) {
    EXPECT_NE(findEnvDef(name), nullptr) << name;
  }
}

TEST_F(TableTest, NcclDefaultsFromTheReference) {
  auto dflt = [](const char* n) { return std::string(findDef(n)->defaultValue); };
  EXPECT_EQ(dflt("NCCL_CROSS_NIC"), "2");
  EXPECT_EQ(dflt("NCCL_MIN_NCHANNELS"), "-2");
  EXPECT_EQ(dflt("NCCL_MAX_NCHANNELS"), "-2");
  EXPECT_EQ(dflt("NCCL_NET_GDR_READ"), "-2");
  EXPECT_EQ(dflt("NCCL_P2P_PXN_LEVEL"), "2");
  EXPECT_EQ(dflt("NCCL_NVLS_ENABLE"), "2");
  EXPECT_EQ(dflt("NCCL_SOCKET_NTHREADS"), "-2");
  EXPECT_EQ(dflt("NCCL_NETDEVS_POLICY"), "AUTO");
  EXPECT_EQ(dflt("NCCL_DEBUG_SUBSYS"), "INIT,BOOTSTRAP,ENV");
  EXPECT_EQ(dflt("WEFT_NET_FALLBACK"), "allow");
}

TEST_F(TableTest, FindsEverySpelling) {
  const SettingDef* d = findDef("NCCL_MAX_NCHANNELS");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(findDef("MAX_NCHANNELS"), d);
  EXPECT_EQ(findDef("NCCL_MAX_NRINGS"), d);
  EXPECT_EQ(findDef("MAX_NRINGS"), d);
  EXPECT_TRUE(isAliasOf(*d, "MAX_NRINGS"));
  EXPECT_FALSE(isAliasOf(*d, "MAX_NCHANNELS"));
  EXPECT_EQ(findDef("NET_FALLBACK"), findDef("WEFT_NET_FALLBACK"));
  EXPECT_EQ(findDef("max_nchannels"), nullptr);  // names are upper case, as in the environment
  // The environment only knows full names.
  EXPECT_EQ(findEnvDef("MAX_NCHANNELS"), nullptr);
  EXPECT_EQ(findEnvDef("NCCL_MAX_NRINGS"), d);
  EXPECT_EQ(defIndex(*d), static_cast<size_t>(d - table().data()));
}

TEST_F(TableTest, SuggestsCloseNamesInTheSameSpelling) {
  EXPECT_EQ(suggestName("NCCL_MAX_NCHANELS"), "NCCL_MAX_NCHANNELS");
  EXPECT_EQ(suggestName("MAX_NCHANELS"), "MAX_NCHANNELS");
  EXPECT_EQ(suggestName("max_nchannels"), "MAX_NCHANNELS");
  EXPECT_EQ(suggestName("NCCL_SOCKET_IFNAM"), "NCCL_SOCKET_IFNAME");
  EXPECT_EQ(suggestName("NCCL_LL128_BUFFSIZE"), std::nullopt);
  EXPECT_EQ(suggestName("XYZ"), std::nullopt);
}

}  // namespace
}  // namespace weft::config
