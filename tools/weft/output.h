// Output helpers shared by the weft sub-commands.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace weft::tool {

// Prints each line as NCCL logs it offline: "[rank] NCCL INFO <line>".
void printInfo(int rank, const std::vector<std::string>& lines);
void printInfo(int rank, const std::string& line);

// Reports a failed operation on stderr ("weft topo show: <message>") and returns the exit code.
int fail(const char* what, const Status& status);

}  // namespace weft::tool
