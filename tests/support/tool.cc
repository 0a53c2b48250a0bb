#include "tests/support/tool.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

namespace weft::test {

ToolOutcome runCommand(const std::string& command) {
  ToolOutcome r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string weftTool() {
  const char* dir = std::getenv("WEFT_BINARY_DIR");
  return std::string(dir ? dir : WEFT_BINARY_DIR) + "/tools/weft/weft";
}

}  // namespace weft::test
