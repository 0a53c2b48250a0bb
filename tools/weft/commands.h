// Each `weft` sub-command registers itself on the CLI11 app from its own file.
#pragma once

#include <CLI/CLI.hpp>

namespace weft::tool {

// Exit codes, documented in `weft --help`.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the operation failed (bad input file, no solution, …)
inline constexpr int kExitUsage = 2;     // bad command line

void addTopoCommands(CLI::App& app);
void addSearchCommand(CLI::App& app);
void addNetTestCommand(CLI::App& app);
void addInfoCommands(CLI::App& app);
void addPerfCommand(CLI::App& app);
void addPerfPlotCommand(CLI::App& app);
void addTuneCommand(CLI::App& app);
void addStatusCommand(CLI::App& app);

}  // namespace weft::tool
