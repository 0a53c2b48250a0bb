#include "plugins/net-ib/hca_filter.h"

#include <charconv>

namespace weft::ib {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<HcaFilter::Entry> parseEntry(std::string_view text, std::string* problem) {
  HcaFilter::Entry e;
  std::string_view name = text;
  if (size_t colon = text.find(':'); colon != std::string_view::npos) {
    name = trim(text.substr(0, colon));
    std::string_view port = trim(text.substr(colon + 1));
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), e.port);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || e.port < 1) {
      *problem = "'" + std::string(text) + "': the port must be a positive integer";
      return std::nullopt;
    }
  }
  if (name.empty()) {
    *problem = "'" + std::string(text) + "': no device name";
    return std::nullopt;
  }
  e.name = std::string(name);
  return e;
}

}  // namespace

bool HcaFilter::selects(std::string_view device, int port) const {
  if (entries.empty()) return true;  // "" selects all; "^" alone excludes nothing
  bool matched = false;
  for (const Entry& e : entries) {
    bool nameOk = exact ? device == e.name : device.substr(0, e.name.size()) == e.name;
    if (nameOk && (e.port == -1 || e.port == port)) {
      matched = true;
      break;
    }
  }
  return exclude ? !matched : matched;
}

std::optional<HcaFilter> parseHcaFilter(std::string_view text, std::string* problem) {
  HcaFilter f;
  text = trim(text);
  if (!text.empty() && text.front() == '^') {
    f.exclude = true;
    text.remove_prefix(1);
  }
  if (!text.empty() && text.front() == '=') {
    f.exact = true;
    text.remove_prefix(1);
  }
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = trim(text.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    std::optional<HcaFilter::Entry> e = parseEntry(item, problem);
    if (!e) return std::nullopt;
    f.entries.push_back(std::move(*e));
  }
  return f;
}

}  // namespace weft::ib
