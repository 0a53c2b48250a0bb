// `weft topo …`: show, detect and fuse topology files.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "core/config/settings.h"
#include "core/topo/detect.h"
#include "core/topo/system_build.h"
#include "core/topo/system_print.h"
#include "core/topo/xml.h"
#include "core/topo/xml_fuse.h"
#include "tools/weft/commands.h"
#include "tools/weft/output.h"
#include "tools/weft/picture_dot.h"
#include "tools/weft/picture_topo.h"

namespace weft::tool {
namespace {

struct ShowOptions {
  std::string file;
  bool strict = false;
  std::string format;  // text (NCCL's lines), dot, svg, png; empty: by -o's extension, else text
  std::string out;
};

struct DetectArgs {
  std::string out;
  std::string base;
  std::vector<std::string> nets;
  bool trim = false;
  bool gpuGdr = false;
};

struct FuseArgs {
  std::vector<std::string> files;
  std::string out;
};

// A document to FILE (atomically, only on success) or to stdout for "-".
Status writeXml(const topo::TopoXml& xml, const std::string& out) {
  if (out != "-") return xml.save(out);
  std::string text = xml.toString();
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) return systemError("cannot write to stdout");
  return Status::ok();
}

int runShow(const ShowOptions& o) {
  auto xml = topo::TopoXml::load(o.file);
  if (!xml.isOk()) return fail("weft topo show", xml.status());
  topo::BuildOptions build;
  build.strict = o.strict;
  auto system = topo::buildSystem(*xml, build);
  if (!system.isOk()) return fail("weft topo show", system.status());
  std::string format = o.format.empty() ? (o.out.empty() ? "text" : pictureFormat(o.out)) : o.format;
  if (format != "text") {
    TopoPictureOptions picture{std::filesystem::path(o.file).filename().string(), netNamesOf(*xml)};
    Status s = writePicture(systemDot(*system, picture), o.out.empty() ? "-" : o.out, format);
    return s.isOk() ? kExitOk : fail("weft topo show", s);
  }
  if (!o.out.empty()) return fail("weft topo show", invalidUsage("-o writes a picture: use --format dot, svg or png"));
  int gpus = system->count(topo::NodeType::kGpu);
  int rank = gpus ? system->node(topo::NodeType::kGpu, 0).gpu.rank : 0;
  printInfo(rank, topo::systemBlock(*system));
  printInfo(rank, topo::pathLines(*system));
  // A machine without GPU (or a file whose GPUs have no rank) is legal; say so once.
  if (gpus == 0) std::fprintf(stderr, "weft topo show: %s has no GPU with a rank: nothing for NCCL to connect\n", o.file.c_str());
  return kExitOk;
}

// Detection's INFO lines go to stderr, so that stdout carries only the XML. Without NCCL_DEBUG,
// only the INIT and ENV lines (no GPU found, NCCL_TOPO_FILE used) are shown.
void configureDetectLogger() {
  log::Logger& logger = log::processLogger();
  log::Options o = logger.options();
  o.prefix = log::Prefix::kRank;
  if (std::getenv("NCCL_DEBUG") == nullptr) {
    o.level = log::Level::kInfo;
    if (std::getenv("NCCL_DEBUG_SUBSYS") == nullptr) o.mask = log::kInit | log::kEnv;
  }
  bool toFile = !o.file.empty();
  logger.setOptions(o);
  if (!toFile) {
    logger.setSink([](log::Level, uint64_t, std::string_view line) {
      std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
    });
  }
}

Result<topo::TopoXml> detect(const DetectArgs& a) {
  config::Settings settings = config::Settings::fromEnvironment();
  if (!a.base.empty()) WEFT_TRY(settings.set("NCCL_TOPO_FILE", a.base, config::Source::kOverride, "--base"));
  topo::DetectOptions o;
  o.settings = &settings;
  o.gpuGdr = a.gpuGdr;
  o.markKeep = a.trim;
  topo::Sysfs sysfs(o.sysfsRoot);
  for (const std::string& ifname : a.nets) {
    WEFT_ASSIGN_OR_RETURN(topo::NetDevice net, topo::socketNetDevice(sysfs, ifname, static_cast<int>(o.nets.size())));
    o.nets.push_back(std::move(net));
  }
  WEFT_ASSIGN_OR_RETURN(topo::TopoXml xml, topo::detectTopology(o));
  if (a.trim) topo::trimXml(xml);
  return xml;
}

int runDetect(const DetectArgs& a) {
  configureDetectLogger();
  auto xml = detect(a);
  if (!xml.isOk()) return fail("weft topo detect", xml.status());
  if (Status s = writeXml(*xml, a.out.empty() ? "-" : a.out); !s.isOk()) return fail("weft topo detect", s);
  return kExitOk;
}

int runFuse(const FuseArgs& a) {
  std::vector<topo::TopoXml> xmls;
  for (const std::string& file : a.files) {
    auto xml = topo::TopoXml::load(file);
    if (!xml.isOk()) return fail("weft topo fuse", xml.status());
    if (Status s = xml->expectRoot("system"); !s.isOk()) return fail("weft topo fuse", s);
    xmls.push_back(std::move(*xml));
  }
  auto fused = topo::fuseXmls(xmls, a.out);
  if (!fused.isOk()) return fail("weft topo fuse", fused.status());
  if (Status s = writeXml(*fused, a.out); !s.isOk()) return fail("weft topo fuse", s);
  return kExitOk;
}

void addShow(CLI::App& topo) {
  static ShowOptions show;
  auto* cmd = topo.add_subcommand("show", "Print the system graph NCCL builds from a topology XML");
  cmd->footer(
      "Prints, with the \"[rank] NCCL INFO \" prefix of NCCL's logs, the system block NCCL prints\n"
      "with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=GRAPH: every CPU with its PCI tree, link types and\n"
      "bandwidths in GB/s, GPUs with their rank, NICs and network ports. A topology without GPUs\n"
      "(a machine without NVML, say) prints its CPUs and PCI devices and a note on stderr.\n\n"
      "--format dot|svg|png draws the same graph instead: a box per CPU (NUMA node) holding its PCI\n"
      "tree (from the CPU on the left to the devices on the right), GPUs with rank and arch, NICs\n"
      "and network ports with their speed, NVSwitches, and\n"
      "every link with its type and GB/s, coloured by type (NVLink green, PCI blue, SYS red,\n"
      "NET grey). svg and png are laid out by Graphviz's `dot` (package graphviz; WEFT_DOT names\n"
      "another binary); without it the DOT text is written with a line saying how to render it.\n"
      "-o FILE picks the format from its extension when --format is not given.\n\n"
      "Examples:\n"
      "  weft topo show examples/topologies/hgx-h100-8gpu.xml\n"
      "  weft topo show examples/topologies/hgx-h100-8gpu.xml -o hgx.svg\n"
      "  weft topo show topo.xml --format dot | dot -Tpdf -o topo.pdf\n"
      "  weft topo detect -o here.xml && weft topo show here.xml");
  cmd->add_option("FILE", show.file, "NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE format)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--strict", show.strict,
                "Also reject what NCCL silently ignores (NVLink targets that are not GPUs of the file)");
  cmd->add_option("--format", show.format, "text (NCCL's log lines, the default), dot, svg or png")
      ->check(CLI::IsMember({"text", "dot", "svg", "png"}));
  cmd->add_option("-o,--output", show.out, "write the picture to this file (\"-\": stdout) instead of stdout");
  cmd->callback([] {
    if (int rc = runShow(show); rc != 0) throw CLI::RuntimeError(rc);
  });
}

void addDetect(CLI::App& topo) {
  static DetectArgs args;
  auto* cmd = topo.add_subcommand("detect", "Write this machine's topology XML (hwloc, sysfs, NVML when present)");
  cmd->footer(
      "Builds the topology XML NCCL would build on this machine, with NCCL's elements and\n"
      "attribute order, for every GPU NVML reports (libnvidia-ml.so.1 is loaded at run time; none\n"
      "found is not an error), every PCI device and NUMA node hwloc reports, and the network\n"
      "interfaces named with --net. PCI ids and link speed/width come from sysfs as NCCL reads them.\n"
      "Devices whose NUMA node the kernel does not know (-1, as on many VMs) go under\n"
      "<cpu numaid=\"-1\">, as in NCCL; when no device has a NUMA node, that is the only <cpu>.\n"
      "Each GPU gets rank = its NVML index, as in a one-process-per-GPU job.\n\n"
      "NCCL_TOPO_FILE (or --base) is the starting point, as in NCCL: its <cpu host_hash> are\n"
      "replaced by this host's hash (NCCL_HOSTID, else host name + boot id) and detection adds what\n"
      "is missing. --trim keeps only the branches that lead to GPUs and networks, the view NCCL\n"
      "keeps for its ranks before fusing them.\n\n"
      "Writes to stdout unless -o is given; -o writes the file atomically, only on success.\n\n"
      "Examples:\n"
      "  weft topo detect -o here.xml\n"
      "  weft topo detect --net eth0 --trim\n"
      "  NCCL_TOPO_FILE=cloud-hints.xml weft topo detect -o completed.xml");
  cmd->add_option("-o,--output", args.out, "write the XML to this file instead of stdout");
  cmd->add_option("--base", args.base, "start from this topology XML (overrides NCCL_TOPO_FILE)")->check(CLI::ExistingFile);
  cmd->add_option("--net", args.nets, "add this network interface as the socket plugin's device (repeatable)");
  cmd->add_flag("--trim", args.trim, "keep only the branches leading to GPUs and network devices");
  cmd->add_flag("--gpu-gdr", args.gpuGdr, "mark GPUs as GPU Direct RDMA capable (gdr=\"1\") when the base has no gdr");
  cmd->callback([] {
    if (int rc = runDetect(args); rc != 0) throw CLI::RuntimeError(rc);
  });
}

void addFuse(CLI::App& topo) {
  static FuseArgs args;
  auto* cmd = topo.add_subcommand("fuse", "Fuse several ranks' topology XML files into one, as NCCL does within a node");
  cmd->footer(
      "Fuses the files in argument order, as NCCL fuses the XMLs of a node's ranks in local-rank\n"
      "order (ncclTopoFuseXml): the first file is copied, then each element of the next files is\n"
      "added at the end of its parent unless the parent already has an element with the same\n"
      "name and the same attributes (same count and values, in any order; <x/> and <x>..</x>\n"
      "count as different, as in NCCL), in which case their children are fused the same way.\n"
      "Nothing is trimmed or reordered. Every input must have a <system version=\"1\"> root.\n\n"
      "OUT is written atomically (a temporary file renamed over it), only when every input loaded;\n"
      "\"-o -\" writes to stdout.\n\n"
      "Example:\n"
      "  weft topo fuse rank0.xml rank1.xml rank2.xml rank3.xml -o node.xml && weft topo show node.xml");
  cmd->add_option("FILES", args.files, "topology XML files, in local-rank order")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args.out, "the fused topology XML (\"-\": stdout)")->required();
  cmd->callback([] {
    if (int rc = runFuse(args); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace

void addTopoCommands(CLI::App& app) {
  CLI::App* topo = app.add_subcommand("topo", "Topology files: show, detect, fuse");
  topo->require_subcommand(1);
  addShow(*topo);
  addDetect(*topo);
  addFuse(*topo);
}

}  // namespace weft::tool
