#include "plugins/net-ofi/devices.h"

#include <rdma/fi_errno.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "plugins/net-ofi/log.h"

namespace weft::ofi {
namespace {

// The API version the plugin is written against: the headers it was built with.
constexpr uint32_t kFiVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);

InfoPtr queryProviders(int* rc) {
  InfoPtr hints(fi_allocinfo());
  if (!hints) {
    *rc = -FI_ENOMEM;
    return nullptr;
  }
  hints->caps = FI_TAGGED | FI_SEND | FI_RECV;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;  // every operation carries an fi_context2 (Op)
  hints->ep_attr->type = FI_EP_RDM;
  // What the plugin can do about registration: register send/receive buffers (FI_MR_LOCAL),
  // bind registrations to the comm's endpoint (FI_MR_ENDPOINT), and it only ever registers
  // allocated memory. It does no RMA, so the RMA-only rules are free to accept.
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
  // Comms on one device are driven from different host threads at once; they share the domain.
  hints->domain_attr->threading = FI_THREAD_SAFE;
  // Messages with one tag must match receives in the order they were sent (NCCL reuses tags).
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  fi_info* list = nullptr;
  *rc = fi_getinfo(kFiVersion, nullptr, nullptr, 0, hints.get(), &list);
  return InfoPtr(*rc == 0 ? list : nullptr);
}

long readLong(const std::string& path) {
  std::ifstream f(path);
  long v = -1;
  if (!(f >> v)) return -1;
  return v;
}

std::string realPath(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : std::string();
}

std::string pciPathOf(const fi_info& info) {
  const fid_nic* nic = info.nic;
  if (nic != nullptr && nic->bus_attr != nullptr && nic->bus_attr->bus_type == FI_BUS_PCI) {
    const fi_pci_attr& p = nic->bus_attr->attr.pci;
    char path[96];
    std::snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x", p.domain_id, p.bus_id, p.device_id,
                  p.function_id);
    if (std::string r = realPath(path); !r.empty()) return r;
  }
  // Providers over kernel interfaces (tcp, udp) name their domain after the interface.
  return realPath(std::string("/sys/class/net/") + info.domain_attr->name + "/device");
}

std::unique_ptr<Device> makeDevice(const fi_info& info) {
  auto tags = TagLayout::fromFormat(info.ep_attr->mem_tag_format);
  if (!tags) {
    OFI_INFO("NET/OFI : skipping %s: tag format 0x%llx has too few bits", info.domain_attr->name,
             static_cast<unsigned long long>(info.ep_attr->mem_tag_format));
    return nullptr;
  }
  auto d = std::make_unique<Device>();
  d->info.reset(fi_dupinfo(&info));
  if (!d->info) return nullptr;
  d->name = info.domain_attr->name;
  d->provider = info.fabric_attr->prov_name;
  d->pciPath = pciPathOf(info);
  uint64_t link = info.nic != nullptr && info.nic->link_attr != nullptr ? info.nic->link_attr->speed : 0;
  d->speedMbps = chooseSpeedMbps(link, readLong("/sys/class/net/" + d->name + "/speed"), &d->speedSource);
  d->guid = deviceGuid(d->provider, d->name);
  d->maxMessage = std::min<size_t>(info.ep_attr->max_msg_size, static_cast<size_t>(WEFT_NET_MAX_SIZE_DEFAULT));
  d->tags = *tags;
  return d;
}

std::vector<InfoSummary> summarize(const fi_info* list) {
  std::vector<InfoSummary> out;
  for (const fi_info* i = list; i != nullptr; i = i->next) out.push_back({i->fabric_attr->prov_name, i->domain_attr->name});
  return out;
}

}  // namespace

weft_result_t Device::domain(std::shared_ptr<Domain>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto d = domain_.lock()) {
    *out = std::move(d);
    return weftSuccess;
  }
  weft_result_t rc = Domain::open(info.get(), out);
  if (rc == weftSuccess) domain_ = *out;
  return rc;
}

Discovery discover(const Config& config) {
  Discovery found;
  int rc = 0;
  InfoPtr list = queryProviders(&rc);
  if (!list) {
    found.note = std::string("fi_getinfo: ") + fiErrorText(rc);
    return found;
  }
  std::vector<InfoSummary> infos = summarize(list.get());
  std::vector<std::string> providers = providersOf(infos);
  int chosen = chooseProvider(providers, config.providers);
  if (chosen < 0) {
    found.note = "no provider matches WEFT_OFI_PROVIDER=" + config.providers;
    return found;
  }
  found.provider = providers[static_cast<size_t>(chosen)];
  std::vector<const fi_info*> byIndex;
  for (const fi_info* i = list.get(); i != nullptr; i = i->next) byIndex.push_back(i);
  std::vector<size_t> picked = firstEntryPerDomain(infos, found.provider);
  std::vector<size_t> kept = withoutLoopback(infos, picked);
  if (kept.size() != picked.size())
    OFI_INFO("NET/OFI : leaving out %zu loopback/docker domain(s) of provider %s", picked.size() - kept.size(),
             found.provider.c_str());
  for (size_t index : kept) {
    if (auto d = makeDevice(*byIndex[index])) found.devices.push_back(std::move(d));
  }
  if (found.devices.empty()) found.note = "provider " + found.provider + " has no usable domain";
  return found;
}

std::vector<std::string> providersOf(const std::vector<InfoSummary>& infos) {
  std::vector<std::string> out;
  for (const InfoSummary& i : infos) {
    bool seen = false;
    for (const std::string& p : out) seen = seen || p == i.provider;
    if (!seen) out.push_back(i.provider);
  }
  return out;
}

std::vector<size_t> firstEntryPerDomain(const std::vector<InfoSummary>& infos, const std::string& provider) {
  std::vector<size_t> out;
  for (size_t i = 0; i < infos.size(); ++i) {
    if (infos[i].provider != provider) continue;
    bool seen = false;
    for (size_t j : out) seen = seen || infos[j].domain == infos[i].domain;
    if (!seen) out.push_back(i);
  }
  return out;
}

std::vector<size_t> withoutLoopback(const std::vector<InfoSummary>& infos, const std::vector<size_t>& picked) {
  auto local = [&](size_t i) {
    const std::string& d = infos[i].domain;
    return d == "lo" || d.rfind("docker", 0) == 0;
  };
  std::vector<size_t> out;
  for (size_t i : picked)
    if (!local(i)) out.push_back(i);
  return out.empty() ? picked : out;
}

int chooseSpeedMbps(uint64_t linkBitsPerSecond, long sysfsMbps, std::string* source) {
  if (linkBitsPerSecond >= 1000000) {
    *source = "link";
    uint64_t mbps = linkBitsPerSecond / 1000000;
    return mbps > static_cast<uint64_t>(INT_MAX) ? INT_MAX : static_cast<int>(mbps);
  }
  if (sysfsMbps > 0) {
    *source = "sysfs";
    return sysfsMbps > INT_MAX ? INT_MAX : static_cast<int>(sysfsMbps);
  }
  *source = "fallback";
  return kFallbackSpeedMbps;
}

uint64_t deviceGuid(const std::string& provider, const std::string& domain) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : provider + "/" + domain) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace weft::ofi
