#include "core/topo/detect_host.h"

#include <unistd.h>

#include <fstream>

#include "core/base/strings.h"

namespace weft::topo {

uint64_t ncclStringHash(std::string_view text) {
  uint64_t h = 5381;
  for (char c : text) h = ((h << 5) + h) ^ static_cast<uint64_t>(static_cast<int64_t>(c));
  return h;
}

std::string hostIdentity(const std::string* hostId, const std::string& bootIdPath) {
  // 1024: NCCL's buffer; it keeps at most 1023 characters.
  constexpr size_t kMax = 1023;
  if (hostId != nullptr) return hostId->substr(0, kMax);
  char name[1024] = {};
  std::string id = gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string("unknown");
  std::ifstream in(bootIdPath);
  std::string word;
  if (in >> word) id += word;
  return id.substr(0, kMax);
}

uint64_t hostHash(const std::string* hostId, const std::string& bootIdPath) {
  return ncclStringHash(hostIdentity(hostId, bootIdPath));
}

std::string formatHostHash(uint64_t hash) {
  return hash == 0 ? std::string("0") : strprintf("0x%lx", static_cast<unsigned long>(hash));
}

}  // namespace weft::topo
