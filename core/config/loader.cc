#include "core/config/loader.h"

#include <pwd.h>
#include <unistd.h>

#include "core/base/strings.h"

namespace weft::config {
namespace {

std::string userHome() {
  // NCCL finds ~/.nccl.conf through the password database, not $HOME.
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* out = nullptr;
  if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &out) != 0 || out == nullptr) return "";
  return out->pw_dir != nullptr ? out->pw_dir : "";
}

std::string envValue(const EnvMap& env, std::string_view name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

// Known variables become entries; unknown NCCL_* ones (and WEFT_* ones that look like a
// misspelt setting) are collected for the WARN line.
Status readEnv(const EnvMap& env, std::vector<Entry>& out, std::vector<UnknownName>& unknown) {
  for (const auto& [name, value] : env) {
    const SettingDef* def = findEnvDef(name);
    if (def == nullptr) {
      std::optional<std::string> hint = suggestName(name);
      if (startsWith(name, "NCCL_") || hint) unknown.push_back({name, "env", hint});
      continue;
    }
    // An empty variable is unset for NCCL, but it still shadows the conf files.
    WEFT_TRY(checkValue(*def, name, value, "env"));
    out.push_back(Entry{def, name, value, "env", 0});
  }
  return Status::ok();
}

std::string joinPath(const std::string& dir, const char* rest) {
  return dir.empty() ? std::string() : dir + rest;
}

// The YAML policy file to read, "" for none, and its role.
Result<FileRead> findYaml(const Inputs& in) {
  if (!in.yamlPath.empty()) return FileRead{in.yamlPath, "YAML policy from --yaml", true};
  if (std::string p = envValue(in.env, "WEFT_CONFIG"); !p.empty()) return FileRead{p, "YAML policy from WEFT_CONFIG", true};
  for (std::string p : {joinPath(in.homeDir, "/.config/weft/weft.yaml"), joinPath(in.etcDir, "/weft.yaml")}) {
    if (p.empty()) continue;
    if (access(p.c_str(), F_OK) == 0) return FileRead{p, "YAML policy", true};
  }
  return FileRead{};
}

Result<std::optional<YamlPolicy>> readYaml(const Inputs& in, std::vector<FileRead>& files) {
  WEFT_ASSIGN_OR_RETURN(FileRead f, findYaml(in));
  if (f.path.empty()) return std::optional<YamlPolicy>();
  WEFT_ASSIGN_OR_RETURN(std::optional<std::string> text, readTextFile(f.path));
  if (!text) return invalidArgument(f.path + ": no such file (" + f.role + ")");
  files.push_back(f);
  WEFT_ASSIGN_OR_RETURN(YamlPolicy y, parseYamlPolicy(*text, f.path));
  return std::optional<YamlPolicy>(std::move(y));
}

// One conf file. NCCL ignores a conf file it cannot open; so does weft, with a WARN when the
// user named the file or it exists but cannot be read.
Status readConf(const std::string& path, const char* role, Source source, bool named,
                std::vector<ConfFile>& out, std::vector<FileRead>& files) {
  if (path.empty()) return Status::ok();
  auto text = readTextFile(path);
  if (!text.isOk() || (!text->has_value() && named)) {
    WEFT_WARN("%s %s cannot be read (%s); ignoring it, as NCCL does", role, path.c_str(),
              text.isOk() ? "no such file" : text.status().message().c_str());
  }
  files.push_back(FileRead{path, role, text.isOk() && text->has_value()});
  if (!text.isOk() || !text->has_value()) return Status::ok();
  WEFT_ASSIGN_OR_RETURN(ConfFile conf, parseConfFile(**text, path, source));
  out.push_back(std::move(conf));
  return Status::ok();
}

void warnUnknown(const std::vector<UnknownName>& unknown) {
  if (unknown.empty()) return;
  std::string list;
  for (const UnknownName& u : unknown) {
    list += (list.empty() ? "" : ", ") + u.name + " (" + u.where;
    if (u.suggestion) list += "; did you mean " + *u.suggestion + "?";
    list += ")";
  }
  WEFT_WARN("Ignoring settings weft does not read: %s", list.c_str());
}

Value toValue(const Entry& e, Source source, int order) {
  bool full = e.key == e.def->name;
  return Value{e.value, source, e.where, order, full ? "" : e.key, isAliasOf(*e.def, e.key)};
}

}  // namespace

Inputs Inputs::fromProcess() {
  Inputs in;
  in.env = processEnvironment();
  in.homeDir = userHome();
  return in;
}

Policy::Policy(std::vector<Entry> env, std::optional<YamlPolicy> yaml, std::vector<ConfFile> confs)
    : env_(std::move(env)), yaml_(std::move(yaml)), confs_(std::move(confs)) {}

Result<Policy> Policy::load(const Inputs& in) {
  Policy p;
  WEFT_TRY(readEnv(in.env, p.env_, p.unknown_));
  WEFT_ASSIGN_OR_RETURN(p.yaml_, readYaml(in, p.files_));
  std::string named = envValue(in.env, "NCCL_CONF_FILE");
  if (!named.empty()) {
    WEFT_TRY(readConf(named, "NCCL_CONF_FILE", Source::kConfFile, true, p.confs_, p.files_));
  } else {
    WEFT_TRY(readConf(joinPath(in.homeDir, "/.nccl.conf"), "~/.nccl.conf", Source::kConfFile, false, p.confs_, p.files_));
  }
  WEFT_TRY(readConf(joinPath(in.etcDir, "/nccl.conf"), "/etc/nccl.conf", Source::kEtcConf, false, p.confs_, p.files_));
  for (const ConfFile& c : p.confs_) p.unknown_.insert(p.unknown_.end(), c.unknown.begin(), c.unknown.end());
  warnUnknown(p.unknown_);
  return p;
}

Settings Policy::resolve(const Facts& facts) const {
  Settings s;
  // Earlier conf-file lines win (NCCL's setenv never overwrites), hence order = -line.
  for (const ConfFile& c : confs_)
    for (const Entry& e : c.entries) s.add(*e.def, toValue(e, c.source, -e.line));
  if (yaml_) {
    for (const Entry& e : yaml_->base) s.add(*e.def, toValue(e, Source::kYaml, 0));
    for (size_t i = 0; i < yaml_->profiles.size(); ++i) {
      const Profile& prof = yaml_->profiles[i];
      if (!prof.match.holds(facts)) continue;
      for (const Entry& e : prof.settings) s.add(*e.def, toValue(e, Source::kYamlProfile, static_cast<int>(i)));
    }
  }
  for (const Entry& e : env_) s.add(*e.def, toValue(e, Source::kEnv, 0));
  return s;
}

Result<Settings> loadSettings(const Inputs& inputs, const Facts& facts) {
  WEFT_ASSIGN_OR_RETURN(Policy p, Policy::load(inputs));
  Settings s = p.resolve(facts);
  logEffective(s);
  return s;
}

std::vector<std::string> effectiveLines(const Settings& settings) {
  std::vector<std::string> out;
  for (const SettingDef& d : table()) {
    const Value* w = settings.winner(d);
    if (w == nullptr || w->text.empty() || w->text == d.defaultValue) continue;
    std::string name = w->alias ? w->setAs : std::string(d.name);
    std::string by = w->source == Source::kEnv ? "environment" : w->where;
    out.push_back(name + " set by " + by + " to " + w->text + ".");
  }
  return out;
}

void logEffective(const Settings& settings) {
  if (!log::processLogger().enabled(log::Level::kInfo, log::kEnv)) return;
  for (const std::string& line : effectiveLines(settings)) WEFT_INFO(log::kEnv, "%s", line.c_str());
}

log::Options logOptions(const Settings& settings) {
  log::Options o;
  o.level = log::parseLevel(settings.string("NCCL_DEBUG"));
  o.mask = log::parseSubsysMask(settings.string("NCCL_DEBUG_SUBSYS"));
  o.file = settings.string("NCCL_DEBUG_FILE");
  return o;
}

}  // namespace weft::config
