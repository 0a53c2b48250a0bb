// The net plugin conformance suite under GoogleTest: every check × every plugin configuration
// below, with --strict: weft's own plugins meet NCCL's usage and every strict extra. The socket plugin runs over loopback only (lo: 127.0.0.1 and ::1), without and with
// helper threads; the OFI plugin on libfabric's tcp provider restricted to lo. Only a plugin that
// needs hardware (IB without an RDMA device) may skip, with the reason; the loopback ones need
// nothing but the kernel and libfabric, so a skip there fails (a CI host that silently stopped
// running them would look green), as does a configured plugin that is missing. A plugin switched
// off at configure time skips.
// Each check runs in a child process (core/plugin/conformance_runner.cc).
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "core/plugin/conformance.h"
#include "tests/support/log_capture.h"
#include "weft/config.h"

namespace weft::plugin::conformance {
namespace {

struct NetUnderTest {
  std::string label;
  std::string file;  // in the build's plugin folder
  std::vector<std::pair<std::string, std::string>> env;
  bool required = true;        // configured to be built here: a missing file is a failure
  bool needsHardware = false;  // may skip when the machine lacks the device
  std::string noDevice = "";   // what a "found no device" skip means for this plugin
};

// gtest prints parameters in test names' descriptions: the label says it all.
void PrintTo(const NetUnderTest& n, std::ostream* os) { *os << n.label; }

std::string pluginPath(const std::string& file) { return std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/" + file; }

std::vector<NetUnderTest> netsUnderTest() {
  return {
      {"SocketIPv4", "libweft-net-socket.so",
       {{"NCCL_SOCKET_IFNAME", "=lo"}, {"NCCL_SOCKET_FAMILY", "AF_INET"}, {"NCCL_SOCKET_NTHREADS", "0"}}},
      {"SocketIPv4Striped", "libweft-net-socket.so",
       {{"NCCL_SOCKET_IFNAME", "=lo"}, {"NCCL_SOCKET_FAMILY", "AF_INET"}, {"NCCL_SOCKET_NTHREADS", "2"},
        {"NCCL_NSOCKS_PERTHREAD", "2"}}},
      {"SocketIPv6Striped", "libweft-net-socket.so",
       {{"NCCL_SOCKET_IFNAME", "=lo"}, {"NCCL_SOCKET_FAMILY", "AF_INET6"}, {"NCCL_SOCKET_NTHREADS", "1"},
        {"NCCL_NSOCKS_PERTHREAD", "3"}}},
      {"OfiTcpLoopback", "libweft-net-ofi.so", {{"FI_PROVIDER", "tcp"}, {"FI_TCP_IFACE", "lo"}},
       /*required=*/WEFT_WITH_OFI == 1},
      // tcp needs no registration: WEFT_OFI_MR=always drives the fi_mr_reg path anyway.
      {"OfiTcpLoopbackRegistered", "libweft-net-ofi.so",
       {{"FI_PROVIDER", "tcp"}, {"FI_TCP_IFACE", "lo"}, {"WEFT_OFI_MR", "always"}}, /*required=*/WEFT_WITH_OFI == 1},
      {"Ib", "libweft-net-ib.so", {}, /*required=*/WEFT_WITH_IB == 1, /*needsHardware=*/true,
       "no RDMA device: this machine has no active InfiniBand/RoCE port; the row runs unchanged where one exists"},
  };
}

std::vector<std::string> checkNames() {
  std::vector<std::string> names;
  for (const CheckInfo& c : checks()) names.push_back(c.name);
  return names;
}

using Param = std::tuple<NetUnderTest, std::string>;

class NetConformance : public test::WeftTest, public ::testing::WithParamInterface<Param> {};

TEST_P(NetConformance, Check) {
  const auto& [net, check] = GetParam();
  const std::string path = pluginPath(net.file);
  if (!std::filesystem::exists(path)) {
    ASSERT_FALSE(net.required) << net.file << " is configured to be built but missing: " << path;
    GTEST_SKIP() << net.file << " is not built in this configuration";
  }
  Options options;
  options.env = net.env;
  options.timeoutSeconds = 120;
  options.strict = true;  // weft's own plugins meet the strict extras too, and log no stray WARN
  CheckResult r = runCheck(path, check, options);
  if (r.outcome == Outcome::kSkip && net.needsHardware) {
    bool noDevice = !net.noDevice.empty() && r.reason.find("found no device") != std::string::npos;
    GTEST_SKIP() << (noDevice ? net.noDevice + " (" + r.reason + ")" : r.reason);
  }
  ASSERT_NE(outcomeName(r.outcome), std::string("SKIP"))
      << check << " on " << net.label << " skipped, but it needs no hardware: " << r.reason;
  EXPECT_EQ(outcomeName(r.outcome), std::string("PASS")) << check << " on " << net.label << ": " << r.reason;
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  std::string check = std::get<1>(info.param);
  for (char& c : check)
    if (c == '-') c = '_';
  return std::get<0>(info.param).label + "_" + check;
}

INSTANTIATE_TEST_SUITE_P(Nets, NetConformance,
                         ::testing::Combine(::testing::ValuesIn(netsUnderTest()), ::testing::ValuesIn(checkNames())),
                         paramName);

}  // namespace
}  // namespace weft::plugin::conformance
