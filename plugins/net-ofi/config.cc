#include "plugins/net-ofi/config.h"

#include <strings.h>

#include <cstdlib>

#include "plugins/net-ofi/log.h"

namespace weft::ofi {
namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Config readConfig() {
  Config c;
  if (const char* v = std::getenv("WEFT_OFI_PROVIDER")) c.providers = v;
  if (const char* v = std::getenv("FI_PROVIDER")) c.fiProvider = v;
  if (const char* v = std::getenv("WEFT_OFI_MR")) {
    std::string_view mode = trim(v);
    if (iequal(mode, "always")) c.registerAlways = true;
    else if (!mode.empty() && !iequal(mode, "auto")) OFI_WARN("NET/OFI: WEFT_OFI_MR=%s: expected auto or always; using auto", v);
  }
  if (const char* v = std::getenv("WEFT_OFI_CONNECT_TIMEOUT"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    long seconds = std::strtol(v, &end, 10);
    if (end != v && *end == '\0' && seconds > 0 && seconds <= 86400) {
      c.connectTimeoutSeconds = static_cast<int>(seconds);
    } else {
      OFI_WARN("NET/OFI: WEFT_OFI_CONNECT_TIMEOUT=%s: expected seconds (1..86400); using %d", v, c.connectTimeoutSeconds);
    }
  }
  return c;
}

bool providerMatches(std::string_view name, std::string_view entry) {
  entry = trim(entry);
  if (entry.empty()) return false;
  if (iequal(name, entry)) return true;
  for (size_t start = 0; start <= name.size();) {  // each ';'-separated layer
    size_t end = name.find(';', start);
    if (end == std::string_view::npos) end = name.size();
    if (iequal(name.substr(start, end - start), entry)) return true;
    start = end + 1;
  }
  return false;
}

bool sameHostOnly(std::string_view name) { return providerMatches(name, "shm") || providerMatches(name, "sm2"); }

int chooseProvider(const std::vector<std::string>& available, std::string_view preference) {
  if (trim(preference).empty()) {
    for (size_t i = 0; i < available.size(); ++i)
      if (!sameHostOnly(available[i])) return static_cast<int>(i);
    return -1;
  }
  for (size_t start = 0; start <= preference.size();) {
    size_t end = preference.find(',', start);
    if (end == std::string_view::npos) end = preference.size();
    std::string_view entry = preference.substr(start, end - start);
    for (size_t i = 0; i < available.size(); ++i)
      if (providerMatches(available[i], entry)) return static_cast<int>(i);
    start = end + 1;
  }
  return -1;
}

}  // namespace weft::ofi
