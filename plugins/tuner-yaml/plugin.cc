// libnccl-tuner-weft.so: weft's YAML rule tuner. Exports ncclTunerPlugin_v5, _v4 and _v3, so
// NCCL 2.24 … 2.28 and weft load it unchanged. It includes only include/weft/tuner.h and its own
// files. Rules: rules.h; where they come from and what they do: docs/tuner.md.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "plugins/tuner-yaml/rules.h"
#include "weft/tuner.h"

namespace weft::tuneryaml {
namespace {

const char* const kCollNames[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};

struct Context {
  std::vector<Rule> rules;
  std::string file;
  size_t nRanks = 0, nNodes = 0;
  int arch = 0;
  std::string host;  // gethostname(), for rules with `host`
  weft_debug_logger_t log = nullptr;
  std::atomic<bool> warnedDisabled{false};
};

#define TUNER_LOG(ctx, level, ...) \
  do {                                                                                     \
    if ((ctx)->log != nullptr) (ctx)->log((level), WEFT_LOG_TUNING, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

std::string envOr(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

bool readFile(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

struct RuleFile {
  std::string path;
  bool required;  // named by a variable: it must exist
  bool csv;       // NVIDIA's ext-tuner format
};

// Where the rules are: WEFT_TUNER_RULES_FILE (YAML), else NCCL_TUNER_CONFIG_FILE (ext-tuner
// CSV; only when set, not its default ./nccl_tuner.conf), else weft's policy file as weft
// finds it ($WEFT_CONFIG, ~/.config/weft/weft.yaml, /etc/weft.yaml).
std::vector<RuleFile> ruleFiles() {
  if (std::string f = envOr("WEFT_TUNER_RULES_FILE"); !f.empty()) return {{f, true, false}};
  if (std::string f = envOr("NCCL_TUNER_CONFIG_FILE"); !f.empty()) return {{f, true, true}};
  if (std::string f = envOr("WEFT_CONFIG"); !f.empty()) return {{f, true, false}};
  std::vector<RuleFile> out;
  if (std::string home = envOr("HOME"); !home.empty()) out.push_back({home + "/.config/weft/weft.yaml", false, false});
  out.push_back({"/etc/weft.yaml", false, false});
  return out;
}

// The GPU's sm number: WEFT_TUNER_GPU_ARCH, else the CUDA driver's current device (NCCL has
// set it before creating the communicator); 0 when unknown.
int detectArch() {
  if (std::string a = envOr("WEFT_TUNER_GPU_ARCH"); !a.empty()) return std::atoi(a.c_str());
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);  // only if the host loaded it
  if (cuda == nullptr) return 0;
  using GetDevice = int (*)(int*);
  using GetAttr = int (*)(int*, int, int);
  auto getDevice = reinterpret_cast<GetDevice>(dlsym(cuda, "cuCtxGetDevice"));
  auto getAttr = reinterpret_cast<GetAttr>(dlsym(cuda, "cuDeviceGetAttribute"));
  int dev = 0, major = 0, minor = 0;
  constexpr int kMajor = 75, kMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR
  int sm = 0;
  if (getDevice != nullptr && getAttr != nullptr && getDevice(&dev) == 0 && getAttr(&major, kMajor, dev) == 0 &&
      getAttr(&minor, kMinor, dev) == 0) {
    sm = major * 10 + minor;
  }
  dlclose(cuda);
  return sm;
}

weft_result_t load(Context& c) {
  for (const RuleFile& f : ruleFiles()) {
    const std::string& path = f.path;
    std::string text;
    if (!readFile(path, text)) {
      if (!f.required) continue;
      TUNER_LOG(&c, WEFT_LOG_WARN, "TUNER/weft: cannot read %s", path.c_str());
      return weftInvalidUsage;
    }
    std::string err = f.csv ? parseCsvRules(text, path, c.rules) : parseRulesDocument(text, path, c.rules);
    if (!err.empty()) {
      TUNER_LOG(&c, WEFT_LOG_WARN, "TUNER/weft: %s", err.c_str());
      return weftInvalidUsage;
    }
    c.file = path;
    TUNER_LOG(&c, WEFT_LOG_INFO, "TUNER/weft: %zu rule%s from %s (nRanks %zu, nNodes %zu, sm %d, host %s)",
              c.rules.size(), c.rules.size() == 1 ? "" : "s", path.c_str(), c.nRanks, c.nNodes, c.arch, c.host.c_str());
    return weftSuccess;
  }
  TUNER_LOG(&c, WEFT_LOG_INFO, "TUNER/weft: no rules file (WEFT_TUNER_RULES_FILE, NCCL_TUNER_CONFIG_FILE, WEFT_CONFIG, "
                               "~/.config/weft/weft.yaml, /etc/weft.yaml): NCCL's model decides");
  return weftSuccess;
}

template <typename F>
weft_result_t guard(F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return weftSystemError;
  } catch (...) {
    return weftInternalError;
  }
}

weft_result_t initCommon(void** ctx, size_t nRanks, size_t nNodes, weft_debug_logger_t logger) {
  return guard([&] {
    if (ctx == nullptr) return weftInvalidArgument;
    auto c = std::make_unique<Context>();
    c->nRanks = nRanks;
    c->nNodes = nNodes;
    c->log = logger;
    c->arch = detectArch();
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) == 0) c->host = name;
    weft_result_t rc = load(*c);
    if (rc == weftSuccess) *ctx = c.release();
    return rc;
  });
}

weft_result_t getCollInfo(void* ctx, weft_func_t coll, size_t nBytes, int numPipeOps, float** costTable, int numAlgo,
                          int numProto, int regBuff, int* nChannels) {
  auto* c = static_cast<Context*>(ctx);
  if (c == nullptr || costTable == nullptr || nChannels == nullptr) return weftInvalidArgument;
  if (c->rules.empty() || numAlgo != WEFT_TUNER_NUM_ALGORITHMS || numProto != WEFT_TUNER_NUM_PROTOCOLS) return weftSuccess;
  const Rule* r = firstMatch(c->rules, {.coll = static_cast<int>(coll), .bytes = nBytes, .nRanks = c->nRanks,
                                        .nNodes = c->nNodes, .arch = c->arch, .numPipeOps = numPipeOps,
                                        .regBuff = regBuff, .host = c->host});
  if (r == nullptr) return weftSuccess;
  // The table is NCCL's contiguous float[7][3], passed as float**.
  float* table = reinterpret_cast<float*>(costTable);
  if (!applyRule(*r, table, nChannels)) {
    if (!c->warnedDisabled.exchange(true)) {
      TUNER_LOG(c, WEFT_LOG_WARN, "TUNER/weft: rule %s asks for %s/%s, which is disabled for %s here; NCCL's choice "
                                  "stands (reported once)",
                r->where.c_str(), algoName(r->algo), protoName(r->proto), kCollNames[coll]);
    }
    return weftSuccess;
  }
  TUNER_LOG(c, WEFT_LOG_INFO, "TUNER/weft: %s %zu bytes: rule %s -> algo %s proto %s channels %d", kCollNames[coll],
            nBytes, r->where.c_str(), algoName(r->algo), protoName(r->proto), r->channels);
  return weftSuccess;
}

weft_result_t finalize(void* ctx) {
  delete static_cast<Context*>(ctx);
  return weftSuccess;
}

weft_result_t initV5(void** ctx, uint64_t, size_t nRanks, size_t nNodes, weft_debug_logger_t logger,
                     weft_nvl_domain_info_v5_t*, weft_tuner_constants_v5_t*) {
  return initCommon(ctx, nRanks, nNodes, logger);
}
weft_result_t initOld(size_t nRanks, size_t nNodes, weft_debug_logger_t logger, void** ctx) {
  return initCommon(ctx, nRanks, nNodes, logger);
}
weft_result_t getCollInfoV3(void* ctx, weft_func_t coll, size_t nBytes, int numPipeOps, float** table, int numAlgo,
                            int numProto, int* nChannels) {
  return getCollInfo(ctx, coll, nBytes, numPipeOps, table, numAlgo, numProto, -1, nChannels);  // v3: no regBuff
}

}  // namespace
}  // namespace weft::tuneryaml

extern "C" {
WEFT_TUNER_EXPORT extern const weft_tuner_v5_t ncclTunerPlugin_v5;
WEFT_TUNER_EXPORT extern const weft_tuner_v4_t ncclTunerPlugin_v4;
WEFT_TUNER_EXPORT extern const weft_tuner_v3_t ncclTunerPlugin_v3;

const weft_tuner_v5_t ncclTunerPlugin_v5 = {.name = "weft-yaml",
                                            .init = weft::tuneryaml::initV5,
                                            .getCollInfo = weft::tuneryaml::getCollInfo,
                                            .finalize = weft::tuneryaml::finalize};
const weft_tuner_v4_t ncclTunerPlugin_v4 = {.name = "weft-yaml",
                                            .init = weft::tuneryaml::initOld,
                                            .getCollInfo = weft::tuneryaml::getCollInfo,
                                            .destroy = weft::tuneryaml::finalize};
const weft_tuner_v3_t ncclTunerPlugin_v3 = {.name = "weft-yaml",
                                            .init = weft::tuneryaml::initOld,
                                            .getCollInfo = weft::tuneryaml::getCollInfoV3,
                                            .destroy = weft::tuneryaml::finalize};
}
