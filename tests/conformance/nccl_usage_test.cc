// The suite judges a plugin as NCCL 2.28 uses it. libnccl-net-ncclminimal.so (tests/plugins/
// shim_net.cc, over weft's socket plugin) does what NCCL needs and no more, with aws-ofi-nccl's
// habits: it refuses a NULL memory handle, matches in posting order only, reports speed 0 and
// maxRecvs 1, logs a WARN at init and does not check irecv's n. Without --strict every check
// that follows NCCL's usage passes and the strict extras are NOTEs; with --strict they fail,
// each saying what NCCL does instead.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/plugin/conformance.h"
#include "tests/support/log_capture.h"

namespace weft::plugin::conformance {
namespace {

const std::string kMinimal = std::string(WEFT_TEST_PLUGIN_DIR) + "/libnccl-net-ncclminimal.so";

Options loopback(bool strict) {
  Options o;
  o.env = {{"NCCL_SOCKET_IFNAME", "=lo"}, {"NCCL_SOCKET_FAMILY", "AF_INET"}};
  o.timeoutSeconds = 120;
  o.maxBytes = size_t{64} << 20;  // the shim's bytes are the socket plugin's, tested up to 1 GiB elsewhere
  o.strict = strict;
  return o;
}

bool hasNoteWith(const CheckResult& r, const std::string& fragment) {
  for (const std::string& n : r.notes)
    if (n.find(fragment) != std::string::npos) return true;
  return false;
}

class NcclMinimalPlugin : public test::WeftTest, public ::testing::WithParamInterface<std::string> {};

// Every check of NCCL's usage passes (multi-recv skips: maxRecvs is 1, and says why).
TEST_P(NcclMinimalPlugin, PassesEveryCheckOfNcclsUsage) {
  const std::string check = GetParam();
  CheckResult r = runCheck(kMinimal, check, loopback(false));
  if (check == "multi-recv") {
    EXPECT_EQ(outcomeName(r.outcome), std::string("SKIP")) << r.reason;
    EXPECT_NE(r.reason.find("maxRecvs is 1"), std::string::npos) << r.reason;
    return;
  }
  EXPECT_EQ(outcomeName(r.outcome), std::string("PASS")) << check << ": " << r.reason;
}

std::vector<std::string> ncclUsageChecks() {
  std::vector<std::string> names;
  for (const CheckInfo& c : checks())
    if (!c.strictExtra) names.push_back(c.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Checks, NcclMinimalPlugin, ::testing::ValuesIn(ncclUsageChecks()), [](const auto& p) {
  std::string n = p.param;
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
});

using NcclUsage = test::WeftTest;

TEST_F(NcclUsage, SpeedZeroPassesWithANoteThatNcclTakesItAs10Gbps) {
  CheckResult r = runCheck(kMinimal, "properties", loopback(false));
  ASSERT_EQ(outcomeName(r.outcome), std::string("PASS")) << r.reason;
  EXPECT_NE(r.reason.find("speed 0 (NCCL: 10000 Mbps)"), std::string::npos) << r.reason;
  EXPECT_TRUE(hasNoteWith(r, "takes a speed of 0 or less as 10000 Mbps")) << ::testing::PrintToString(r.notes);
}

TEST_F(NcclUsage, SpeedZeroFailsUnderStrict) {
  CheckResult r = runCheck(kMinimal, "properties", loopback(true));
  EXPECT_EQ(outcomeName(r.outcome), std::string("FAIL"));
  EXPECT_NE(r.reason.find("strict: device 0: speed 0 Mbps"), std::string::npos) << r.reason;
}

TEST_F(NcclUsage, PluginWarnLinesAreNotesNotFailures) {
  CheckResult r = runCheck(kMinimal, "init", loopback(false));
  ASSERT_EQ(outcomeName(r.outcome), std::string("PASS")) << r.reason;
  EXPECT_TRUE(hasNoteWith(r, "which NCCL prints and goes on from; the first:")) << ::testing::PrintToString(r.notes);
  EXPECT_TRUE(hasNoteWith(r, "RDMA protocol probe failed")) << ::testing::PrintToString(r.notes);
}

TEST_F(NcclUsage, PluginWarnLinesFailUnderStrict) {
  CheckResult r = runCheck(kMinimal, "init", loopback(true));
  EXPECT_EQ(outcomeName(r.outcome), std::string("FAIL"));
  EXPECT_NE(r.reason.find("strict: unexpected WARN"), std::string::npos) << r.reason;
}

// Strict extras run and report without --strict, but never fail the run.
TEST_F(NcclUsage, StrictExtrasAreReportedAsNotesWithoutStrict) {
  for (const char* check : {"tags-any-order", "bad-arguments"}) {
    CheckResult r = runCheck(kMinimal, check, loopback(false));
    EXPECT_EQ(outcomeName(r.outcome), std::string("NOTE")) << check << ": " << r.reason;
    EXPECT_FALSE(r.reason.empty()) << check;
  }
  CheckResult order = runCheck(kMinimal, "tags-any-order", loopback(false));
  EXPECT_NE(order.reason.find("NCCL matches in posting order only"), std::string::npos) << order.reason;
}

TEST_F(NcclUsage, StrictExtrasFailUnderStrict) {
  for (const char* check : {"tags-any-order", "bad-arguments"}) {
    CheckResult r = runCheck(kMinimal, check, loopback(true));
    EXPECT_EQ(outcomeName(r.outcome), std::string("FAIL")) << check << ": " << r.reason;
  }
}

// The extras a plugin does meet pass (with its WARN line as a note).
TEST_F(NcclUsage, StrictExtrasThePluginMeetsPass) {
  for (const char* check : {"in-flight-eager", "listen-reuse"}) {
    CheckResult r = runCheck(kMinimal, check, loopback(false));
    EXPECT_EQ(outcomeName(r.outcome), std::string("PASS")) << check << ": " << r.reason;
  }
}

TEST_F(NcclUsage, EveryCheckIsListedOnceAndExtrasComeLast) {
  bool seenExtra = false;
  std::set<std::string> names;
  for (const CheckInfo& c : checks()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(seenExtra && !c.strictExtra) << c.name << " follows a strict extra";
    seenExtra = seenExtra || c.strictExtra;
  }
  EXPECT_TRUE(seenExtra);
}

}  // namespace
}  // namespace weft::plugin::conformance
