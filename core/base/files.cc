#include "core/base/files.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace weft {

Status writeFileAtomic(const std::string& path, std::string_view text) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return errnoError("cannot create " + tmp, errno);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  int err = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    return errnoError("cannot write " + path, err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(tmp.c_str());
    return errnoError("cannot rename " + tmp + " to " + path, err);
  }
  return Status::ok();
}

Result<std::string> readWholeFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return errnoError("cannot open " + path, errno);
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  bool failed = std::ferror(f) != 0;
  int err = errno;
  std::fclose(f);
  if (failed) return errnoError("cannot read " + path, err);
  return out;
}

}  // namespace weft
