#include "core/topo/detect_nvml.h"

#include <dlfcn.h>

#include <cctype>
#include <cstring>

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::topo {
namespace {

// The parts of nvml.h that detection needs, by value: the header is not needed to build.
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlFeatureEnabled = 1;
constexpr int kNvlinkCapP2pSupported = 0;
constexpr unsigned kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
// Field ids (nvml.h NVML_FI_DEV_*).
constexpr unsigned kFieldNvlinkState = 165;
constexpr unsigned kFieldC2cLinkCount = 170;
constexpr unsigned kFieldC2cLinkStatus = 171;
constexpr unsigned kFieldC2cLinkMaxBw = 172;

// nvmlPciInfo_t as filled by the _v2/_v3 entry points.
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

struct NvmlFieldValue {
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  int nvmlReturn;
  union {
    double dVal;
    unsigned uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
  } value;
};

class SharedLibrary {
 public:
  explicit SharedLibrary(const std::string& name) : handle_(::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) error_ = ::dlerror();
  }
  ~SharedLibrary() {
    if (handle_) ::dlclose(handle_);
  }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  template <typename Fn>
  Fn symbol(const char* name) const {
    return handle_ ? reinterpret_cast<Fn>(::dlsym(handle_, name)) : nullptr;
  }

 private:
  void* handle_;
  std::string error_;
};

struct NvmlApi {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handleByIndex)(unsigned, NvmlDevice*) = nullptr;
  int (*pciInfo)(NvmlDevice, NvmlPciInfo*) = nullptr;
  int (*computeCapability)(NvmlDevice, int*, int*) = nullptr;
  // Optional: older drivers or GPUs without NVLink.
  int (*nvlinkCapability)(NvmlDevice, unsigned, int, unsigned*) = nullptr;
  int (*nvlinkState)(NvmlDevice, unsigned, int*) = nullptr;
  int (*nvlinkRemotePci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
  int (*fieldValues)(NvmlDevice, int, NvmlFieldValue*) = nullptr;

  // The name of the first required symbol that is missing, or nullptr.
  const char* load(const SharedLibrary& lib) {
    init = lib.symbol<decltype(init)>("nvmlInit_v2");
    shutdown = lib.symbol<decltype(shutdown)>("nvmlShutdown");
    count = lib.symbol<decltype(count)>("nvmlDeviceGetCount_v2");
    handleByIndex = lib.symbol<decltype(handleByIndex)>("nvmlDeviceGetHandleByIndex_v2");
    pciInfo = lib.symbol<decltype(pciInfo)>("nvmlDeviceGetPciInfo_v3");
    computeCapability = lib.symbol<decltype(computeCapability)>("nvmlDeviceGetCudaComputeCapability");
    nvlinkCapability = lib.symbol<decltype(nvlinkCapability)>("nvmlDeviceGetNvLinkCapability");
    nvlinkState = lib.symbol<decltype(nvlinkState)>("nvmlDeviceGetNvLinkState");
    nvlinkRemotePci = lib.symbol<decltype(nvlinkRemotePci)>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
    fieldValues = lib.symbol<decltype(fieldValues)>("nvmlDeviceGetFieldValues");
    const std::pair<const char*, bool> required[] = {
        {"nvmlInit_v2", init != nullptr},
        {"nvmlShutdown", shutdown != nullptr},
        {"nvmlDeviceGetCount_v2", count != nullptr},
        {"nvmlDeviceGetHandleByIndex_v2", handleByIndex != nullptr},
        {"nvmlDeviceGetPciInfo_v3", pciInfo != nullptr},
        {"nvmlDeviceGetCudaComputeCapability", computeCapability != nullptr}};
    for (const auto& [name, ok] : required)
      if (!ok) return name;
    return nullptr;
  }
};

// nvmlInit … nvmlShutdown.
class NvmlSession {
 public:
  explicit NvmlSession(const NvmlApi& api) : api_(api), rc_(api.init()) {}
  ~NvmlSession() {
    if (rc_ == kNvmlSuccess) api_.shutdown();
  }
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;
  int rc() const { return rc_; }

 private:
  const NvmlApi& api_;
  int rc_;
};

bool linkActive(const NvmlApi& api, NvmlDevice dev, unsigned l, int sm) {
  if (sm >= 90 && api.fieldValues) {
    // Hopper and later: the link state is a field value (NCCL does the same).
    NvmlFieldValue fv{};
    fv.fieldId = kFieldNvlinkState;
    fv.scopeId = l;
    return api.fieldValues(dev, 1, &fv) == kNvmlSuccess && fv.nvmlReturn == kNvmlSuccess &&
           fv.value.uiVal == kNvmlFeatureEnabled;
  }
  int active = 0;
  return api.nvlinkState && api.nvlinkState(dev, l, &active) == kNvmlSuccess && active == kNvmlFeatureEnabled;
}

std::vector<NvmlLink> readLinks(const NvmlApi& api, NvmlDevice dev, int sm) {
  std::vector<NvmlLink> links;
  if (!api.nvlinkCapability || !api.nvlinkRemotePci) return links;
  for (unsigned l = 0; l < kNvmlMaxLinks; ++l) {
    unsigned p2p = 0;
    if (api.nvlinkCapability(dev, l, kNvlinkCapP2pSupported, &p2p) != kNvmlSuccess || !p2p) continue;
    if (!linkActive(api, dev, l, sm)) continue;
    NvmlPciInfo remote{};
    if (api.nvlinkRemotePci(dev, l, &remote) != kNvmlSuccess) continue;
    remote.busIdLegacy[sizeof(remote.busIdLegacy) - 1] = '\0';
    links.push_back({l, toLower(remote.busIdLegacy)});
  }
  return links;
}

void readC2c(const NvmlApi& api, NvmlDevice dev, NvmlGpu& gpu) {
  if (!api.fieldValues) return;
  NvmlFieldValue fv{};
  fv.fieldId = kFieldC2cLinkCount;
  if (api.fieldValues(dev, 1, &fv) != kNvmlSuccess || fv.nvmlReturn != kNvmlSuccess) return;
  for (unsigned l = 0; l < fv.value.uiVal; ++l) {
    NvmlFieldValue pair[2] = {};
    pair[0].fieldId = kFieldC2cLinkStatus;
    pair[0].scopeId = l;
    pair[1].fieldId = kFieldC2cLinkMaxBw;
    pair[1].scopeId = l;
    if (api.fieldValues(dev, 2, pair) != kNvmlSuccess || pair[0].nvmlReturn != kNvmlSuccess ||
        pair[0].value.uiVal != 1 || pair[1].nvmlReturn != kNvmlSuccess)
      continue;
    gpu.c2cBw = static_cast<int>(pair[1].value.uiVal);
    ++gpu.c2cCount;
  }
}

bool readGpu(const NvmlApi& api, unsigned index, NvmlGpu& gpu) {
  NvmlDevice dev = nullptr;
  NvmlPciInfo pci{};
  int major = 0, minor = 0;
  if (api.handleByIndex(index, &dev) != kNvmlSuccess || api.pciInfo(dev, &pci) != kNvmlSuccess ||
      api.computeCapability(dev, &major, &minor) != kNvmlSuccess) {
    WEFT_INFO(log::kGraph | log::kInit, "NVML: could not query GPU %u, skipping it", index);
    return false;
  }
  gpu.index = index;
  gpu.busId = strprintf("%04x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
  gpu.sm = major * 10 + minor;
  gpu.links = readLinks(api, dev, gpu.sm);
  readC2c(api, dev, gpu);
  return true;
}

}  // namespace

std::vector<NvmlGpu> readNvmlGpus(const std::string& library) {
  std::vector<NvmlGpu> gpus;
  SharedLibrary lib(library);
  if (!lib.loaded()) {
    WEFT_INFO(log::kGraph | log::kInit, "No GPU detected: cannot load NVML (%s)", lib.error().c_str());
    return gpus;
  }
  NvmlApi api;
  if (const char* missing = api.load(lib)) {
    WEFT_INFO(log::kGraph | log::kInit, "No GPU detected: %s has no %s", library.c_str(), missing);
    return gpus;
  }
  NvmlSession session(api);
  unsigned count = 0;
  if (session.rc() != kNvmlSuccess || api.count(&count) != kNvmlSuccess) {
    WEFT_INFO(log::kGraph | log::kInit, "No GPU detected: NVML initialisation failed (error %d)", session.rc());
    return gpus;
  }
  for (unsigned i = 0; i < count; ++i) {
    NvmlGpu gpu;
    if (readGpu(api, i, gpu)) gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) WEFT_INFO(log::kGraph | log::kInit, "No GPU detected: NVML reports none");
  return gpus;
}

}  // namespace weft::topo
