// `weft topo …`: show, detect and fuse topology files.
#include <cstdio>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "core/topo/system_build.h"
#include "core/topo/system_print.h"
#include "core/topo/xml.h"
#include "tools/weft/commands.h"
#include "tools/weft/output.h"

namespace weft::tool {
namespace {

struct ShowOptions {
  std::string file;
  bool strict = false;
};

int runShow(const ShowOptions& o) {
  auto xml = topo::TopoXml::load(o.file);
  if (!xml.isOk()) return fail("weft topo show", xml.status());
  topo::BuildOptions build;
  build.strict = o.strict;
  auto system = topo::buildSystem(*xml, build);
  if (!system.isOk()) return fail("weft topo show", system.status());
  int rank = system->count(topo::NodeType::kGpu) ? system->node(topo::NodeType::kGpu, 0).gpu.rank : 0;
  printInfo(rank, topo::systemBlock(*system));
  printInfo(rank, topo::pathLines(*system));
  return kExitOk;
}

}  // namespace

void addTopoCommands(CLI::App& app) {
  CLI::App* topo = app.add_subcommand("topo", "Topology files: show, detect, fuse");
  topo->require_subcommand(1);

  static ShowOptions show;
  auto* cmd = topo->add_subcommand("show", "Print the system graph NCCL builds from a topology XML");
  cmd->footer(
      "Prints, with the \"[rank] NCCL INFO \" prefix of NCCL's logs, the system block NCCL prints\n"
      "with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=GRAPH: every CPU with its PCI tree, link types and\n"
      "bandwidths in GB/s, GPUs with their rank, NICs and network ports.\n\n"
      "Example:\n  weft topo show examples/topologies/hgx-h100-8gpu.xml");
  cmd->add_option("FILE", show.file, "NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE format)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--strict", show.strict,
                "Also reject what NCCL silently ignores (NVLink targets that are not GPUs of the file)");
  cmd->callback([] {
    if (int rc = runShow(show); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
