#include "plugins/net-ib/devices.h"

#include <endian.h>
#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "plugins/net-ib/gid.h"
#include "plugins/net-ib/hca_filter.h"
#include "plugins/net-ib/log.h"
#include "plugins/net-ib/speed.h"

namespace weft::ib {
namespace {

std::string pciPathOf(const std::string& name) {
  std::string link = "/sys/class/infiniband/" + name + "/device";
  char resolved[PATH_MAX];
  return ::realpath(link.c_str(), resolved) != nullptr ? std::string(resolved) : std::string();
}

// Whether the provider implements dmabuf registration: a zero-length call on a bad fd fails
// with EOPNOTSUPP (or ENOSYS) when it does not, and with another error (EBADF) when it does.
bool probeDmabuf(ibv_pd* pd) {
  errno = 0;
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, IBV_ACCESS_LOCAL_WRITE);
  if (mr != nullptr) {
    (void)ibv_dereg_mr(mr);
    return true;
  }
  return errno != EOPNOTSUPP && errno != ENOSYS && errno != EPROTONOSUPPORT;
}

std::vector<GidEntry> gidTable(ibv_context* ctx, uint8_t port, int length) {
  std::vector<GidEntry> out;
  for (int i = 0; i < length; ++i) {
    ibv_gid_entry e{};
    if (ibv_query_gid_ex(ctx, port, static_cast<uint32_t>(i), &e, 0) != 0) continue;  // empty slot
    GidType type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? GidType::kRoceV2
                   : e.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::kRoceV1 : GidType::kIb;
    GidEntry g{static_cast<uint32_t>(i), type, {}};
    std::memcpy(g.raw.data(), e.gid.raw, g.raw.size());
    out.push_back(g);
  }
  return out;
}

// Adds the usable ports of one opened device. `skipped` collects why a port was left out.
void addPorts(const std::shared_ptr<Hca>& hca, uint8_t ports, const HcaFilter& filter, const Config& config,
              std::vector<Device>& out, std::string& skipped) {
  for (uint8_t port = 1; port <= ports; ++port) {
    if (!filter.selects(hca->name, port)) continue;
    ibv_port_attr attr{};
    if (int rc = ibv_query_port(hca->context.get(), port, &attr); rc != 0) {
      skipped += " " + hca->name + ":" + std::to_string(port) + " (ibv_query_port: " + std::strerror(rc) + ")";
      continue;
    }
    if (attr.state != IBV_PORT_ACTIVE) continue;  // down ports are routine: not worth a word
    if (attr.link_layer != IBV_LINK_LAYER_INFINIBAND && attr.link_layer != IBV_LINK_LAYER_ETHERNET) continue;
    Device d;
    d.hca = hca;
    d.port = port;
    d.name = port == 1 ? hca->name : hca->name + ":" + std::to_string(port);
    d.linkLayer = attr.link_layer;
    d.lid = attr.lid;
    d.mtu = attr.active_mtu;
    d.speedMbps = portSpeedMbps(attr.active_speed, attr.active_width);
    d.maxMessage = attr.max_msg_sz;
    GidPreference want{.ethernet = attr.link_layer == IBV_LINK_LAYER_ETHERNET, .index = config.gidIndex,
                       .roceVersion = config.roceVersion, .family = config.addressFamily};
    std::vector<GidEntry> table = gidTable(hca->context.get(), port, attr.gid_tbl_len);
    std::string why;
    std::optional<uint32_t> gid = chooseGid(table, want, &why);
    if (!gid) {
      skipped += " " + d.name + " (" + why + ")";
      continue;
    }
    d.gidIndex = static_cast<uint8_t>(*gid);
    for (const GidEntry& e : table)
      if (e.index == *gid) d.gid = e.raw;
    out.push_back(std::move(d));
  }
}

// Opens device `dev` and adds its ports; a device that cannot be opened is noted and skipped.
void addDevice(ibv_device* dev, const HcaFilter& filter, const Config& config, Discovery& found, std::string& skipped) {
  auto hca = std::make_shared<Hca>();
  hca->name = ibv_get_device_name(dev);
  hca->context.reset(ibv_open_device(dev));
  if (!hca->context) {
    skipped += " " + hca->name + " (ibv_open_device: " + std::strerror(errno) + ")";
    return;
  }
  ibv_device_attr attr{};
  if (int rc = ibv_query_device(hca->context.get(), &attr); rc != 0) {
    skipped += " " + hca->name + " (ibv_query_device: " + std::strerror(rc) + ")";
    return;
  }
  hca->pd.reset(ibv_alloc_pd(hca->context.get()));
  if (!hca->pd) {
    skipped += " " + hca->name + " (ibv_alloc_pd: " + std::strerror(errno) + ")";
    return;
  }
  hca->guid = be64toh(attr.node_guid);
  hca->maxQpWr = attr.max_qp_wr;
  hca->pciPath = pciPathOf(hca->name);
  hca->dmabuf = probeDmabuf(hca->pd.get());
  addPorts(hca, attr.phys_port_cnt, filter, config, found.devices, skipped);
}

}  // namespace

Discovery discover(const Config& config) {
  Discovery found;
  if (config.disabled) {
    found.note = "NCCL_IB_DISABLE=1";
    return found;
  }
  std::string problem;
  std::optional<HcaFilter> filter = parseHcaFilter(config.hca, &problem);
  if (!filter) {
    IB_WARN("NET/IB: NCCL_IB_HCA=%s: %s; using no device", config.hca.c_str(), problem.c_str());
    found.note = "NCCL_IB_HCA=" + config.hca + " is malformed (" + problem + ")";
    return found;
  }
  int count = 0;
  errno = 0;
  DeviceListPtr list(ibv_get_device_list(&count));
  if (!list) {
    // ENOSYS: the kernel has no RDMA subsystem at all.
    int err = errno;
    found.note = std::string("no RDMA device (ibv_get_device_list: ") + std::strerror(err) + ", errno " +
                 std::to_string(err) + ")";
    return found;
  }
  std::string skipped;
  for (int i = 0; i < count; ++i) addDevice(list.get()[i], *filter, config, found, skipped);
  if (found.devices.empty()) {
    found.note = count == 0 ? "no RDMA device (ibv_get_device_list lists none)"
                            : std::to_string(count) + " RDMA device" + (count == 1 ? "" : "s") +
                                  " but no active port" + (config.hca.empty() ? "" : " selected by NCCL_IB_HCA=" + config.hca);
  }
  if (!skipped.empty()) found.note += (found.note.empty() ? "skipped:" : "; skipped:") + skipped;
  return found;
}

}  // namespace weft::ib
