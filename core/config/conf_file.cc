// NCCL conf files (NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf), read as NCCL's
// setEnvFile reads them.
#include "core/base/strings.h"
#include "core/config/sources.h"

namespace weft::config {
namespace {

bool isQuoted(std::string_view v) {
  return v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front();
}

std::string at(std::string_view path, int line, size_t column) {
  return strprintf("%.*s:%d:%zu", static_cast<int>(path.size()), path.data(), line, column);
}

// One "NAME=value" line; `unknown` collects names outside the table.
Status parseLine(std::string_view line, int lineNo, ConfFile& out) {
  size_t eq = line.find('=');
  if (eq == std::string_view::npos) {
    return invalidArgument(at(out.path, lineNo, 1) + ": expected NAME=value, got \"" + std::string(line) + "\"");
  }
  std::string_view name = line.substr(0, eq);
  std::string_view value = line.substr(eq + 1);
  if (trim(name).empty()) return invalidArgument(at(out.path, lineNo, 1) + ": no name before '='");
  if (trim(name) != name) {
    return invalidArgument(at(out.path, lineNo, 1) + ": \"" + std::string(name) +
                           "\" has spaces around the name; NCCL would set a variable of that name, "
                           "which nothing reads: write " + std::string(trim(name)) + "=" +
                           std::string(trim(value)));
  }
  const SettingDef* def = findEnvDef(name);
  if (def == nullptr) {
    out.unknown.push_back({std::string(name), at(out.path, lineNo, 1), suggestName(name)});
    return Status::ok();
  }
  std::string where = at(out.path, lineNo, eq + 2);
  if (def->scope == Scope::kEnvOnly) {
    return invalidArgument(where + ": " + std::string(name) +
                           " can only be set in the environment (it chooses which files are read)");
  }
  if (isQuoted(value)) {
    return invalidArgument(where + ": " + std::string(name) + ": bad value \"" + std::string(value) +
                           "\": NCCL keeps quotes as part of the value in conf files; write " +
                           std::string(name) + "=" + std::string(value.substr(1, value.size() - 2)));
  }
  WEFT_TRY(checkValue(*def, name, value, where));
  out.entries.push_back(Entry{def, std::string(name), std::string(value), strprintf("%s:%d", out.path.c_str(), lineNo), lineNo});
  return Status::ok();
}

}  // namespace

Result<ConfFile> parseConfFile(std::string_view text, std::string_view path, Source source) {
  ConfFile out;
  out.path = std::string(path);
  out.source = source;
  int lineNo = 0;
  for (std::string_view line : split(text, '\n')) {
    ++lineNo;
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
    std::string_view t = trim(line);
    // NCCL skips lines starting with '#' and lines without '='; an indented comment is a
    // comment too (NCCL would set a variable named "  # …" that nothing reads).
    if (t.empty() || t.front() == '#') continue;
    WEFT_TRY(parseLine(line, lineNo, out));
  }
  return out;
}

}  // namespace weft::config
