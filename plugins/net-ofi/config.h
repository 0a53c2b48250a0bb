// Which libfabric provider the OFI plugin uses. libfabric itself reads FI_PROVIDER first and
// offers only those providers; WEFT_OFI_PROVIDER then picks among what it offers: a comma list
// of names in order of preference, where "tcp" matches the layered "tcp;ofi_rxm". Unset, the
// plugin takes libfabric's first provider (its own ranking) that can reach other hosts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weft::ofi {

struct Config {
  std::string providers;   // WEFT_OFI_PROVIDER ("" = libfabric's choice)
  std::string fiProvider;  // FI_PROVIDER, for log lines only: libfabric applies it
  bool registerAlways = false;  // WEFT_OFI_MR=always: fi_mr_reg every buffer, needed or not
  // WEFT_OFI_CONNECT_TIMEOUT: how long connect() waits for the listener's provider to take the
  // connection request. rxm over tcp retries a refused connection forever, so without a limit
  // connecting to a listener that is gone would never end. The listener's process must be
  // driving accept() (libfabric progresses the connection there) within this time.
  int connectTimeoutSeconds = 60;
};

// Reads WEFT_OFI_PROVIDER, FI_PROVIDER, WEFT_OFI_MR and WEFT_OFI_CONNECT_TIMEOUT.
Config readConfig();

// Whether provider `name` ("tcp;ofi_rxm") is the one `entry` ("tcp", "ofi_rxm" or the full
// name) asks for. Case-insensitive, as libfabric compares provider names.
bool providerMatches(std::string_view name, std::string_view entry);

// Providers that only reach the same host (shared memory): never chosen unless asked for.
bool sameHostOnly(std::string_view name);

// The provider to use among `available` (libfabric's order, no duplicates), or -1. With a
// preference list, the first entry that matches any provider wins; without one, the first
// provider that is not same-host only.
int chooseProvider(const std::vector<std::string>& available, std::string_view preference);

}  // namespace weft::ofi
