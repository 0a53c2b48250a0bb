// Value syntax of every setting type, with NCCL's quirks.
#include <gtest/gtest.h>

#include "core/config/table.h"
#include "core/config/values.h"
#include "tests/support/log_capture.h"

namespace weft::config {
namespace {

using ValuesTest = weft::test::WeftTest;

const SettingDef& def(std::string_view name) {
  const SettingDef* d = findDef(name);
  EXPECT_NE(d, nullptr) << name;
  return *d;
}

std::string why(std::string_view name, std::string_view value) {
  return validateValue(def(name), value).message();
}

TEST_F(ValuesTest, IntegersParseLikeStrtollBaseZero) {
  EXPECT_EQ(*parseInteger("16"), 16);
  EXPECT_EQ(*parseInteger("0x10"), 16);
  EXPECT_EQ(*parseInteger("020"), 16);  // a leading 0 is octal, as in NCCL
  EXPECT_EQ(*parseInteger("-2"), -2);
  EXPECT_EQ(*parseInteger(" 7 "), 7);
  EXPECT_FALSE(parseInteger("12abc").isOk());  // NCCL would read 12; weft refuses the junk
  EXPECT_FALSE(parseInteger("").isOk());
  EXPECT_FALSE(parseInteger("1e3").isOk());
}

TEST_F(ValuesTest, IntegerRangesAndAutoMinusTwo) {
  EXPECT_TRUE(validateValue(def("NCCL_CROSS_NIC"), "2").isOk());
  EXPECT_EQ(why("NCCL_CROSS_NIC", "3"), "out of range");
  EXPECT_EQ(why("NCCL_CROSS_NIC", "-2"), "out of range");  // CROSS_NIC has no auto value
  EXPECT_TRUE(validateValue(def("NCCL_MAX_NCHANNELS"), "-2").isOk());
  EXPECT_TRUE(validateValue(def("NCCL_MAX_NCHANNELS"), "0x20").isOk());
  EXPECT_EQ(why("NCCL_MAX_NCHANNELS", "0"), "out of range");
  EXPECT_EQ(why("NCCL_MAX_NCHANNELS", "-1"), "out of range");
  EXPECT_TRUE(validateValue(def("NCCL_SOCKET_NTHREADS"), "16").isOk());
  EXPECT_EQ(why("NCCL_SOCKET_NTHREADS", "17"), "out of range");
  EXPECT_TRUE(validateValue(def("NCCL_IB_GID_INDEX"), "-1").isOk());
  EXPECT_EQ(why("NCCL_IB_TIMEOUT", "abc"), "not an integer");
  EXPECT_EQ(expectedForm(def("NCCL_MAX_NCHANNELS")), "an integer >= 1 or -2 (auto)");
  EXPECT_EQ(expectedForm(def("NCCL_CROSS_NIC")), "an integer 0-2");
}

TEST_F(ValuesTest, PathLevelsByNameAreUpperCase) {
  EXPECT_EQ(parsePathLevel("LOC"), 0);
  EXPECT_EQ(parsePathLevel("NVL"), 1);
  EXPECT_EQ(parsePathLevel("PIX"), 4);
  EXPECT_EQ(parsePathLevel("PXB"), 5);
  EXPECT_EQ(parsePathLevel("P2C"), 6);
  EXPECT_EQ(parsePathLevel("PHB"), 8);
  EXPECT_EQ(parsePathLevel("SYS"), 9);
  // NCCL compares names with strcmp and accepts nothing above SYS.
  EXPECT_EQ(parsePathLevel("sys"), std::nullopt);
  EXPECT_EQ(parsePathLevel("NET"), std::nullopt);
  EXPECT_EQ(why("NCCL_P2P_LEVEL", "pxb"), "NCCL only reads path types in upper case: write PXB");
  EXPECT_STREQ(pathLevelName(5), "PXB");
}

TEST_F(ValuesTest, PathLevelsOldIntegersMapAndClampToSys) {
  EXPECT_EQ(parsePathLevel("0"), 0);  // LOC
  EXPECT_EQ(parsePathLevel("1"), 4);  // PIX
  EXPECT_EQ(parsePathLevel("2"), 5);  // PXB
  EXPECT_EQ(parsePathLevel("3"), 8);  // PHB
  EXPECT_EQ(parsePathLevel("4"), 9);  // SYS
  EXPECT_EQ(parsePathLevel("5"), 9);  // SYS
  EXPECT_EQ(parsePathLevel("42"), 9);  // clamped, as NCCL does
  EXPECT_EQ(parsePathLevel("0x2"), 5);
  EXPECT_EQ(parsePathLevel("-1"), std::nullopt);  // NCCL only tries numbers starting with a digit
  EXPECT_EQ(why("NCCL_NET_GDR_LEVEL", "FAR"), "not a path type");
}

TEST_F(ValuesTest, InterfaceListsWithExcludeExactAndPorts) {
  auto l = parseIfList("^=eth0,lo:2");
  ASSERT_TRUE(l.isOk()) << l.status().message();
  EXPECT_TRUE(l->exclude);
  EXPECT_TRUE(l->exact);
  ASSERT_EQ(l->items.size(), 2u);
  EXPECT_EQ(l->items[0].name, "eth0");
  EXPECT_EQ(l->items[0].port, -1);
  EXPECT_EQ(l->items[1].name, "lo");
  EXPECT_EQ(l->items[1].port, 2);

  auto hca = parseIfList("mlx5_0:1,,mlx5_1:1");  // empty items vanish, as with NCCL's parser
  ASSERT_TRUE(hca.isOk());
  EXPECT_EQ(hca->items.size(), 2u);
  EXPECT_FALSE(hca->exclude);
}

TEST_F(ValuesTest, InterfaceListsMatchLikeNccl) {
  IfList prefix = *parseIfList("eth");
  EXPECT_TRUE(prefix.matches("eth0"));
  EXPECT_FALSE(prefix.matches("ib0"));
  IfList exact = *parseIfList("=eth");
  EXPECT_FALSE(exact.matches("eth0"));
  EXPECT_TRUE(exact.matches("eth"));
  IfList exclude = *parseIfList("^docker,lo");
  EXPECT_FALSE(exclude.matches("docker0"));
  EXPECT_FALSE(exclude.matches("lo"));
  EXPECT_TRUE(exclude.matches("eth0"));
  IfList ports = *parseIfList("mlx5_0:1");
  EXPECT_TRUE(ports.matches("mlx5_0", 1));
  EXPECT_FALSE(ports.matches("mlx5_0", 2));
  EXPECT_TRUE(ports.matches("mlx5_0", -1));  // port unknown matches any
  EXPECT_TRUE(IfList{}.matches("anything"));  // no list: every interface
}

TEST_F(ValuesTest, InterfaceListErrors) {
  EXPECT_EQ(parseIfList("^").status().message(), "no interface or device name in the list");
  EXPECT_EQ(parseIfList("mlx5_0:x").status().message(),
            "bad port \"x\" in \"mlx5_0:x\" (expected a number, as in mlx5_0:1)");
  EXPECT_EQ(parseIfList("=^eth0").status().message(),
            "'^' and '=' may only start the whole list, found in \"^eth0\"");
  EXPECT_EQ(parseIfList(":1").status().message(), "empty name in \":1\"");
}

TEST_F(ValuesTest, AlgoListAppliesToEveryFunction) {
  auto s = parseAlgoSelection("ring,TREE");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  for (int f = 0; f < kNumFuncs; ++f) {
    EXPECT_TRUE(s->allows(static_cast<Func>(f), static_cast<int>(Algo::kRing)));
    EXPECT_TRUE(s->allows(static_cast<Func>(f), static_cast<int>(Algo::kTree)));
    EXPECT_FALSE(s->allows(static_cast<Func>(f), static_cast<int>(Algo::kNvls)));
  }
}

TEST_F(ValuesTest, AlgoListPerFunctionSectionsReplaceTheFirst) {
  // NCCL's own example: ring and collnetdirect for all, tree and collnetdirect for allreduce,
  // ring for broadcast.
  auto s = parseAlgoSelection("ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_FALSE(s->allows(Func::kAllReduce, static_cast<int>(Algo::kRing)));
  EXPECT_TRUE(s->allows(Func::kAllReduce, static_cast<int>(Algo::kTree)));
  EXPECT_TRUE(s->allows(Func::kAllReduce, static_cast<int>(Algo::kCollNetDirect)));
  EXPECT_TRUE(s->allows(Func::kBroadcast, static_cast<int>(Algo::kRing)));
  EXPECT_FALSE(s->allows(Func::kBroadcast, static_cast<int>(Algo::kCollNetDirect)));
  EXPECT_TRUE(s->allows(Func::kAllGather, static_cast<int>(Algo::kCollNetDirect)));
  EXPECT_FALSE(s->allows(Func::kAllGather, static_cast<int>(Algo::kTree)));
}

TEST_F(ValuesTest, ProtoListWithExclusionAndOnlyOneFunction) {
  auto s = parseProtoSelection("^LL128;allreduce:LL128");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_TRUE(s->allows(Func::kAllGather, static_cast<int>(Proto::kLL)));
  EXPECT_TRUE(s->allows(Func::kAllGather, static_cast<int>(Proto::kSimple)));
  EXPECT_FALSE(s->allows(Func::kAllGather, static_cast<int>(Proto::kLL128)));
  EXPECT_TRUE(s->allows(Func::kAllReduce, static_cast<int>(Proto::kLL128)));
  EXPECT_FALSE(s->allows(Func::kAllReduce, static_cast<int>(Proto::kSimple)));

  // A value that names one function says nothing about the others: their default applies.
  auto only = parseProtoSelection("allreduce:^ll");
  ASSERT_TRUE(only.isOk());
  EXPECT_FALSE(only->perFunc[static_cast<int>(Func::kBroadcast)].has_value());
  EXPECT_TRUE(only->allows(Func::kBroadcast, static_cast<int>(Proto::kLL), true));
  EXPECT_FALSE(only->allows(Func::kBroadcast, static_cast<int>(Proto::kLL), false));
  EXPECT_FALSE(only->allows(Func::kAllReduce, static_cast<int>(Proto::kLL)));
  EXPECT_TRUE(parseProtoSelection("^").isOk());  // NCCL: '^' of nothing enables everything
}

TEST_F(ValuesTest, AlgoListErrorsSayWhatIsWrong) {
  EXPECT_EQ(parseAlgoSelection("Rign").status().message(), "unknown algorithm \"Rign\" (did you mean Ring?)");
  EXPECT_EQ(parseAlgoSelection("ring;tree").status().message(),
            "\"tree\": every section after the first needs a function, as in allreduce:tree");
  EXPECT_EQ(parseAlgoSelection("allreduc:ring").status().message(),
            "unknown function \"allreduc\" (did you mean AllReduce?)");
  EXPECT_EQ(parseAlgoSelection("allreduce:").status().message(), "no algorithm in \"\"");
  EXPECT_EQ(parseAlgoSelection("allreduce:ring:tree").status().message(),
            "\"allreduce:ring:tree\": more than one ':' (expected func:list)");
  EXPECT_EQ(parseProtoSelection("LL129").status().message(), "unknown protocol \"LL129\" (did you mean LL128?)");
  EXPECT_EQ(parseProtoSelection(";").status().message(), "no protocol in \";\"");
  // NCCL compares whole tokens: a space is part of the name, and only the value's first section
  // may go without a function (found by tools/nccl-oracle/sweep_tune.sh: NCCL's init fails there).
  EXPECT_EQ(parseAlgoSelection("Ring, Tree").status().message(), "unknown algorithm \" Tree\" (did you mean Tree?)");
  EXPECT_EQ(parseAlgoSelection("Ring; allreduce:Tree").status().message(),
            "unknown function \" allreduce\" (did you mean AllReduce?)");
  EXPECT_EQ(parseAlgoSelection(";Ring").status().message(),
            "\"Ring\": only a section at the start of the value may go without a function (NCCL fails on a "
            "leading ';')");
  EXPECT_TRUE(parseAlgoSelection("Ring;;allreduce:Tree").isOk());  // strtok: the empty section vanishes
}

TEST_F(ValuesTest, NetDevsPolicy) {
  EXPECT_EQ(parseNetDevsPolicy("auto")->kind, NetDevsPolicy::Kind::kAuto);
  EXPECT_EQ(parseNetDevsPolicy("ALL")->kind, NetDevsPolicy::Kind::kAll);
  auto max = parseNetDevsPolicy("max:2");
  ASSERT_TRUE(max.isOk());
  EXPECT_EQ(max->kind, NetDevsPolicy::Kind::kMax);
  EXPECT_EQ(max->max, 2);
  EXPECT_FALSE(parseNetDevsPolicy("MAX:0").isOk());
  EXPECT_FALSE(parseNetDevsPolicy("MAX:").isOk());
  EXPECT_FALSE(parseNetDevsPolicy("SOME").isOk());
}

TEST_F(ValuesTest, EnumsAndSubsystems) {
  EXPECT_TRUE(validateValue(def("NCCL_DEBUG"), "info").isOk());  // NCCL uses strcasecmp
  EXPECT_EQ(why("NCCL_DEBUG", "LOUD"), "not a known value");
  EXPECT_EQ(expectedForm(def("NCCL_DEBUG")), "one of VERSION, WARN, INFO, ABORT, TRACE");
  EXPECT_TRUE(validateValue(def("NET_FALLBACK"), "Deny").isOk());
  EXPECT_TRUE(validateValue(def("NCCL_SOCKET_FAMILY"), "AF_INET6").isOk());
  EXPECT_EQ(why("NCCL_SOCKET_FAMILY", "af_inet"),
            "NCCL compares this value case-sensitively: write AF_INET");
  EXPECT_TRUE(validateValue(def("NCCL_DEBUG_SUBSYS"), "^init,graph").isOk());
  EXPECT_EQ(why("NCCL_DEBUG_SUBSYS", "INIT,GRAF"), "unknown subsystem \"GRAF\"");
}

TEST_F(ValuesTest, NameLists) {
  EXPECT_EQ(parseNameList("ofi, socket,,ib"), (std::vector<std::string>{"ofi", "socket", "ib"}));
  EXPECT_TRUE(parseNameList("").empty());
}

}  // namespace
}  // namespace weft::config
