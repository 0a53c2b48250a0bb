#include "tools/weft/output.h"

#include <cstdio>

#include "tools/weft/commands.h"

namespace weft::tool {

void printInfo(int rank, const std::vector<std::string>& lines) {
  for (const std::string& l : lines) printInfo(rank, l);
}

void printInfo(int rank, const std::string& line) { std::printf("[%d] NCCL INFO %s\n", rank, line.c_str()); }

int fail(const char* what, const Status& status) {
  std::fflush(stdout);  // what was printed before the failure comes first, also in `2>&1`
  std::fprintf(stderr, "%s: %s\n", what, status.toString().c_str());
  return kExitFailure;
}

}  // namespace weft::tool
