#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/comm/comm_bench.h"

namespace weft::bench::comm {
namespace {

using Clock = std::chrono::steady_clock;

struct SharedId {
  weft_unique_id_t id;
  int result;
};

// Pipes the parent and its ranks share: rank 0 says the id is ready, the parent releases all.
struct StartPipes {
  int ready[2] = {-1, -1};
  int go[2] = {-1, -1};
  StartPipes() {
    if (pipe(ready) != 0 || pipe(go) != 0) {
      std::perror("pipe");
      std::exit(2);
    }
  }
  ~StartPipes() {
    for (int fd : {ready[0], ready[1], go[0], go[1]})
      if (fd >= 0) close(fd);
  }
};

// WEFT_BENCH_BIND=auto binds rank `rank` of `n` as mpirun binds its ranks by default (Open MPI
// 4.1: to a core for 2 ranks or fewer, to the package above that: no binding on a one-socket
// host), so weft and its Open MPI baseline run with the same placement; =core binds every rank to
// one CPU (round robin over the allowed CPUs); unset or =none leaves the ranks where the
// scheduler puts them (NCCL binds no host thread to one core).
void bindRank(int rank, int n) {
  const char* how = std::getenv("WEFT_BENCH_BIND");
  std::string mode = how != nullptr ? how : "none";
  if (mode == "none" || (mode == "auto" && n > 2)) return;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.empty()) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[static_cast<size_t>(rank) % cpus.size()], &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) std::perror("sched_setaffinity");
}

[[noreturn]] void childMain(int rank, int n, std::chrono::seconds timeout, SharedId* shared, StartPipes& p,
                            const std::function<int(int, const weft_unique_id_t&)>& fn) {
  bindRank(rank, n);
  // A backstop: the parent kills us at the deadline, and this fires if the parent is gone.
  alarm(static_cast<unsigned>(timeout.count()) + 5);
  close(p.ready[0]);
  close(p.go[1]);
  if (rank == 0) {
    shared->result = weft_get_unique_id(&shared->id);
    if (shared->result != weftSuccess) std::fprintf(stderr, "weft_get_unique_id: %s\n", weft_last_error());
    char one = 1;
    if (write(p.ready[1], &one, 1) != 1) _exit(90);
  }
  char go = 0;
  if (read(p.go[0], &go, 1) != 1 || shared->result != weftSuccess) _exit(91);
  int rc = fn(rank, shared->id);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(rc);
}

bool waitReadable(int fd, Clock::time_point until) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  pollfd pfd{fd, POLLIN, 0};
  return left > 0 && poll(&pfd, 1, static_cast<int>(left)) == 1;
}

void removeShm(pid_t pid) {
  std::string prefix = "weft-" + std::to_string(pid) + "-";
  DIR* d = opendir("/dev/shm");
  if (d == nullptr) return;
  std::vector<std::string> names;  // unlinked after the scan: tmpfs skips entries unlinked during it
  while (dirent* e = readdir(d))
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) names.push_back("/dev/shm/" + std::string(e->d_name));
  closedir(d);
  for (const std::string& n : names) unlink(n.c_str());
}

// Waits for every rank until `until`, then kills the ones left; once a rank has failed, the
// others are killed at once (they would only wait for it until WEFT_INIT_TIMEOUT). Returns what
// failed.
std::string reap(std::vector<pid_t>& pids, Clock::time_point until) {
  std::string failed;
  size_t left = pids.size();
  std::vector<bool> done(pids.size(), false);
  while (left > 0 && Clock::now() < until && failed.empty()) {
    for (size_t r = 0; r < pids.size(); ++r) {
      int st = 0;
      if (done[r] || waitpid(pids[r], &st, WNOHANG) != pids[r]) continue;
      done[r] = true;
      --left;
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        failed += "rank " + std::to_string(r) + (WIFEXITED(st) ? " exited " + std::to_string(WEXITSTATUS(st))
                                                              : " killed by signal " + std::to_string(WTERMSIG(st))) + "; ";
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const char* why = failed.empty() ? " killed at the deadline; " : " killed; ";
  for (size_t r = 0; r < pids.size(); ++r) {
    if (done[r]) continue;
    kill(pids[r], SIGKILL);
    waitpid(pids[r], nullptr, 0);
    failed += "rank " + std::to_string(r) + why;
  }
  // A job that failed leaves the ranks' shared-memory connections behind.
  if (!failed.empty())
    for (pid_t pid : pids) removeShm(pid);
  return failed;
}

}  // namespace

long long nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::string runRanks(int n, std::chrono::seconds timeout,
                     const std::function<int(int rank, const weft_unique_id_t& id)>& fn) {
  void* mem = mmap(nullptr, sizeof(SharedId), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return "mmap failed";
  auto* shared = new (mem) SharedId{};
  shared->result = -1;
  StartPipes p;
  auto until = Clock::now() + timeout;
  std::vector<pid_t> pids;
  std::fflush(nullptr);  // or a child would print the parent's buffered output again
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) childMain(r, n, timeout, shared, p, fn);
    if (pid < 0) break;
    pids.push_back(pid);
  }
  std::string failed;
  if (static_cast<int>(pids.size()) < n) failed = "fork failed; ";
  if (failed.empty() && waitReadable(p.ready[0], until)) {
    std::string go(static_cast<size_t>(n), 'g');
    if (write(p.go[1], go.data(), go.size()) != static_cast<ssize_t>(go.size())) failed = "start pipe failed; ";
  } else if (failed.empty()) {
    failed = "rank 0 made no id; ";
  }
  close(p.go[1]);  // ranks still waiting to start see the end of the pipe and exit
  p.go[1] = -1;
  failed += reap(pids, until);
  munmap(mem, sizeof(SharedId));
  return failed;
}

}  // namespace weft::bench::comm
