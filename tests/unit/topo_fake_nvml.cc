// A stand-in for libnvidia-ml.so.1 with three GPUs, loaded by the detection tests through
// dlopen exactly as the real library is. Only the entry points weft uses exist.
//  GPU 0  0000:8d:00.0  sm90: links 0-1 to GPU 1, 2-15 to an NVSwitch, 16 down, 17 not P2P;
//                       two C2C links, one active (50000 MB/s).
//  GPU 1  0000:9d:00.0  sm80: links 0-1 to GPU 0 (state through nvmlDeviceGetNvLinkState),
//                       link 2 fails its capability query; no C2C field.
//  GPU 2                its PCI info query fails.
// WEFT_FAKE_NVML_INIT_ERROR=<n> makes nvmlInit_v2 return n.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct PciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

struct FieldValue {
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

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kUnknown = 999;
struct Gpu {
  unsigned bus;
  int major, minor;
};
const Gpu kGpus[] = {{0x8d, 9, 0}, {0x9d, 8, 0}, {0xad, 9, 0}};

unsigned indexOf(void* handle) { return static_cast<unsigned>(reinterpret_cast<unsigned long>(handle) - 1); }

void fillPci(PciInfo* pci, unsigned bus, const char* legacy) {
  std::memset(pci, 0, sizeof(*pci));
  pci->bus = bus;
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%s", legacy);
  std::snprintf(pci->busId, sizeof(pci->busId), "0000%s", legacy);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int nvmlInit_v2() {
  const char* e = std::getenv("WEFT_FAKE_NVML_INIT_ERROR");
  return e ? std::atoi(e) : kSuccess;
}
__attribute__((visibility("default"))) int nvmlShutdown() { return kSuccess; }
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = 3;
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** handle) {
  if (i >= 3) return kInvalidArgument;
  *handle = reinterpret_cast<void*>(static_cast<unsigned long>(i) + 1);
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPciInfo_v3(void* h, PciInfo* pci) {
  unsigned i = indexOf(h);
  if (i == 2) return kUnknown;
  char legacy[16];
  std::snprintf(legacy, sizeof(legacy), "0000:%02X:00.0", kGpus[i].bus);
  fillPci(pci, kGpus[i].bus, legacy);
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCudaComputeCapability(void* h, int* major, int* minor) {
  *major = kGpus[indexOf(h)].major;
  *minor = kGpus[indexOf(h)].minor;
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetNvLinkCapability(void* h, unsigned link, int cap, unsigned* result) {
  unsigned i = indexOf(h);
  if (cap != 0 || link >= 18) return kInvalidArgument;
  if (i == 1 && link == 2) return kUnknown;
  *result = (i == 0 && link == 17) ? 0 : 1;
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetNvLinkState(void* h, unsigned link, int* active) {
  *active = indexOf(h) == 1 && link <= 2 ? 1 : 0;
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* h, unsigned link, PciInfo* pci) {
  unsigned i = indexOf(h);
  if (i == 0 && link <= 1) fillPci(pci, 0x9d, "0000:9D:00.0");
  else if (i == 0) fillPci(pci, 0, "FFFFFFF:FFFF:FF");
  else fillPci(pci, 0x8d, "0000:8D:00.0");
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetFieldValues(void* h, int count, FieldValue* values) {
  unsigned i = indexOf(h);
  for (int v = 0; v < count; ++v) {
    FieldValue& f = values[v];
    f.nvmlReturn = kSuccess;
    switch (f.fieldId) {
      case 165: f.value.uiVal = (i == 0 && f.scopeId != 16) ? 1 : 0; break;  // NVLink state
      case 170:  // C2C link count
        if (i == 1) f.nvmlReturn = kNotSupported;
        else f.value.uiVal = 2;
        break;
      case 171: f.value.uiVal = f.scopeId == 0 ? 1 : 0; break;  // C2C link status
      case 172: f.value.uiVal = 50000; break;                   // C2C max bandwidth, MB/s
      default: f.nvmlReturn = kNotSupported;
    }
  }
  return kSuccess;
}

}  // extern "C"
