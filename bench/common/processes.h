// What the two-process net benchmarks share: pipes that carry listen handles and results
// between the parent and its children, running a role in a forked child, and starting the
// baseline tools (iperf3, fi_pingpong) on a free loopback port.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace weft::bench {

// A pipe, closed on destruction. Throws if it cannot be made.
struct Pipe {
  int fd[2];
  Pipe();
  ~Pipe();
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
};

// Write or read exactly n bytes; throw on a short write or end of file.
void writeAll(int fd, const void* data, size_t n);
void readAll(int fd, void* data, size_t n);

// Runs `body` in a forked child, which exits 0 once it returns and 1 (saying why on stderr)
// if it throws. Returns the child's pid.
pid_t forkRole(const std::function<void()>& body);

// Waits for a child; throws unless it exited with 0.
void waitOk(pid_t pid);

// Starts argv[0], found on PATH, with its stdout on stdoutFd and its stderr on stderrFd.
// Throws if it cannot be started.
pid_t spawn(const std::vector<std::string>& argv, int stdoutFd, int stderrFd = 2);

// A TCP port on 127.0.0.1 that the kernel handed out a moment ago (free unless taken since).
int freePort();

}  // namespace weft::bench
