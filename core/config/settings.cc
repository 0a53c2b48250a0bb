#include "core/config/settings.h"

#include <cstdlib>

#include "core/base/strings.h"

extern char** environ;

namespace weft::config {
namespace {

std::string canonical(std::string_view name) {
  // weft's own variables (WEFT_*) keep their prefix; NCCL's may be written without NCCL_.
  if (startsWith(name, "NCCL_") || startsWith(name, "WEFT_")) return std::string(name);
  return "NCCL_" + std::string(name);
}

const std::vector<SettingDef>& buildTable() {
  static const std::vector<SettingDef> kTable = {
      {"NCCL_TOPO_FILE", {}, Type::kString, "", "Topology XML that detection completes", "topo"},
      {"NCCL_TOPO_DUMP_FILE", {}, Type::kString, "", "Write the fused topology XML here", "topo"},
      {"NCCL_HOSTID", {}, Type::kString, "", "Host identity hashed instead of host name and boot id", "topo/detect"},
      {"NCCL_GRAPH_FILE", {}, Type::kString, "", "Load graphs from this XML instead of searching", "topo/search"},
      {"NCCL_GRAPH_DUMP_FILE", {}, Type::kString, "", "Write the searched graphs here", "topo/search"},
      {"NCCL_CROSS_NIC", {}, Type::kInt, "2", "0: same NIC at both ends, 1: allow, 2: try without then with", "topo/search"},
      {"NCCL_MIN_NCHANNELS", {"NCCL_MIN_NRINGS"}, Type::kInt, "-2", "Minimum number of channels", "connect"},
      {"NCCL_MAX_NCHANNELS", {"NCCL_MAX_NRINGS"}, Type::kInt, "-2", "Maximum number of channels", "topo/search, connect"},
      {"NCCL_P2P_LEVEL", {}, Type::kPathLevel, "", "Highest path type for GPU peer-to-peer", "topo/paths"},
      {"NCCL_P2P_DISABLE", {}, Type::kInt, "", "1 disables GPU peer-to-peer", "topo/paths"},
      {"NCCL_NET_GDR_LEVEL", {}, Type::kPathLevel, "", "Highest GPU-NIC path type for GPU Direct RDMA", "topo/paths"},
      {"NCCL_NET_GDR_READ", {}, Type::kInt, "-2", "GPU Direct RDMA on the send side (-2: auto)", "topo/paths"},
      {"NCCL_NET_GDR_C2C", {}, Type::kInt, "1", "Allow GPU Direct RDMA through C2C", "topo/paths"},
      {"NCCL_PXN_DISABLE", {}, Type::kInt, "0", "1 disables PXN paths", "topo/paths"},
      {"NCCL_PXN_C2C", {}, Type::kInt, "1", "Allow PXN through C2C-attached NICs", "topo/paths"},
      {"NCCL_NVB_DISABLE", {}, Type::kInt, "0", "1 disables NVLink paths through an intermediate GPU", "topo/paths"},
      {"NCCL_SHM_DISABLE", {}, Type::kInt, "0", "1 disables the shared-memory transport", "topo/paths, transport"},
      {"NCCL_IGNORE_DISABLED_P2P", {}, Type::kInt, "0", "Ignore NVML peer-to-peer status", "topo/paths"},
      {"NCCL_NET_DISABLE_INTRA", {}, Type::kInt, "0", "Never use the network between GPUs of one node", "topo/paths"},
      {"NCCL_NETDEVS_POLICY", {}, Type::kString, "AUTO", "NICs per GPU: AUTO, ALL or MAX:n", "topo"},
      {"NCCL_NET", {}, Type::kString, "", "Net plugin to use, by name (case-insensitive)", "plugin"},
      {"NCCL_NET_PLUGIN", {}, Type::kString, "", "Net plugin libraries to try, comma list; none: no external", "plugin"},
      {"WEFT_NET_FALLBACK", {}, Type::kString, "allow", "allow: try the next net plugin on failure; deny: fail", "plugin"},
      {"NCCL_DEBUG", {}, Type::kString, "", "Log level: VERSION, WARN, INFO, TRACE", "log"},
      {"NCCL_DEBUG_SUBSYS", {}, Type::kString, "INIT,BOOTSTRAP,ENV", "Log subsystems", "log"},
      {"NCCL_DEBUG_FILE", {}, Type::kString, "", "Log file (%h host, %p pid)", "log"},
  };
  return kTable;
}

}  // namespace

const std::vector<SettingDef>& table() { return buildTable(); }

const SettingDef* findDef(std::string_view name) {
  std::string full = canonical(name);
  for (const SettingDef& d : table()) {
    if (d.name == full) return &d;
    for (std::string_view a : d.aliases)
      if (a == full) return &d;
  }
  return nullptr;
}

const char* sourceName(Source source) {
  switch (source) {
    case Source::kDefault: return "default";
    case Source::kEnv: return "env";
    case Source::kYaml: return "yaml";
    case Source::kYamlProfile: return "profile";
    case Source::kConfFile: return "conf";
    case Source::kEtcConf: return "/etc/nccl.conf";
    case Source::kOverride: return "override";
  }
  return "?";
}

std::optional<int> parsePathLevel(std::string_view text) {
  static const char* kNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  for (int i = 0; i < 12; ++i)
    if (iequals(text, kNames[i])) return i;
  // NCCL's old integer levels: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS, 5 SYS (clamped).
  if (auto v = parseInt(text, 0)) {
    static const int kOld[] = {0, 4, 5, 8, 9, 9};
    int64_t i = *v < 0 ? 0 : *v > 5 ? 5 : *v;
    return kOld[i];
  }
  return std::nullopt;
}

Settings Settings::fromEnvironment() {
  Settings s;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = kv.substr(0, eq);
    if (!(startsWith(name, "NCCL_") || startsWith(name, "WEFT_")) || findDef(name) == nullptr) continue;
    (void)s.set(name, std::string(kv.substr(eq + 1)), Source::kEnv, "env");
  }
  return s;
}

Status Settings::set(std::string_view name, std::string value, Source source, std::string where) {
  const SettingDef* def = findDef(name);
  if (def == nullptr) return invalidUsage("unknown setting " + canonical(name));
  if (def->type == Type::kInt && !parseInt(value, 0)) {
    return invalidArgument(std::string(def->name) + "=" + value + ": expected an integer");
  }
  if (def->type == Type::kPathLevel && !parsePathLevel(value)) {
    return invalidArgument(std::string(def->name) + "=" + value +
                           ": expected a path type (LOC, NVL, NVB, PIX, PXB, PHB, SYS) or 0-5");
  }
  // An alias never overrides the setting's own name (NCCL reads the new name last).
  std::string key(def->name);
  bool isAlias = canonical(name) != key;
  auto it = values_.find(key);
  if (isAlias && it != values_.end() && !it->second.where.starts_with("alias:")) return Status::ok();
  values_[key] = Value{std::move(value), source, isAlias ? "alias:" + where : std::move(where)};
  return Status::ok();
}

const Value* Settings::lookup(std::string_view name) const {
  const SettingDef* def = findDef(name);
  if (def == nullptr) return nullptr;
  auto it = values_.find(def->name);
  if (it != values_.end()) return &it->second;
  if (def->defaultValue.empty()) return nullptr;
  static thread_local Value fallback;
  fallback = Value{std::string(def->defaultValue), Source::kDefault, "default"};
  return &fallback;
}

bool Settings::isSet(std::string_view name) const {
  const SettingDef* def = findDef(name);
  return def != nullptr && values_.count(def->name) != 0;
}

int64_t Settings::integer(std::string_view name) const {
  const Value* v = lookup(name);
  if (v == nullptr) return 0;
  if (auto i = parseInt(v->text, 0)) return *i;
  return 0;
}

std::optional<int64_t> Settings::integerIfSet(std::string_view name) const {
  if (!isSet(name)) return std::nullopt;
  return integer(name);
}

std::string Settings::string(std::string_view name) const {
  const Value* v = lookup(name);
  return v ? v->text : std::string();
}

}  // namespace weft::config
