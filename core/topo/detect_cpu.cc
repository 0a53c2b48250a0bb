#include "core/topo/detect_cpu.h"

#include <algorithm>

#include "core/base/strings.h"

#if defined(__x86_64__)
#include <cpuid.h>

#include <cstring>
#endif

namespace weft::topo {

std::pair<int, int> cpuidFamilyModel(uint32_t eax) {
  int model = static_cast<int>((eax >> 4) & 0xf);
  int family = static_cast<int>((eax >> 8) & 0xf);
  int extModel = static_cast<int>((eax >> 16) & 0xf);
  int extFamily = static_cast<int>((eax >> 20) & 0xff);
  // NCCL adds the extended fields unconditionally (unlike the kernel, which adds the extended
  // family only for family 0xf): the corpus's AMD dumps say familyid="143".
  return {family + (extFamily << 4), model + (extModel << 4)};
}

CpuIdentity thisCpu() {
  CpuIdentity id;
#if defined(__x86_64__)
  id.arch = "x86_64";
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  __cpuid(0, eax, ebx, ecx, edx);
  char vendor[13] = {};
  // The vendor string is EBX, EDX, ECX in that order.
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  id.vendor = std::string(vendor);
  __cpuid(1, eax, ebx, ecx, edx);
  auto [family, model] = cpuidFamilyModel(eax);
  id.familyId = family;
  id.modelId = model;
#elif defined(__aarch64__)
  id.arch = "arm64";
#elif defined(__PPC__)
  id.arch = "ppc64";
#endif
  return id;
}

std::string cpumapString(const std::vector<unsigned>& cpus, unsigned nbits) {
  for (unsigned c : cpus) nbits = std::max(nbits, c + 1);
  if (nbits == 0) nbits = 1;
  size_t nwords = (nbits + 31) / 32;
  std::vector<uint32_t> words(nwords, 0);
  for (unsigned c : cpus) words[c / 32] |= 1u << (c % 32);
  unsigned topBits = nbits - 32 * static_cast<unsigned>(nwords - 1);
  std::string out = strprintf("%0*x", static_cast<int>((topBits + 3) / 4), words[nwords - 1]);
  for (size_t w = nwords - 1; w-- > 0;) out += strprintf(",%08x", words[w]);
  return out;
}

}  // namespace weft::topo
