// Runs one check in a child process: sets the check's environment, puts the CUDA stand-in in
// front of the plugin when planned, loads the plugin, captures WARN lines, and reports the
// outcome and notes through a pipe. The parent enforces the time limit and turns a crash or a
// hang into a FAIL with the reason (a NOTE for a strict extra without --strict).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/plugin/conformance_checks.h"
#include "core/plugin/conformance_support.h"
#include "core/plugin/cuda_standin.h"
#include "core/plugin/library.h"

namespace weft::plugin::conformance {
namespace {

using CheckFn = std::string (*)(const Plugin&, const Options&);
struct Entry {
  CheckInfo info;
  CheckFn fn;
};

const std::vector<Entry>& registry() {
  // First what NCCL 2.28 does with a plugin, then weft's strict extras.
  static const std::vector<Entry> kChecks = {
      {{"init", "init and finalize for two communicators; devices stable", false}, checkInit},
      {{"properties", "every device's properties are ones NCCL can use", false}, checkProperties},
      {{"handle", "listen writes its handle within 128 bytes", false}, checkHandle},
      {{"connect", "non-blocking connect/accept, listen closed after accept", false}, checkConnect},
      {{"sizes", "messages of 0 B to 1 GiB arrive intact", false}, checkSizes},
      {{"tags", "tagged sends and receives match in posting order", false}, checkTags},
      {{"multi-recv", "one irecv groups several tagged receives", false}, checkMultiRecv},
      {{"registration", "regMr/deregMr on both comms, any order", false}, checkRegistration},
      {{"in-flight", "up to 8 requests in flight per comm, posted as NCCL's proxies do", false}, checkInFlight},
      {{"interleaved", "several connections driven from threads at once", false}, checkInterleaved},
      {{"close-order", "closing as NCCL does, also with requests pending (abort)", false}, checkCloseOrder},
      {{"peer-death", "a killed peer process makes pending requests fail, never hang", false}, checkPeerDeath},
      {{"tags-any-order", "messages match receives by tag, complete out of order", true}, checkTagsAnyOrder},
      {{"in-flight-eager", "16 sends accepted before any receive is posted", true}, checkInFlightEager},
      {{"listen-reuse", "several connections through one listen comm", true}, checkListenReuse},
      {{"bad-arguments", "bad devices, counts and memory types return errors", true}, checkBadArguments},
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

// The WARN lines the plugin logged on its own: with --strict the first fails the check;
// otherwise they become a note, since NCCL prints them and goes on.
void judgeWarnLines(CheckResult& r, const std::vector<std::string>& unexpected, bool strict) {
  if (r.outcome != Outcome::kPass || unexpected.empty()) return;
  if (strict) {
    r = CheckResult{Outcome::kFail, "strict: unexpected WARN: " + unexpected[0]};
    return;
  }
  r.notes.push_back(strprintf("the plugin logged %zu WARN line%s, which NCCL prints and goes on from; the first: %s",
                              unexpected.size(), unexpected.size() == 1 ? "" : "s", unexpected[0].c_str()));
}

// Runs in the child. Returns what to report.
CheckResult runHere(const std::string& plugin, const Entry& entry, const Options& options, const CudaStandinPlan& cuda,
                    int out) {
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
  setStrict(options.strict);
  CheckResult r;
  try {
    if (cuda.use) requireOk(loadCudaStandin(cuda.dir), "loading weft's CUDA stand-in");
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
  // plugin was unloaded, so that a plugin leaking per-comm state fails the check. Not after
  // peer-death, which forks its halves while the plugin is loaded: libfabric 1.17 leaves 63 bytes
  // in the forking process (3 blocks allocated inside libfabric, seen only under this check), which
  // are not the plugin's per-comm state; the halves' own processes end with _exit.
  bool forked = std::string(entry.info.name) == "peer-death";
  if (r.outcome == Outcome::kPass && !forked && __lsan_do_recoverable_leak_check() != 0) {
    r = CheckResult{Outcome::kFail, "LeakSanitizer found leaks (details on stderr)"};
  }
#endif
  if (r.outcome == Outcome::kPass) r.notes = takeNotes();
  std::lock_guard<std::mutex> lock(m);
  judgeWarnLines(r, unexpected, options.strict);
  return r;
}

// The result travels to the parent as NUL-separated fields: outcome, reason, notes.
std::string serialize(const CheckResult& r) {
  std::string out = outcomeName(r.outcome);
  out += '\0';
  out += r.reason;
  for (const std::string& n : r.notes) {
    out += '\0';
    out += n;
  }
  return out;
}

CheckResult parse(const std::string& text) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    size_t end = text.find('\0', start);
    fields.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  CheckResult r;
  r.outcome = fields[0] == "PASS" ? Outcome::kPass : fields[0] == "SKIP" ? Outcome::kSkip : Outcome::kFail;
  if (fields.size() > 1) r.reason = fields[1];
  for (size_t i = 2; i < fields.size(); ++i) r.notes.push_back(fields[i]);
  return r;
}

// Runs `body` in a child process of its own group, with the check's environment, and returns
// what it wrote; the parent enforces the time limit.
struct ChildRun {
  std::string text;
  bool timedOut = false;
  int status = 0;
  std::string error;  // fork or pipe failed
};

[[noreturn]] void childMain(const std::function<std::string()>& body, const Options& options, int resultFd) {
  setpgid(0, 0);  // the parent kills the whole group, peers included, on a timeout
  for (const auto& [k, v] : options.env) setenv(k.c_str(), v.c_str(), 1);
  std::string msg = body();
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

ChildRun runInChild(const std::function<std::string()>& body, const Options& options) {
  ChildRun run;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    run.error = "pipe(): " + std::string(std::strerror(errno));
    return run;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    run.error = "fork(): " + std::string(std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return run;
  }
  if (pid == 0) {
    close(fds[0]);
    childMain(body, options, fds[1]);
  }
  setpgid(pid, pid);  // also here: the child may not have run its own setpgid yet
  close(fds[1]);
  pollfd pfd{fds[0], POLLIN, 0};
  run.timedOut = poll(&pfd, 1, static_cast<int>(options.timeoutSeconds * 1000)) == 0;
  if (run.timedOut) kill(-pid, SIGKILL);
  if (!run.timedOut) run.text = readAll(fds[0]);
  close(fds[0]);
  waitpid(pid, &run.status, 0);
  kill(-pid, SIGKILL);  // any peer the check left behind
  return run;
}

// The CUDA stand-in plan of this process, named in one INFO line the first time it is made.
Result<CudaStandinPlan> cudaPlan(CudaStandin mode) {
  auto plan = planCudaStandin(mode, defaultPluginDirs());
  static std::once_flag once;
  if (plan.isOk() && plan->use) {
    std::call_once(once, [&] {
      WEFT_INFO(log::kNet | log::kInit,
                "NET/Plugin: weft's CUDA stand-in %s goes in front of the plugin under test: %s; it is a CUDA driver "
                "with no GPU, so the plugin uses host memory",
                plan->dir.c_str(), plan->why.c_str());
    });
  }
  return plan;
}

}  // namespace

const char* outcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "PASS";
    case Outcome::kSkip: return "SKIP";
    case Outcome::kNote: return "NOTE";
    case Outcome::kFail: break;
  }
  return "FAIL";
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
  auto cuda = cudaPlan(options.cuda);
  if (!cuda.isOk()) return {Outcome::kFail, cuda.status().message()};
  auto start = std::chrono::steady_clock::now();
  const CudaStandinPlan plan = *cuda;
  ChildRun run = runInChild([&] { return serialize(runHere(plugin, *entry, options, plan, dup(1))); }, options);
  CheckResult r;
  if (!run.error.empty()) {
    r = {Outcome::kFail, run.error};
  } else if (run.timedOut) {
    r = {Outcome::kFail, strprintf("timed out after %.0f s: the plugin blocked or never completed (%s)", options.timeoutSeconds,
                                   nccl::kHangs)};
  } else if (WIFSIGNALED(run.status)) {
    r = {Outcome::kFail, strprintf("crashed with signal %d (%s) (NCCL: its process would crash too)", WTERMSIG(run.status),
                                   strsignal(WTERMSIG(run.status)))};
  } else if (run.text.empty()) {
    r = {Outcome::kFail, "the check process exited without a result"};
  } else {
    r = parse(run.text);
  }
  // A strict extra asks for more than NCCL does: without --strict its failure is only a note.
  if (entry->info.strictExtra && !options.strict && r.outcome == Outcome::kFail) r.outcome = Outcome::kNote;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

Result<PluginIdentity> identifyPlugin(const std::string& plugin, const Options& options) {
  WEFT_ASSIGN_OR_RETURN(CudaStandinPlan cuda, cudaPlan(options.cuda));
  ChildRun run = runInChild(
      [&] {
        if (cuda.use) {
          Status s = loadCudaStandin(cuda.dir);
          if (!s.isOk()) return "!" + s.message();
        }
        auto loaded = loadNetPlugin(plugin, NetLoaderOptions{});
        if (!loaded.isOk()) return "!" + loaded.status().message();
        return std::string((*loaded)->api().name()) + '\0' + (*loaded)->path() + '\0' + (*loaded)->symbol();
      },
      options);
  if (!run.error.empty()) return systemError(run.error);
  if (run.timedOut || WIFSIGNALED(run.status) || run.text.empty()) {
    return internalError("loading " + plugin + " crashed or hung (a constructor of the library or of what it links)");
  }
  if (run.text[0] == '!') return internalError(run.text.substr(1));
  PluginIdentity id;
  size_t a = run.text.find('\0'), b = run.text.find('\0', a + 1);
  id.name = run.text.substr(0, a);
  id.path = run.text.substr(a + 1, b - a - 1);
  id.symbol = run.text.substr(b + 1);
  id.cuda = cuda.use ? "weft's CUDA stand-in (" + cuda.dir + "): " + cuda.why : "no stand-in: " + cuda.why;
  return id;
}

}  // namespace weft::plugin::conformance
