#include "tools/weft/perf_launch.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

namespace weft::tool::perf {
namespace {

const char* resultName(weft_result_t r) {
  switch (r) {
    case weftSuccess:
      return "weftSuccess";
    case weftUnhandledCudaError:
      return "weftUnhandledCudaError";
    case weftSystemError:
      return "weftSystemError";
    case weftInternalError:
      return "weftInternalError";
    case weftInvalidArgument:
      return "weftInvalidArgument";
    case weftInvalidUsage:
      return "weftInvalidUsage";
    case weftRemoteError:
      return "weftRemoteError";
    case weftInProgress:
      return "weftInProgress";
  }
  return "unknown result";
}

// A closed descriptor on every path.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

bool readAll(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool writeAll(int fd, const void* buf, size_t n) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t put = ::write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

std::optional<long> parseInt(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return v;
}

// The launchers' variables, in the order they are trusted.
struct EnvSource {
  const char* rank;
  const char* size;
  const char* name;
};
constexpr EnvSource kEnvSources[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK/SIZE"},
    {"PMI_RANK", "PMI_SIZE", "PMI_RANK/PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_PROCID/SLURM_NTASKS"},
    {"RANK", "WORLD_SIZE", "RANK/WORLD_SIZE"},
};

// NCCL_COMM_ID, or one made from MASTER_ADDR and MASTER_PORT.
Status ensureRendezvous(const Ranks& r) {
  if (const char* id = std::getenv("NCCL_COMM_ID"); id != nullptr && *id != '\0') return Status::ok();
  const char* addr = std::getenv("MASTER_ADDR");
  if (addr == nullptr || *addr == '\0') {
    return invalidUsage(std::to_string(r.nranks) + " ranks (" + r.source +
                        ") need a rendezvous that every rank knows: set NCCL_COMM_ID=<rank 0's host>:<free port> "
                        "(or MASTER_ADDR and MASTER_PORT) in every rank's environment");
  }
  auto port = parseInt(std::getenv("MASTER_PORT"));
  if (!port || *port <= 0 || *port > 65535)
    return invalidUsage("MASTER_ADDR is set but MASTER_PORT is not a port number");
  // torchrun's agent serves its own TCP store on MASTER_PORT and shares it with the workers.
  const char* agentStore = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  if (agentStore != nullptr && std::strcmp(agentStore, "True") == 0) ++*port;
  std::string host = addr;
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";  // IPv6
  std::string commId = host + ":" + std::to_string(*port);
  if (::setenv("NCCL_COMM_ID", commId.c_str(), 1) != 0) return errnoError("setenv NCCL_COMM_ID", errno);
  return Status::ok();
}

}  // namespace

Status weftError(std::string_view call, weft_result_t result) {
  std::string message = std::string(call) + " returned " + resultName(result) + " (" + weft_result_string(result) + ")";
  const char* detail = weft_last_error();
  if (detail != nullptr && *detail != '\0') message += std::string(": ") + detail;
  Code code =
      result >= weftUnhandledCudaError && result <= weftInProgress ? static_cast<Code>(result) : Code::kInternalError;
  return Status(code, std::move(message));
}

Result<Ranks> forkLocalRanks(int np) {
  Ranks out;
  out.nranks = np;
  out.source = "--np";
  std::fflush(stdout);  // nothing buffered may be printed twice
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  std::vector<Fd> writers;
  for (int r = 1; r < np; ++r) {
    int fds[2];
    if (::pipe(fds) != 0) {
      Status s = errnoError("pipe", errno);
      writers.clear();  // the children forked so far read EOF and exit
      waitForChildren(out.children, 0);
      return s;
    }
    Fd reader(fds[0]), writer(fds[1]);
    pid_t pid = ::fork();
    if (pid < 0) {
      Status s = errnoError("fork", errno);
      writers.clear();
      waitForChildren(out.children, 0);
      return s;
    }
    if (pid == 0) {
      writers.clear();
      writer.reset();
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) std::_Exit(1);                            // the parent died before prctl
      if (!readAll(reader.get(), &out.id, sizeof(out.id))) std::_Exit(1);  // rank 0 failed and said why
      out.rank = r;
      out.children.clear();
      return out;
    }
    writers.push_back(std::move(writer));
    out.children.push_back(pid);
  }
  weft_result_t res = weft_get_unique_id(&out.id);
  if (res != weftSuccess) {
    Status s = weftError("weft_get_unique_id", res);
    writers.clear();
    waitForChildren(out.children, 0);
    return s;
  }
  // A child that died already must not kill this process with SIGPIPE.
  struct sigaction ignore = {}, previous = {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  for (auto& w : writers) {
    writeAll(w.get(), &out.id, sizeof(out.id));  // a child that is gone is reported by waitForChildren
    w.reset();
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
  return out;
}

Result<Ranks> ranksFromEnvironment() {
  Ranks out;
  out.source = "one rank";
  for (const auto& src : kEnvSources) {
    const char* rankText = std::getenv(src.rank);
    if (rankText == nullptr) continue;
    auto rank = parseInt(rankText);
    auto size = parseInt(std::getenv(src.size));
    if (!rank || !size || *size < 1 || *rank < 0 || *rank >= *size) {
      return invalidUsage(std::string(src.rank) + "=" + rankText + " and " + src.size + "=" +
                          (std::getenv(src.size) ? std::getenv(src.size) : "(unset)") + " do not name a rank of a job");
    }
    out.rank = static_cast<int>(*rank);
    out.nranks = static_cast<int>(*size);
    out.source = src.name;
    break;
  }
  if (out.nranks > 1) WEFT_TRY(ensureRendezvous(out));
  weft_result_t res = weft_get_unique_id(&out.id);
  if (res != weftSuccess) return weftError("weft_get_unique_id", res);
  return out;
}

std::optional<std::string> launcherJob() {
  for (const auto& src : kEnvSources) {
    const char* size = std::getenv(src.size);
    if (std::getenv(src.rank) == nullptr || size == nullptr) continue;
    auto n = parseInt(size);
    if (n && *n > 1) return std::string(src.size) + "=" + size;
  }
  return std::nullopt;
}

bool waitForChildren(const std::vector<pid_t>& children, double graceSeconds) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(graceSeconds < 0 ? 0 : graceSeconds);
  bool ok = true;
  for (size_t i = 0; i < children.size(); ++i) {
    const int rank = static_cast<int>(i) + 1;
    int status = 0;
    bool block = graceSeconds < 0;
    for (;;) {
      pid_t got = ::waitpid(children[i], &status, block ? 0 : WNOHANG);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        status = -1;
        break;
      }
      if (got == children[i]) break;
      if (Clock::now() >= deadline) {
        ::kill(children[i], SIGKILL);
        block = true;  // reap it
        continue;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (status == -1) {
      ok = false;
    } else if (WIFSIGNALED(status)) {
      ok = false;
      std::fprintf(stderr, "weft perf: rank %d (pid %d) was killed by signal %d (%s)\n", rank,
                   static_cast<int>(children[i]), WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ok = false;
    }
  }
  return ok;
}

}  // namespace weft::tool::perf
