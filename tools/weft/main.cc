// weft: the offline command-line tool. Runs weft's topology pipeline on topology files (or on
// this machine) without GPUs, and prints what NCCL would print.
#include <cstdio>

#include "tools/weft/commands.h"
#include "weft/config.h"

int main(int argc, char** argv) {
  CLI::App app{
      "weft " WEFT_VERSION_STRING
      " - NCCL-compatible topology core, offline.\n\n"
      "Reads NCCL topology XML files (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE format), builds the\n"
      "system graph NCCL would build, and prints it in NCCL's own log format.\n\n"
      "Exit status: 0 success, 1 the operation failed (the message says why), 2 bad usage.",
      "weft"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "weft " WEFT_VERSION_STRING);
  weft::tool::addTopoCommands(app);
  weft::tool::addSearchCommand(app);
  weft::tool::addTuneCommand(app);
  weft::tool::addNetTestCommand(app);
  weft::tool::addInfoCommands(app);
  weft::tool::addPerfCommand(app);
  weft::tool::addPerfPlotCommand(app);
  weft::tool::addStatusCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return weft::tool::kExitUsage;
  }
  return weft::tool::kExitOk;
}
