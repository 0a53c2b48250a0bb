// Runs one check in a child process: sets the check's environment, loads the plugin, captures
// WARN lines, and reports the outcome through a pipe. The parent enforces the time limit and
// turns a crash or a hang into a FAIL with the reason.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/plugin/conformance_checks.h"
#include "core/plugin/conformance_support.h"

namespace weft::plugin::conformance {
namespace {

using CheckFn = std::string (*)(const Plugin&, const Options&);
struct Entry {
  CheckInfo info;
  CheckFn fn;
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> kChecks = {
      {{"init", "init and finalize twice; logs only through the host logger"}, checkInit},
      {{"properties", "device count and every device's properties are sane"}, checkProperties},
      {{"handle", "listen writes its handle within 128 bytes"}, checkHandle},
      {{"connect", "non-blocking connect/accept, several connections per listen comm"}, checkConnect},
      {{"sizes", "messages of 0 B to 1 GiB arrive intact"}, checkSizes},
      {{"tags", "messages match receives by tag, complete out of order"}, checkTags},
      {{"multi-recv", "one irecv groups several tagged receives"}, checkMultiRecv},
      {{"registration", "regMr/deregMr on both comms, any order"}, checkRegistration},
      {{"in-flight", "many requests in flight, sends before receives"}, checkInFlight},
      {{"interleaved", "several connections driven from threads at once"}, checkInterleaved},
      {{"close-order", "closing listen/recv/send comms in any order, with requests pending"}, checkCloseOrder},
      {{"bad-arguments", "bad devices, counts and memory types return errors"}, checkBadArguments},
      {{"peer-death", "a killed peer process makes pending requests fail, never hang"}, checkPeerDeath},
  };
  return kChecks;
}

// WARN lines the running check allows (child process only).
std::mutex gAllowedMutex;
std::vector<std::string> gAllowed;

bool allowed(const std::string& line) {
  std::lock_guard<std::mutex> lock(gAllowedMutex);
  for (const std::string& a : gAllowed)
    if (line.find(a) != std::string::npos) return true;
  return false;
}

// Runs in the child. Returns what to report.
CheckResult runHere(const std::string& plugin, const Entry& entry, const Options& options, int out) {
  log::Logger& logger = log::processLogger();
  const log::Level shown = logger.options().level;
  std::vector<std::string> unexpected;
  std::mutex m;
  log::Options lo = logger.options();
  if (static_cast<int>(lo.level) < static_cast<int>(log::Level::kWarn)) lo.level = log::Level::kWarn;
  lo.file.clear();
  logger.setOptions(lo);
  logger.setSink([&, shown, out](log::Level level, uint64_t, std::string_view line) {
    if (static_cast<int>(level) <= static_cast<int>(shown)) {
      std::string text = std::string(line) + "\n";
      (void)!write(out, text.data(), text.size());  // the real stdout, even while a check traps it
    }
    if (level == log::Level::kWarn && !allowed(std::string(line))) {
      std::lock_guard<std::mutex> lock(m);
      unexpected.emplace_back(line);
    }
  });
  CheckResult r;
  try {
    NetLoaderOptions lopts;
    auto loaded = loadNetPlugin(plugin, lopts);
    if (!loaded.isOk()) throw CheckFailed("load: " + loaded.status().message());
    r.reason = entry.fn(*loaded, options);
    r.outcome = Outcome::kPass;
  } catch (const CheckSkipped& e) {
    r = CheckResult{Outcome::kSkip, e.what()};
  } catch (const std::exception& e) {
    r = CheckResult{Outcome::kFail, e.what()};
  }
#if defined(__SANITIZE_ADDRESS__)
  // The child ends with _exit, which skips LeakSanitizer's exit check: run it here, after the
  // plugin was unloaded, so that a plugin leaking per-comm state fails the check.
  if (r.outcome == Outcome::kPass && __lsan_do_recoverable_leak_check() != 0) {
    r = CheckResult{Outcome::kFail, "LeakSanitizer found leaks (details on stderr)"};
  }
#endif
  std::lock_guard<std::mutex> lock(m);
  if (r.outcome == Outcome::kPass && !unexpected.empty()) r = CheckResult{Outcome::kFail, "unexpected WARN: " + unexpected[0]};
  return r;
}

[[noreturn]] void childMain(const std::string& plugin, const Entry& entry, const Options& options, int resultFd) {
  setpgid(0, 0);  // the parent kills the whole group, peers included, on a timeout
  for (const auto& [k, v] : options.env) setenv(k.c_str(), v.c_str(), 1);
  int stdoutCopy = dup(1);
  CheckResult r = runHere(plugin, entry, options, stdoutCopy);
  std::string msg = std::string(outcomeName(r.outcome)) + "\n" + r.reason;
  (void)!write(resultFd, msg.data(), msg.size());
  _exit(0);
}

std::string readAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

CheckResult parse(const std::string& text) {
  size_t nl = text.find('\n');
  std::string head = text.substr(0, nl);
  std::string reason = nl == std::string::npos ? "" : text.substr(nl + 1);
  if (head == "PASS") return {Outcome::kPass, reason};
  if (head == "SKIP") return {Outcome::kSkip, reason};
  return {Outcome::kFail, reason};
}

}  // namespace

const char* outcomeName(Outcome o) {
  return o == Outcome::kPass ? "PASS" : o == Outcome::kSkip ? "SKIP" : "FAIL";
}

const std::vector<CheckInfo>& checks() {
  static const std::vector<CheckInfo> kInfo = [] {
    std::vector<CheckInfo> v;
    for (const Entry& e : registry()) v.push_back(e.info);
    return v;
  }();
  return kInfo;
}

void expectWarn(const std::string& fragment) {
  std::lock_guard<std::mutex> lock(gAllowedMutex);
  gAllowed.push_back(fragment);
}

CheckResult runCheck(const std::string& plugin, const std::string& name, const Options& options) {
  const Entry* entry = nullptr;
  for (const Entry& e : registry())
    if (name == e.info.name) entry = &e;
  if (entry == nullptr) return {Outcome::kFail, "no check named " + name};
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {Outcome::kFail, "pipe(): " + std::string(std::strerror(errno))};
  auto start = std::chrono::steady_clock::now();
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return {Outcome::kFail, "fork(): " + std::string(std::strerror(errno))};
  if (pid == 0) {
    close(fds[0]);
    childMain(plugin, *entry, options, fds[1]);
  }
  setpgid(pid, pid);  // also here: the child may not have run its own setpgid yet
  close(fds[1]);
  pollfd pfd{fds[0], POLLIN, 0};
  bool timedOut = poll(&pfd, 1, static_cast<int>(options.timeoutSeconds * 1000)) == 0;
  if (timedOut) kill(-pid, SIGKILL);
  std::string text = timedOut ? "" : readAll(fds[0]);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  kill(-pid, SIGKILL);  // any peer the check left behind
  CheckResult r;
  if (timedOut) r = {Outcome::kFail, strprintf("timed out after %.0f s: the plugin blocked or never completed", options.timeoutSeconds)};
  else if (WIFSIGNALED(status)) r = {Outcome::kFail, strprintf("crashed with signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)))};
  else if (text.empty()) r = {Outcome::kFail, "the check process exited without a result"};
  else r = parse(text);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace weft::plugin::conformance
