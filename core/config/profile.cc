// Profile matching: does a profile's `match:` hold for what the communicator knows?
#include <fnmatch.h>

#include "core/base/strings.h"
#include "core/config/sources.h"

namespace weft::config {
namespace {

std::string spanText(const IntSpan& s, const char* prefix) {
  if (s.lo == s.hi) return strprintf("%s%lld", prefix, static_cast<long long>(s.lo));
  if (s.hi == INT64_MAX) return strprintf("%s%lld+", prefix, static_cast<long long>(s.lo));
  return strprintf("%s%lld-%s%lld", prefix, static_cast<long long>(s.lo), prefix, static_cast<long long>(s.hi));
}

// Items of one condition are alternatives ("gpu*|login*"); conditions are joined with ", ".
template <typename T, typename Fn>
std::string joined(const std::vector<T>& items, Fn text, const char* sep = "|") {
  std::string out;
  for (const T& i : items) out += (out.empty() ? "" : sep) + text(i);
  return out;
}

bool inSpans(const std::vector<IntSpan>& spans, int64_t v) {
  for (const IntSpan& s : spans)
    if (v >= s.lo && v <= s.hi) return true;
  return false;
}

// "" when the condition holds (or is absent), else why not.
std::string checkSpans(const char* what, const std::vector<IntSpan>& spans, const std::optional<int>& fact,
                       const char* prefix) {
  if (spans.empty()) return "";
  std::string want = joined(spans, [&](const IntSpan& s) { return spanText(s, prefix); });
  if (!fact) return strprintf("%s is unknown (match wants %s)", what, want.c_str());
  if (inSpans(spans, *fact)) return "";
  return strprintf("%s is %s%d, not %s", what, prefix, *fact, want.c_str());
}

std::string checkNames(const char* what, const std::vector<std::string>& wanted,
                       const std::optional<std::string>& fact, bool glob) {
  if (wanted.empty()) return "";
  std::string want = joined(wanted, [](const std::string& s) { return s; });
  if (!fact) return strprintf("%s is unknown (match wants %s)", what, want.c_str());
  for (const std::string& w : wanted) {
    if (glob ? fnmatch(w.c_str(), fact->c_str(), 0) == 0 : iequals(w, *fact)) return "";
  }
  return strprintf("%s is %s, not %s", what, fact->c_str(), want.c_str());
}

}  // namespace

std::string Facts::describe() const {
  auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string("?"); };
  return "host=" + host.value_or("?") + " nodes=" + opt(nodes) + " gpus=" + opt(gpusPerNode) +
         " arch=" + (smArch ? "sm" + std::to_string(*smArch) : std::string("?")) +
         " net=" + netPlugin.value_or("?");
}

Result<int> parseArch(std::string_view text) {
  std::string_view t = trim(text);
  if (t.size() > 2 && iequals(t.substr(0, 2), "sm")) t.remove_prefix(2);
  std::string digits(t);
  if (size_t dot = digits.find('.'); dot != std::string::npos && dot + 2 == digits.size()) {
    digits.erase(dot, 1);  // "9.0" is a compute capability
  }
  auto v = parseInt(digits, 10);
  if (!v || *v < 10 || *v > 999) {
    return invalidArgument("bad GPU architecture \"" + std::string(text) + "\" (expected smXX, as in sm90)");
  }
  return static_cast<int>(*v);
}

std::string Match::whyNot(const Facts& facts) const {
  for (std::string why : {checkNames("host", hosts, facts.host, true),
                          checkSpans("nodes", nodes, facts.nodes, ""),
                          checkSpans("gpus", gpus, facts.gpusPerNode, ""),
                          checkSpans("arch", arch, facts.smArch, "sm"),
                          checkNames("net", nets, facts.netPlugin, false)}) {
    if (!why.empty()) return why;
  }
  return "";
}

bool Match::holds(const Facts& facts) const {
  // The same test as whyNot, without building the explanation: resolve() runs it per profile.
  auto names = [](const std::vector<std::string>& wanted, const std::optional<std::string>& fact, bool glob) {
    if (wanted.empty()) return true;
    if (!fact) return false;
    for (const std::string& w : wanted)
      if (glob ? fnmatch(w.c_str(), fact->c_str(), 0) == 0 : iequals(w, *fact)) return true;
    return false;
  };
  auto spans = [](const std::vector<IntSpan>& wanted, const std::optional<int>& fact) {
    return wanted.empty() || (fact && inSpans(wanted, *fact));
  };
  return names(hosts, facts.host, true) && spans(nodes, facts.nodes) && spans(gpus, facts.gpusPerNode) &&
         spans(arch, facts.smArch) && names(nets, facts.netPlugin, false);
}

std::string Match::describe() const {
  std::vector<std::string> parts;
  auto str = [](const std::string& s) { return s; };
  if (!hosts.empty()) parts.push_back("host=" + joined(hosts, str));
  if (!nodes.empty()) parts.push_back("nodes=" + joined(nodes, [](const IntSpan& s) { return spanText(s, ""); }));
  if (!gpus.empty()) parts.push_back("gpus=" + joined(gpus, [](const IntSpan& s) { return spanText(s, ""); }));
  if (!arch.empty()) parts.push_back("arch=" + joined(arch, [](const IntSpan& s) { return spanText(s, "sm"); }));
  if (!nets.empty()) parts.push_back("net=" + joined(nets, str));
  return joined(parts, str, ", ");
}

}  // namespace weft::config
