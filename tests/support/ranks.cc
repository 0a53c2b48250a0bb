#include "tests/support/ranks.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace weft::testing {

namespace {

struct SharedId {
  std::atomic<int> ready;
  weft_unique_id_t id;
  int result;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

[[noreturn]] void childMain(const JobSpec& spec, int rank, SharedId* shared,
                            const std::function<int(int, const weft_unique_id_t&)>& fn) {
  for (int key : {-1, rank}) {
    auto it = spec.env.find(key);
    if (it == spec.env.end()) continue;
    for (const auto& [name, value] : it->second) setenv(name.c_str(), value.c_str(), 1);
  }
  weft_unique_id_t id{};
  if (spec.shareId) {
    if (rank == 0) {
      shared->result = weft_get_unique_id(&shared->id);
      if (shared->result != weftSuccess) std::fprintf(stderr, "weft_get_unique_id: %s\n", weft_last_error());
      shared->ready.store(1);
    }
    auto until = std::chrono::steady_clock::now() + spec.deadline;
    while (shared->ready.load() == 0) {
      if (std::chrono::steady_clock::now() > until) std::exit(90);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (shared->result != weftSuccess) std::exit(91);
    id = shared->id;
  }
  int rc = fn(rank, id);
  std::fflush(stdout);
  std::fflush(stderr);
  // LeakSanitizer cannot judge a child of a multi-threaded process (the parent's other threads
  // are gone but their stacks were its roots): such a child leaves without the leak check.
  if (spec.parentThreads > 1) _exit(rc);
  std::exit(rc);
}

int threadCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

}  // namespace

std::vector<std::vector<RankOutcome>> runJobs(const std::vector<Job>& jobs) {
  // Every fork happens here, on one thread: a child forked while another thread of this process
  // held a lock (the sanitizer's allocator, stdio) would inherit it locked and hang.
  int parentThreads = threadCount();
  if (const char* debug = std::getenv("WEFT_TEST_THREADS"); debug != nullptr && parentThreads > 1)
    std::fprintf(stderr, "runJob: the parent has %d threads\n", parentThreads);
  struct Running {
    JobSpec spec;
    SharedId* shared = nullptr;
    std::vector<RankOutcome> out;
    std::vector<std::string> files;
    std::vector<bool> reaped;
    std::chrono::steady_clock::time_point until;
    int left = 0;
  };
  std::vector<Running> run(jobs.size());
  std::fflush(stdout);
  std::fflush(stderr);
  for (size_t j = 0; j < jobs.size(); ++j) {
    Running& job = run[j];
    job.spec = jobs[j].spec;
    job.spec.parentThreads = parentThreads;
    void* mem = mmap(nullptr, sizeof(SharedId), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    job.shared = new (mem) SharedId{};
    job.out.resize(static_cast<size_t>(job.spec.nranks));
    job.reaped.assign(job.out.size(), false);
    job.left = job.spec.nranks;
    for (int r = 0; r < job.spec.nranks; ++r) {
      char path[] = "/tmp/weft-rank-XXXXXX";
      int fd = mkstemp(path);
      job.files.emplace_back(path);
      pid_t pid = fork();
      if (pid == 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        childMain(job.spec, r, job.shared, jobs[j].fn);
      }
      close(fd);
      job.out[static_cast<size_t>(r)].pid = pid;
    }
    job.until = std::chrono::steady_clock::now() + job.spec.deadline;
  }
  auto busy = [&] {
    for (const Running& job : run)
      if (job.left > 0) return true;
    return false;
  };
  while (busy()) {
    bool any = false;
    for (Running& job : run) {
      if (job.left == 0) continue;
      // Only this job's children: the test process may have others.
      for (size_t r = 0; r < job.out.size(); ++r) {
        if (job.reaped[r]) continue;
        int status = 0;
        if (waitpid(job.out[r].pid, &status, WNOHANG) != job.out[r].pid) continue;
        if (WIFEXITED(status)) job.out[r].exitCode = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) job.out[r].signal = WTERMSIG(status);
        job.reaped[r] = true;
        any = true;
        --job.left;
      }
      if (job.left > 0 && std::chrono::steady_clock::now() > job.until) {
        for (size_t r = 0; r < job.out.size(); ++r) {
          RankOutcome& o = job.out[r];
          if (job.reaped[r]) continue;
          o.timedOut = true;
          kill(o.pid, SIGKILL);
          waitpid(o.pid, nullptr, 0);
        }
        job.left = 0;
      }
    }
    if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::vector<std::vector<RankOutcome>> outs;
  for (Running& job : run) {
    for (size_t r = 0; r < job.out.size(); ++r) {
      job.out[r].output = readFile(job.files[r]);
      unlink(job.files[r].c_str());
    }
    munmap(job.shared, sizeof(SharedId));
    outs.push_back(std::move(job.out));
  }
  return outs;
}

std::vector<RankOutcome> runJob(const JobSpec& spec, const std::function<int(int, const weft_unique_id_t&)>& fn) {
  return runJobs({Job{spec, fn}}).front();
}

std::string failures(const std::vector<RankOutcome>& out) {
  std::string s;
  for (size_t r = 0; r < out.size(); ++r) {
    const RankOutcome& o = out[r];
    if (o.exitCode == 0) continue;
    s += "rank " + std::to_string(r) + ": ";
    if (o.timedOut) s += "TIMED OUT (killed)";
    else if (o.signal != 0) s += "killed by signal " + std::to_string(o.signal);
    else s += "exit " + std::to_string(o.exitCode);
    s += "\n" + o.output + "\n";
  }
  return s;
}

std::vector<std::string> shmLeftovers(pid_t pid) {
  std::vector<std::string> left;
  std::string prefix = "weft-" + std::to_string(pid) + "-";
  DIR* d = opendir("/dev/shm");
  if (d == nullptr) return left;
  while (dirent* e = readdir(d))
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) left.emplace_back(e->d_name);
  closedir(d);
  return left;
}

void expectNoLeftovers(const std::vector<RankOutcome>& out) {
  for (const RankOutcome& o : out) {
    std::vector<std::string> left = shmLeftovers(o.pid);
    EXPECT_TRUE(left.empty()) << "pid " << o.pid << " left " << left.size() << " entries in /dev/shm, e.g. /dev/shm/"
                              << (left.empty() ? "" : left[0]);
  }
}

SharedCounters::SharedCounters(int n) : n_(n) {
  mem_ = mmap(nullptr, sizeof(std::atomic<int64_t>) * static_cast<size_t>(n), PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  for (int i = 0; i < n; ++i) new (static_cast<std::atomic<int64_t>*>(mem_) + i) std::atomic<int64_t>(0);
}
SharedCounters::~SharedCounters() { munmap(mem_, sizeof(std::atomic<int64_t>) * static_cast<size_t>(n_)); }
int64_t SharedCounters::add(int i, int64_t v) const { return (static_cast<std::atomic<int64_t>*>(mem_) + i)->fetch_add(v) + v; }
int64_t SharedCounters::get(int i) const { return (static_cast<std::atomic<int64_t>*>(mem_) + i)->load(); }
void SharedCounters::set(int i, int64_t v) const { (static_cast<std::atomic<int64_t>*>(mem_) + i)->store(v); }
bool SharedCounters::waitFor(int i, int64_t n, std::chrono::seconds limit) const {
  auto until = std::chrono::steady_clock::now() + limit;
  while (get(i) < n) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}
bool SharedCounters::arriveAndWait(int i, int64_t n, std::chrono::seconds limit) const {
  add(i);
  return waitFor(i, n, limit);
}

}  // namespace weft::testing
