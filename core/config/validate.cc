// Checking a value against its table row, and describing what a row accepts.
#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/config/values.h"

namespace weft::config {
namespace {

constexpr int64_t kNoMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();

// NCCL's subsystem names, for messages; the check itself is log::parseSubsysMask's.
constexpr const char* kSubsysNames =
    "INIT, COLL, P2P, SHM, NET, GRAPH, TUNING, ENV, ALLOC, CALL, PROXY, NVLS, BOOTSTRAP, REG, "
    "PROFILE, RAS, ALL";

constexpr const char* kFuncList = "Broadcast, Reduce, AllGather, ReduceScatter, AllReduce, SendRecv";

std::string rangeText(const IntRange& r) {
  std::string s;
  if (r.min != kNoMin && r.max != kNoMax) {
    s = strprintf("an integer %lld-%lld", static_cast<long long>(r.min), static_cast<long long>(r.max));
  } else if (r.min != kNoMin) {
    s = strprintf("an integer >= %lld", static_cast<long long>(r.min));
  } else if (r.max != kNoMax) {
    s = strprintf("an integer <= %lld", static_cast<long long>(r.max));
  } else {
    s = "an integer";
  }
  if (r.autoValue) s += " or -2 (auto)";
  return s;
}

std::string choicesText(const SettingDef& def) {
  std::string s = "one of ";
  for (size_t i = 0; i < def.choices.size(); ++i) s += (i ? ", " : "") + std::string(def.choices[i]);
  return s;
}

Status validateInt(const SettingDef& def, std::string_view text) {
  auto v = parseInt(text, 0);
  if (!v) return invalidArgument("not an integer");
  const IntRange& r = def.range;
  if (r.autoValue && *v == -2) return Status::ok();
  if (*v < r.min || *v > r.max) return invalidArgument("out of range");
  return Status::ok();
}

Status validateEnum(const SettingDef& def, std::string_view text) {
  for (std::string_view c : def.choices) {
    if (def.caseSensitive ? text == c : iequals(text, c)) return Status::ok();
  }
  for (std::string_view c : def.choices) {
    if (iequals(text, c)) return invalidArgument("NCCL compares this value case-sensitively: write " + std::string(c));
  }
  return invalidArgument("not a known value");
}

Status validateSubsys(std::string_view text) {
  std::string_view rest = text;
  if (!rest.empty() && rest.front() == '^') rest.remove_prefix(1);
  for (std::string_view item : split(rest, ',')) {
    item = trim(item);
    if (!item.empty() && log::parseSubsysMask(item) == 0) {
      return invalidArgument("unknown subsystem \"" + std::string(item) + "\"");
    }
  }
  return Status::ok();
}

Status validatePathLevel(std::string_view text) {
  if (parsePathLevel(text)) return Status::ok();
  for (int i = 0; i <= 9; ++i) {
    if (iequals(text, pathLevelName(i))) {
      return invalidArgument(std::string("NCCL only reads path types in upper case: write ") + pathLevelName(i));
    }
  }
  return invalidArgument("not a path type");
}

}  // namespace

std::string_view typeName(Type type) {
  switch (type) {
    case Type::kInt: return "integer";
    case Type::kString: return "string";
    case Type::kPathLevel: return "path type";
    case Type::kEnum: return "enum";
    case Type::kList: return "list";
    case Type::kIfList: return "interface list";
    case Type::kAlgoList: return "algorithm list";
    case Type::kProtoList: return "protocol list";
    case Type::kNetDevsPolicy: return "policy";
    case Type::kSubsysList: return "subsystem list";
  }
  return "?";
}

std::string expectedForm(const SettingDef& def) {
  switch (def.type) {
    case Type::kInt: return rangeText(def.range);
    case Type::kString: return "a string";
    case Type::kPathLevel:
      return "a path type (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS) or an old level 0-5";
    case Type::kEnum: return choicesText(def);
    case Type::kList: return "a comma list of names";
    case Type::kIfList: return "[^][=]name[:port],... (^ excludes, = exact names)";
    case Type::kAlgoList:
      return std::string("[^]algo,...[;func:[^]algo,...]... with algo in Tree, Ring, CollNetDirect, "
                         "CollNetChain, NVLS, NVLSTree, PAT and func in ") + kFuncList;
    case Type::kProtoList:
      return std::string("[^]proto,...[;func:[^]proto,...]... with proto in LL, LL128, Simple and func in ") +
             kFuncList;
    case Type::kNetDevsPolicy: return "AUTO, ALL or MAX:n";
    case Type::kSubsysList: return std::string("[^]name,... with names in ") + kSubsysNames;
  }
  return "?";
}

Status checkValue(const SettingDef& def, std::string_view key, std::string_view value,
                  std::string_view where) {
  // An empty value is unset for NCCL: the default applies, whatever the type.
  if (value.empty()) return Status::ok();
  Status s = validateValue(def, value);
  if (s.isOk()) return s;
  return invalidArgument(strprintf("%.*s: %.*s: bad value \"%.*s\": %s; expected %s",
                                   static_cast<int>(where.size()), where.data(),
                                   static_cast<int>(key.size()), key.data(),
                                   static_cast<int>(value.size()), value.data(),
                                   s.message().c_str(), expectedForm(def).c_str()));
}

Status validateValue(const SettingDef& def, std::string_view text) {
  switch (def.type) {
    case Type::kInt: return validateInt(def, text);
    case Type::kString:
    case Type::kList: return Status::ok();
    case Type::kPathLevel: return validatePathLevel(text);
    case Type::kEnum: return validateEnum(def, text);
    case Type::kIfList: return parseIfList(text).status();
    case Type::kAlgoList: return parseAlgoSelection(text).status();
    case Type::kProtoList: return parseProtoSelection(text).status();
    case Type::kNetDevsPolicy: return parseNetDevsPolicy(text).status();
    case Type::kSubsysList: return validateSubsys(text);
  }
  return internalError("unknown setting type");
}

}  // namespace weft::config
