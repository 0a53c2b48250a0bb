// NCCL_ALGO / NCCL_PROTO: "[^]list[;func:[^]list]…", as NCCL's parseList reads them: tokens
// compared whole (case-insensitive), so " Tree" or " allreduce" is an unknown name as in NCCL,
// and only a section at the very start of the value may go without a function (";Ring" fails in
// NCCL: strtok's first token no longer starts the string). Stricter than NCCL where it would
// silently drop something ("allreduce:ring:tree", an empty list).
#include <span>

#include "core/base/strings.h"
#include "core/config/values.h"

namespace weft::config {
namespace {

constexpr const char* kFuncNames[kNumFuncs] = {"Broadcast", "Reduce",    "AllGather",
                                               "ReduceScatter", "AllReduce", "SendRecv"};
constexpr const char* kAlgoNames[kNumAlgos] = {"Tree", "Ring",     "CollNetDirect", "CollNetChain",
                                               "NVLS", "NVLSTree", "PAT"};
constexpr const char* kProtoNames[kNumProtos] = {"LL", "LL128", "Simple"};

// Index of `word` in `names` (case-insensitive), or an error that names the closest one.
Result<int> lookupName(std::string_view word, std::span<const char* const> names, const char* what) {
  for (size_t i = 0; i < names.size(); ++i)
    if (iequals(word, names[i])) return static_cast<int>(i);
  // Only a word that matched nothing pays for the distances.
  size_t bestDist = 3;
  const char* best = nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    size_t d = editDistance(word, names[i]);
    if (d < bestDist) {
      bestDist = d;
      best = names[i];
    }
  }
  std::string msg = strprintf("unknown %s \"%.*s\"", what, static_cast<int>(word.size()), word.data());
  if (best != nullptr) msg += strprintf(" (did you mean %s?)", best);
  return invalidArgument(msg);
}

// "[^]a,b,c" -> bit mask over `names`.
Result<uint32_t> parseItems(std::string_view list, std::span<const char* const> names, const char* what) {
  bool negate = !list.empty() && list.front() == '^';
  if (negate) list.remove_prefix(1);
  uint32_t mask = 0;
  for (std::string_view item : split(list, ',')) {
    if (item.empty()) continue;  // strtok: empty items vanish
    WEFT_ASSIGN_OR_RETURN(int i, lookupName(item, names, what));
    mask |= 1u << i;
  }
  if (!negate && mask == 0) return invalidArgument(std::string("no ") + what + " in \"" + std::string(list) + "\"");
  uint32_t all = (1u << names.size()) - 1;
  return negate ? all & ~mask : mask;
}

Result<Selection> parseSelection(std::string_view text, std::span<const char* const> names, const char* what) {
  Selection out;
  bool first = true;
  for (std::string_view section : split(text, ';')) {
    if (section.empty()) continue;  // NCCL tokenizes with strtok: empty sections vanish
    size_t colon = section.find(':');
    std::string_view list = colon == std::string_view::npos ? section : section.substr(colon + 1);
    bool atStart = section.data() == text.data();
    if (colon == std::string_view::npos && first && !atStart) {
      return invalidArgument("\"" + std::string(section) +
                             "\": only a section at the start of the value may go without a function (NCCL "
                             "fails on a leading ';')");
    }
    if (colon == std::string_view::npos && !first) {
      return invalidArgument("\"" + std::string(section) +
                             "\": every section after the first needs a function, as in allreduce:" +
                             std::string(section));
    }
    if (list.find(':') != std::string_view::npos) {
      return invalidArgument("\"" + std::string(section) + "\": more than one ':' (expected func:list)");
    }
    WEFT_ASSIGN_OR_RETURN(uint32_t mask, parseItems(list, names, what));
    if (colon == std::string_view::npos) {
      out.perFunc.fill(mask);
    } else {
      WEFT_ASSIGN_OR_RETURN(int f, lookupName(section.substr(0, colon), kFuncNames, "function"));
      out.perFunc[static_cast<size_t>(f)] = mask;
    }
    first = false;
  }
  if (first) return invalidArgument(std::string("no ") + what + " in \"" + std::string(text) + "\"");
  return out;
}

}  // namespace

const char* funcName(Func f) { return kFuncNames[static_cast<int>(f)]; }
const char* algoName(Algo a) { return kAlgoNames[static_cast<int>(a)]; }
const char* protoName(Proto p) { return kProtoNames[static_cast<int>(p)]; }

bool Selection::empty() const {
  for (const auto& m : perFunc)
    if (m) return false;
  return true;
}

bool Selection::allows(Func f, int i, bool byDefault) const {
  const auto& m = perFunc[static_cast<size_t>(f)];
  if (!m) return byDefault;
  return (*m >> i) & 1u;
}

Result<Selection> parseAlgoSelection(std::string_view text) {
  return parseSelection(text, kAlgoNames, "algorithm");
}

Result<Selection> parseProtoSelection(std::string_view text) {
  return parseSelection(text, kProtoNames, "protocol");
}

}  // namespace weft::config
