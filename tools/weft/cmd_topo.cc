// `weft topo …`: show, detect and fuse topology files.
#include <cstdio>
#include <string>
#include <vector>

#include "core/topo/xml.h"
#include "tools/weft/commands.h"

namespace weft::tool {
namespace {

int runShow(const std::string& file) {
  auto xml = topo::TopoXml::load(file);
  if (!xml.isOk()) {
    std::fprintf(stderr, "weft topo show: %s\n", xml.status().message().c_str());
    return kExitFailure;
  }
  std::fputs(xml->toString().c_str(), stdout);
  return kExitOk;
}

}  // namespace

void addTopoCommands(CLI::App& app) {
  CLI::App* topo = app.add_subcommand("topo", "Topology files: show, detect, fuse");
  topo->require_subcommand(1);

  auto* show = topo->add_subcommand("show", "Print the system graph NCCL builds from a topology XML");
  static std::string showFile;
  show->add_option("FILE", showFile, "NCCL topology XML (NCCL_TOPO_FILE format)")->required();
  show->callback([] {
    int rc = runShow(showFile);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
