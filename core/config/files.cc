// Reading the settings files.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "core/config/sources.h"

namespace weft::config {

Result<std::optional<std::string>> readTextFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    return errnoError("cannot open " + path, errno);
  }
  std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) { ::close(*f); });
  std::string text;
  char buf[16384];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return errnoError("cannot read " + path, errno);
    }
    text.append(buf, static_cast<size_t>(n));
  }
  return std::optional<std::string>(std::move(text));
}

}  // namespace weft::config
