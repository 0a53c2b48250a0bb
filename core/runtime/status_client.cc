// The client side of `weft status` (and what the service and client share): no communicator
// code, so the `weft` tool links it alone.
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/base/strings.h"
#include "core/runtime/status.h"
#include "core/runtime/status_io.h"

namespace weft::runtime {

using Clock = std::chrono::steady_clock;

bool readFull(int fd, void* data, size_t size, int timeoutMs) {
  char* p = static_cast<char*>(data);
  auto until = Clock::now() + std::chrono::milliseconds(timeoutMs);
  size_t got = 0;
  while (got < size) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
    if (left <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, left) <= 0) continue;
    ssize_t r = ::recv(fd, p + got, size - got, MSG_DONTWAIT);
    if (r == 0) return false;
    if (r < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return false;
    }
    got += static_cast<size_t>(r);
  }
  return true;
}

bool writeFull(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t w = ::send(fd, p, size, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    size -= static_cast<size_t>(w);
  }
  return true;
}

std::string statusDir() {
  if (const char* d = std::getenv("WEFT_STATUS_DIR"); d != nullptr && d[0] != '\0') return d;
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x != nullptr && x[0] != '\0') return std::string(x) + "/weft";
  return "/tmp/weft-" + std::to_string(geteuid());
}

Result<std::vector<CommStatus>> queryStatus(const std::string& dir, int pid, std::chrono::milliseconds timeout) {
  std::string path = dir + "/" + std::to_string(pid) + ".sock";
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof(a.sun_path)) return invalidArgument("status socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return errnoError("socket", errno);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return errnoError("connect to " + path, errno);
  if (!writeFull(fd.get(), kLocalRequest, sizeof(kLocalRequest) - 1)) return errnoError("send to " + path, errno);
  int ms = static_cast<int>(timeout.count());
  uint32_t version = 0;
  int32_t ncomms = 0;
  if (!readFull(fd.get(), &version, sizeof(version), ms) || !readFull(fd.get(), &ncomms, sizeof(ncomms), ms))
    return systemError(strprintf("process %d did not answer through %s within %d ms", pid, path.c_str(), ms));
  if (version != kStatusVersion)
    return systemError(strprintf("process %d speaks status version %u, this weft %u", pid, version, kStatusVersion));
  std::vector<CommStatus> out;
  for (int32_t i = 0; i < ncomms; ++i) {
    CommStatus cs;
    int32_t header[2] = {};
    if (!readFull(fd.get(), &cs.commHash, sizeof(cs.commHash), ms) || !readFull(fd.get(), header, sizeof(header), ms) ||
        header[0] < 1 || header[0] > (1 << 24))
      return systemError(strprintf("process %d sent a truncated status", pid));
    cs.nranks = header[0];
    cs.askedRank = header[1];
    cs.ranks.resize(static_cast<size_t>(cs.nranks));
    if (!readFull(fd.get(), cs.ranks.data(), cs.ranks.size() * sizeof(RankEntry), ms))
      return systemError(strprintf("process %d sent a truncated status", pid));
    out.push_back(std::move(cs));
  }
  return out;
}

std::vector<int> statusProcesses(const std::string& dir) {
  std::vector<int> pids;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return pids;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".sock") != 0) continue;
    int pid = std::atoi(name.c_str());
    if (pid <= 0) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
      ::unlink((dir + "/" + name).c_str());  // its process is gone
      continue;
    }
    pids.push_back(pid);
  }
  ::closedir(d);
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace weft::runtime
