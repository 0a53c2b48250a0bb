// The CPU attributes NCCL writes on each <cpu>: arch, and on x86 the vendor, family and model
// exactly as NCCL computes them from CPUID (family = base + (extended << 4), model likewise:
// AMD Zen 2 is familyid="143", not the 23 that /proc/cpuinfo or hwloc report).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::topo {

struct CpuIdentity {
  std::string arch;                   // "x86_64", "arm64", "ppc64"; empty on other targets
  std::optional<std::string> vendor;  // CPUID leaf 0, e.g. "GenuineIntel" (x86 only)
  std::optional<int> familyId;        // CPUID leaf 1 (x86 only)
  std::optional<int> modelId;
};

// The CPU this process runs on, as NCCL sees it.
CpuIdentity thisCpu();

// NCCL's decoding of CPUID leaf 1 EAX into (family, model).
std::pair<int, int> cpuidFamilyModel(uint32_t eax);

// A CPU set in the kernel's cpumap format (what NCCL copies from
// /sys/devices/system/node/nodeN/cpumap): 32-bit words in hex, most significant first,
// separated by commas, over `nbits` CPUs; the first word has only the digits nbits needs
// (48 CPUs: "ffff,ffffffff"). `cpus` lists the set CPU indices.
std::string cpumapString(const std::vector<unsigned>& cpus, unsigned nbits);

}  // namespace weft::topo
