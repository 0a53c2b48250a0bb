#include "bench/common/processes.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace weft::bench {

Pipe::Pipe() {
  if (pipe(fd) != 0) throw std::runtime_error("pipe failed");
}

Pipe::~Pipe() {
  if (fd[0] >= 0) close(fd[0]);
  if (fd[1] >= 0) close(fd[1]);
}

void writeAll(int fd, const void* data, size_t n) {
  if (write(fd, data, n) != static_cast<ssize_t>(n)) throw std::runtime_error("pipe write failed");
}

void readAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) throw std::runtime_error("pipe read failed");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

pid_t forkRole(const std::function<void()>& body) {
  std::fflush(nullptr);  // or the child would print the parent's buffered output again
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    try {
      body();
      _exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench role failed: %s\n", e.what());
      _exit(1);
    }
  }
  return pid;
}

void waitOk(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("a benchmark process failed");
}

pid_t spawn(const std::vector<std::string>& argv, int stdoutFd, int stderrFd) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, stdoutFd, 1);
  if (stderrFd != 2) posix_spawn_file_actions_adddup2(&fa, stderrFd, 2);
  std::vector<char*> args;
  for (const std::string& s : argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error(argv[0] + ": cannot start (" + std::strerror(rc) + ")");
  return pid;
}

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  if (rc == 0) rc = getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  if (rc != 0) throw std::runtime_error("no free port on 127.0.0.1");
  return ntohs(a.sin_port);
}

}  // namespace weft::bench
