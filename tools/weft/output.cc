#include "tools/weft/output.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/base/log.h"
#include "core/config/loader.h"
#include "core/topo/offline.h"
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

void configureOfflineLogger(uint64_t defaultMask, bool quiet) {
  log::Logger& logger = log::processLogger();
  log::Options o = logger.options();
  o.prefix = log::Prefix::kRank;
  if (std::getenv("NCCL_DEBUG") == nullptr || quiet) o.level = quiet ? log::Level::kWarn : log::Level::kInfo;
  if (std::getenv("NCCL_DEBUG_SUBSYS") == nullptr) o.mask = defaultMask;
  bool toFile = !o.file.empty();
  logger.setOptions(o);
  // On stdout these lines are the command's output, beside its own printf lines: they share
  // stdout's buffer (written when it fills and at exit) instead of one write per line, which
  // on a 2-node search was 700 system calls.
  // With `quiet` stdout is a JSON document or a summary: warnings go to stderr.
  if (!toFile) {
    logger.setSink([quiet](log::Level level, uint64_t, std::string_view line) {
      std::FILE* out = quiet && level <= log::Level::kWarn ? stderr : stdout;
      std::fwrite(line.data(), 1, line.size(), out);
      std::fputc('\n', out);
    });
  }
}

namespace {

// The smallest compute capability of the topology's GPUs (a profile's "arch" fact), or 0.
int smOf(const topo::TopoXml& xml) {
  std::vector<topo::XmlNode*> gpus;
  topo::findAll(*xml.root(), "gpu", gpus);
  int sm = 0;
  for (const topo::XmlNode* g : gpus) {
    int v = std::atoi(g->get("sm", "0").c_str());
    if (v > 0 && (sm == 0 || v < sm)) sm = v;
  }
  return sm;
}

}  // namespace

Result<config::Settings> offlineSettings(const topo::TopoXml& topo, int nodes) {
  WEFT_ASSIGN_OR_RETURN(config::Policy policy, config::Policy::load(config::Inputs::fromProcess()));
  config::Facts facts;
  facts.nodes = nodes;
  facts.gpusPerNode = topo::gpusPerNode(topo);
  if (int sm = smOf(topo); sm > 0) facts.smArch = sm;
  return policy.resolve(facts);
}

void exportOfflineTunerArch(const topo::TopoXml& topo, const config::Settings& settings) {
  if (settings.isSet("WEFT_TUNER_GPU_ARCH")) return;
  if (int sm = smOf(topo); sm > 0) setenv("WEFT_TUNER_GPU_ARCH", std::to_string(sm).c_str(), 0);
}

}  // namespace weft::tool
