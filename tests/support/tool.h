// Running the `weft` tool from a test, as a user runs it in a shell.
#pragma once

#include <string>

namespace weft::test {

struct ToolOutcome {
  int rc = -1;      // exit status, -1 when the command did not exit normally
  std::string out;  // stdout and stderr, interleaved
};

// Runs `command` with /bin/sh, stderr joined to stdout.
ToolOutcome runCommand(const std::string& command);

// The built weft tool: $WEFT_BINARY_DIR/tools/weft/weft (ctest sets it), else the build tree's.
std::string weftTool();

}  // namespace weft::test
