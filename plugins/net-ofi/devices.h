// The OFI plugin's devices: one per domain (NIC) of the chosen provider, found once per process
// with fi_getinfo, in libfabric's order. Properties are filled from what the provider reports,
// with documented fallbacks where it reports nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugins/net-ofi/config.h"
#include "plugins/net-ofi/endpoint.h"
#include "plugins/net-ofi/fi_objects.h"
#include "plugins/net-ofi/wire.h"

namespace weft::ofi {

// 10 Gb/s, what NCCL's socket transport assumes for a NIC whose speed it cannot read: a
// provider that reports no link speed (tcp does not) must not look like a 0 Gb/s NIC.
inline constexpr int kFallbackSpeedMbps = 10000;

struct Device {
  InfoPtr info;          // the fi_info this device's endpoints are opened with
  std::string name;      // the domain's name ("lo", "eth0", "rdmap0s6-rdm")
  std::string provider;  // "tcp;ofi_rxm"
  std::string pciPath;   // "" when unknown
  int speedMbps = kFallbackSpeedMbps;
  std::string speedSource;  // "link", "sysfs" or "fallback", for the INFO line
  uint64_t guid = 0;
  size_t maxMessage = 0;
  TagLayout tags;

  // The open domain while any endpoint uses it.
  weft_result_t domain(std::shared_ptr<Domain>* out);

 private:
  std::mutex mutex_;
  std::weak_ptr<Domain> domain_;
};

struct Discovery {
  std::vector<std::unique_ptr<Device>> devices;
  std::string provider;  // the provider chosen, or "" when none
  std::string note;      // why no device was found, for the INFO line
};

// Asks libfabric for reliable-datagram tagged endpoints and builds the device list. Never
// fails: no provider or no usable domain gives an empty list and a note.
Discovery discover(const Config& config);

// --- pure parts, unit-tested -----------------------------------------------------------------

struct InfoSummary {
  std::string provider;
  std::string domain;
};
// Provider names in first-seen order, without duplicates.
std::vector<std::string> providersOf(const std::vector<InfoSummary>& infos);
// Indices of the first entry of each domain of `provider`, in order (one device per domain:
// libfabric lists a domain once per address and endpoint variant).
std::vector<size_t> firstEntryPerDomain(const std::vector<InfoSummary>& infos, const std::string& provider);
// Drops the loopback and docker domains (lo, docker*) of providers over kernel interfaces when
// any other domain is left, as aws-ofi-nccl does by default (OFI_NCCL_EXCLUDE_TCP_IF=lo,docker0):
// a rank that picked lo could not reach another host.
std::vector<size_t> withoutLoopback(const std::vector<InfoSummary>& infos, const std::vector<size_t>& picked);
// The speed in Mbps from the provider's link attribute (bits/s, 0 = unknown), else from sysfs
// (Mbps, <= 0 = unknown), else kFallbackSpeedMbps. `source` says which.
int chooseSpeedMbps(uint64_t linkBitsPerSecond, long sysfsMbps, std::string* source);
// A stable 64-bit id for a device within a host (FNV-1a of provider and domain names).
uint64_t deviceGuid(const std::string& provider, const std::string& domain);

}  // namespace weft::ofi
