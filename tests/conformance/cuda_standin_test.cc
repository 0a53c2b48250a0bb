// weft's CUDA stand-in (core/plugin/cuda_standin.h, plugins/cuda-standin) against a plugin of
// the project's own that initialises CUDA the way aws-ofi-nccl does (libnccl-net-cudainit.so,
// tests/plugins/shim_net.cc): dlopen("libcudart.so"), cudaRuntimeGetVersion, driver entry points
// through cudaGetDriverEntryPoint[ByVersion], cuDriverGetVersion, a GPU Direct RDMA probe, and
// regMr asking the driver what the memory is. Where no CUDA driver works (CI, this project's
// build machines) the plugin fails init without the stand-in and passes the suite with it;
// where one works the stand-in stays out of the way (auto) and the plugin sees the real driver.
#include <gtest/gtest.h>

#include <string>

#include "core/plugin/conformance.h"
#include "core/plugin/cuda_standin.h"
#include "core/plugin/library.h"
#include "tests/support/log_capture.h"
#include "tests/support/tool.h"

namespace weft::plugin::conformance {
namespace {

const std::string kCudaInit = std::string(WEFT_TEST_PLUGIN_DIR) + "/libnccl-net-cudainit.so";

Options loopback(CudaStandin cuda) {
  Options o;
  o.env = {{"NCCL_SOCKET_IFNAME", "=lo"}, {"NCCL_SOCKET_FAMILY", "AF_INET"}};
  o.timeoutSeconds = 120;
  o.maxBytes = size_t{64} << 20;  // the shim's bytes are the socket plugin's, tested up to 1 GiB elsewhere
  o.strict = true;  // the stand-in must not cost the plugin anything, WARN lines included
  o.cuda = cuda;
  return o;
}

using CudaStandinTest = test::WeftTest;

TEST_F(CudaStandinTest, IsBuiltBesideWeftsPlugins) {
  auto plan = planCudaStandin(CudaStandin::kOn, defaultPluginDirs());
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  EXPECT_NE(plan->dir.find("weft-cuda-standin"), std::string::npos) << plan->dir;
}

TEST_F(CudaStandinTest, AutoUsesItExactlyWhenNoDriverWorks) {
  CudaDriverProbe probe = probeCudaDriver();
  auto plan = planCudaStandin(CudaStandin::kAuto, defaultPluginDirs());
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  EXPECT_EQ(plan->use, !probe.present) << plan->why;
  EXPECT_NE(plan->why.find(probe.why), std::string::npos) << plan->why;
  if (!probe.present) {
    EXPECT_NE(plan->why.find("no CUDA driver here"), std::string::npos) << plan->why;
  }
}

TEST_F(CudaStandinTest, OffIsNeverUsed) {
  auto plan = planCudaStandin(CudaStandin::kOff, defaultPluginDirs());
  ASSERT_TRUE(plan.isOk());
  EXPECT_FALSE(plan->use);
}

class CudaInitPlugin : public test::WeftTest, public ::testing::WithParamInterface<std::string> {};

// With the stand-in in front (auto: only where no driver works), the plugin that needs CUDA
// passes every check of NCCL's usage and the strict extras too.
TEST_P(CudaInitPlugin, PassesWithTheStandInWhereNoDriverWorks) {
  CheckResult r = runCheck(kCudaInit, GetParam(), loopback(CudaStandin::kAuto));
  EXPECT_EQ(outcomeName(r.outcome), std::string("PASS")) << GetParam() << ": " << r.reason;
}

INSTANTIATE_TEST_SUITE_P(Checks, CudaInitPlugin,
                         ::testing::Values("init", "properties", "sizes", "registration", "in-flight", "peer-death"),
                         [](const auto& p) {
                           std::string n = p.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// Forced on, the stand-in replaces whatever driver there is: the plugin still starts.
TEST_F(CudaStandinTest, ForcedOnThePluginStartsOnItsDriverWithNoGpu) {
  CheckResult r = runCheck(kCudaInit, "init", loopback(CudaStandin::kOn));
  EXPECT_EQ(outcomeName(r.outcome), std::string("PASS")) << r.reason;
}

// Without it, on a machine without a driver, the plugin fails init as aws-ofi-nccl does.
TEST_F(CudaStandinTest, WithoutItThePluginFailsInitWhereNoDriverWorks) {
  CudaDriverProbe probe = probeCudaDriver();
  if (probe.present) GTEST_SKIP() << "this machine has a working CUDA driver (" << probe.why << "): the plugin starts on it";
  Options o = loopback(CudaStandin::kOff);
  o.strict = false;
  CheckResult r = runCheck(kCudaInit, "init", o);
  EXPECT_EQ(outcomeName(r.outcome), std::string("FAIL"));
  EXPECT_NE(r.reason.find("init: "), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("Failed to initialize NET plugin"), std::string::npos) << r.reason;
}

// `weft net-test` says in its header whether the stand-in is in front of the plugin, and names
// it in exactly one INFO line when it is.
TEST_F(CudaStandinTest, NetTestNamesItInOneInfoLine) {
  CudaDriverProbe probe = probeCudaDriver();
  auto run = test::runCommand("NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET NCCL_SOCKET_IFNAME==lo " + test::weftTool() +
                              " net-test " + kCudaInit + " --check init --check properties 2>&1");
  ASSERT_EQ(run.rc, 0) << run.out;
  size_t lines = 0;
  for (size_t at = run.out.find("CUDA stand-in"); at != std::string::npos; at = run.out.find("CUDA stand-in", at + 1)) {
    size_t start = run.out.rfind('\n', at);
    if (run.out.compare(start == std::string::npos ? 0 : start + 1, 4, "cuda") == 0) continue;  // the header
    ++lines;
  }
  if (probe.present) {
    EXPECT_EQ(lines, 0u) << run.out;
    EXPECT_NE(run.out.find("cuda: no stand-in: not needed"), std::string::npos) << run.out;
  } else {
    EXPECT_EQ(lines, 1u) << run.out;
    EXPECT_NE(run.out.find("NET/Plugin: weft's CUDA stand-in"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("cuda: weft's CUDA stand-in ("), std::string::npos) << run.out;
  }
  EXPECT_NE(run.out.find("2 passed, 0 failed, 0 skipped"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace weft::plugin::conformance
