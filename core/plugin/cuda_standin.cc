#include "core/plugin/cuda_standin.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::plugin::conformance {
namespace {

constexpr const char* kStandinFolder = "weft-cuda-standin";

const char* cuResultMeaning(int code) {
  switch (code) {
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY: the CUDA toolkit's stub libcuda, not a driver";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 999: return "CUDA_ERROR_UNKNOWN";
    default: return "a CUDA error";
  }
}

// Runs in the probe's child: what to report, one line.
std::string probeHere() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    std::string text = err ? err : "dlopen failed";
    if (text.find("No such file or directory") != std::string::npos) return "0 libcuda.so.1: not found";
    return "0 libcuda.so.1: " + text;
  }
  using InitFn = int (*)(unsigned);
  using VersionFn = int (*)(int*);
  auto cuInit = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto cuDriverGetVersion = reinterpret_cast<VersionFn>(dlsym(lib, "cuDriverGetVersion"));
  if (cuInit == nullptr || cuDriverGetVersion == nullptr) return "0 libcuda.so.1 has no cuInit or cuDriverGetVersion";
  int rc = cuInit(0);
  if (rc != 0 && rc != 100) return strprintf("0 cuInit(0) returned %d (%s)", rc, cuResultMeaning(rc));
  int version = 0;
  (void)cuDriverGetVersion(&version);
  return strprintf("1 driver %d%s", version, rc == 100 ? ", no GPU" : "");
}

CudaDriverProbe probeInChild() {
  int fds[2];
  if (pipe(fds) != 0) return {false, std::string("pipe(): ") + std::strerror(errno)};
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {false, std::string("fork(): ") + std::strerror(errno)};
  }
  if (pid == 0) {
    close(fds[0]);
    std::string text = probeHere();
    (void)!write(fds[1], text.data(), text.size());
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  pollfd pfd{fds[0], POLLIN, 0};
  char buf[512];
  // cuInit on a real driver takes up to seconds; a driver that hangs counts as none.
  while (poll(&pfd, 1, 30000) > 0) {
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  if (text.size() < 2) return {false, "the CUDA probe gave no answer (it crashed or hung in libcuda.so.1)"};
  return {text[0] == '1', text.substr(2)};
}

std::string findStandinDir(const std::vector<std::string>& pluginDirs) {
  for (const std::string& d : pluginDirs) {
    std::filesystem::path dir = std::filesystem::path(d) / kStandinFolder;
    std::error_code ec;
    if (std::filesystem::exists(dir / "libcuda.so.1", ec)) return dir.string();
  }
  return {};
}

}  // namespace

CudaDriverProbe probeCudaDriver() {
  static std::once_flag once;
  static CudaDriverProbe probe;
  std::call_once(once, [] { probe = probeInChild(); });
  return probe;
}

const std::vector<std::string>& cudaStandinLibraries() {
  static const std::vector<std::string> kLibs = {"libcuda.so.1", "libcudart.so", "libcudart.so.12", "libcudart.so.13"};
  return kLibs;
}

Result<CudaStandinPlan> planCudaStandin(CudaStandin mode, const std::vector<std::string>& pluginDirs) {
  CudaStandinPlan plan;
  if (mode == CudaStandin::kOff) {
    plan.why = "off (--cuda-standin off)";
    return plan;
  }
  plan.dir = findStandinDir(pluginDirs);
  if (mode == CudaStandin::kOn) {
    if (plan.dir.empty()) return invalidUsage("--cuda-standin on: weft's CUDA stand-in is not built or installed here");
    plan.use = true;
    plan.why = "asked for (--cuda-standin on)";
    return plan;
  }
  CudaDriverProbe probe = probeCudaDriver();
  if (probe.present) {
    plan.why = "not needed: CUDA " + probe.why;
    return plan;
  }
  if (plan.dir.empty()) {
    plan.why = "no CUDA driver here (" + probe.why + ") and weft's CUDA stand-in is not built: plugins that need CUDA fail init";
    return plan;
  }
  plan.use = true;
  plan.why = "no CUDA driver here (" + probe.why + ")";
  return plan;
}

Status loadCudaStandin(const std::string& dir) {
  for (const std::string& name : cudaStandinLibraries()) {
    std::string path = (std::filesystem::path(dir) / name).string();
    dlerror();
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* err = dlerror();
      return systemError("CUDA stand-in " + path + ": " + (err ? err : "dlopen failed"));
    }
  }
  return Status::ok();
}

}  // namespace weft::plugin::conformance
