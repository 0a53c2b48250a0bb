// weft's CUDA stand-in for GPU-less conformance runs. Some net plugins initialise CUDA in init
// even for host memory (aws-ofi-nccl resolves driver entry points through libcudart and refuses
// to start without them), so on a machine without a CUDA driver they never reach the network.
// The stand-in (plugins/cuda-standin: libcuda.so.1, libcudart.so, .so.12, .so.13) is a driver
// with no GPU: cuInit and the version and entry-point calls succeed, anything that needs a
// device answers CUDA_ERROR_NO_DEVICE / cudaErrorNoDevice, so a plugin sees no GPU features and
// uses host memory. Loaded by path into the check's process before the plugin, each library
// takes its soname, so the plugin's own dlopen("libcudart.so") or dlopen("libcuda.so.1") gets
// it. It is never installed on the linker's path and never used where a driver works.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/plugin/conformance.h"

namespace weft::plugin::conformance {

// What this machine's CUDA driver says, probed in a child process (so nothing stays loaded).
struct CudaDriverProbe {
  bool present = false;  // libcuda.so.1 loads and cuInit(0) succeeds (or finds no device)
  std::string why;       // "libcuda.so.1: not found", "cuInit(0) returned 34 (CUDA_ERROR_STUB_LIBRARY: …)", "driver 13000"
};
CudaDriverProbe probeCudaDriver();

// The decision for one run: whether the stand-in goes in front of the plugin, from where, why.
struct CudaStandinPlan {
  bool use = false;
  std::string dir;  // the folder holding the stand-in's libraries
  std::string why;  // one phrase for the INFO line and net-test's header
};
// Probes once per process (cached) and finds the stand-in in `pluginDirs`' "cuda-standin"
// folders. kOn without a stand-in built is an error; kAuto without one plans no stand-in and says so.
Result<CudaStandinPlan> planCudaStandin(CudaStandin mode, const std::vector<std::string>& pluginDirs);

// The stand-in's libraries, in load order (the driver first: the runtime resolves it by path).
const std::vector<std::string>& cudaStandinLibraries();

// Loads the stand-in into this process (RTLD_GLOBAL, never unloaded). For the check's child.
Status loadCudaStandin(const std::string& dir);

}  // namespace weft::plugin::conformance
