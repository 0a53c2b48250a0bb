// Parsers for integers, path levels, interface lists, NCCL_NETDEVS_POLICY and name lists.
#include "core/config/values.h"

#include "core/base/strings.h"

namespace weft::config {
namespace {

// topo.h's order: the value of a path type is its index.
constexpr const char* kPathNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                      "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
constexpr int kPathSys = 9;
// NCCL's levelsOldToNew: old integer level -> path type.
constexpr int kOldLevels[] = {0 /*LOC*/, 4 /*PIX*/, 5 /*PXB*/, 8 /*PHB*/, 9 /*SYS*/, 9 /*SYS*/};

Result<IfItem> parseIfItem(std::string_view item) {
  IfItem out;
  size_t colon = item.find(':');
  out.name = std::string(item.substr(0, colon));
  if (out.name.empty()) return invalidArgument("empty name in \"" + std::string(item) + "\"");
  if (out.name.find_first_of("^=") != std::string::npos) {
    return invalidArgument("'^' and '=' may only start the whole list, found in \"" + out.name + "\"");
  }
  if (colon != std::string_view::npos) {
    std::string_view port = item.substr(colon + 1);
    auto p = parseInt(port, 10);
    if (!p || *p < 0 || *p > 65535) {
      return invalidArgument("bad port \"" + std::string(port) + "\" in \"" + std::string(item) +
                             "\" (expected a number, as in mlx5_0:1)");
    }
    out.port = static_cast<int>(*p);
  }
  return out;
}

}  // namespace

Result<int64_t> parseInteger(std::string_view text) {
  if (auto v = parseInt(text, 0)) return *v;
  return invalidArgument("not an integer");
}

std::optional<int> parsePathLevel(std::string_view text) {
  for (int i = 0; i <= kPathSys; ++i)
    if (text == kPathNames[i]) return i;
  // Old levels: NCCL only tries them when the value starts with a digit, and clamps to 5.
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  auto v = parseInt(text, 0);
  if (!v) return std::nullopt;
  return kOldLevels[*v > 5 ? 5 : *v];
}

const char* pathLevelName(int level) {
  if (level < 0 || level >= static_cast<int>(std::size(kPathNames))) return "?";
  return kPathNames[level];
}

bool IfList::matches(std::string_view name, int port) const {
  bool found = items.empty();  // NCCL: no list means every interface
  for (const IfItem& it : items) {
    bool nameOk = exact ? name == it.name : startsWith(name, it.name);
    bool portOk = it.port == -1 || port == -1 || it.port == port;
    if (nameOk && portOk) found = true;
  }
  return found != exclude;
}

Result<IfList> parseIfList(std::string_view text) {
  IfList out;
  std::string_view rest = trim(text);
  if (!rest.empty() && rest.front() == '^') {
    out.exclude = true;
    rest.remove_prefix(1);
  }
  if (!rest.empty() && rest.front() == '=') {
    out.exact = true;
    rest.remove_prefix(1);
  }
  for (std::string_view item : split(rest, ',')) {
    item = trim(item);
    if (item.empty()) continue;  // NCCL skips empty items
    WEFT_ASSIGN_OR_RETURN(IfItem parsed, parseIfItem(item));
    out.items.push_back(std::move(parsed));
  }
  if (out.items.empty()) return invalidArgument("no interface or device name in the list");
  return out;
}

Result<NetDevsPolicy> parseNetDevsPolicy(std::string_view text) {
  NetDevsPolicy out;
  std::string_view t = trim(text);
  if (iequals(t, "AUTO")) return out;
  if (iequals(t, "ALL")) {
    out.kind = NetDevsPolicy::Kind::kAll;
    return out;
  }
  if (t.size() > 4 && iequals(t.substr(0, 4), "MAX:")) {
    auto n = parseInt(t.substr(4), 10);
    if (n && *n > 0 && *n <= 1 << 20) {
      out.kind = NetDevsPolicy::Kind::kMax;
      out.max = static_cast<int>(*n);
      return out;
    }
  }
  return invalidArgument("not AUTO, ALL or MAX:n with n > 0");
}

std::vector<std::string> parseNameList(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view item : split(text, ',')) {
    item = trim(item);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

}  // namespace weft::config
