// Loading settings: the environment, the YAML policy and NCCL's conf files, combined with
// NCCL's precedence and checked at load.
//
//   auto policy = config::Policy::load(config::Inputs::fromProcess());   // once
//   config::Settings s = policy->resolve({.host = "gpu01", .nodes = 4});  // per communicator
//
// Precedence, highest first: environment; YAML profiles (later over earlier); YAML top-level
// keys; NCCL_CONF_FILE or ~/.nccl.conf; /etc/nccl.conf; built-in defaults.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "core/base/status.h"
#include "core/config/environment.h"
#include "core/config/settings.h"
#include "core/config/sources.h"

namespace weft::config {

// Everything a load reads, explicit so that tests never depend on the real environment.
struct Inputs {
  EnvMap env;                   // NCCL_* and WEFT_* variables
  std::string homeDir;          // ~ for ~/.nccl.conf and ~/.config/weft/weft.yaml; "" = none
  std::string etcDir = "/etc";  // for /etc/nccl.conf and /etc/weft.yaml; "" = none
  std::string yamlPath;         // a YAML policy read instead of looking for one; must exist

  // This process: processEnvironment(), the user's home directory from the password database
  // (as NCCL finds ~/.nccl.conf), and /etc.
  static Inputs fromProcess();
};

// A file a load looked for.
struct FileRead {
  std::string path;
  std::string role;  // "YAML policy from WEFT_CONFIG", "NCCL_CONF_FILE", "~/.nccl.conf", "/etc/nccl.conf"
  bool found = false;
};

// Every source, read and checked, before the facts of a communicator are known.
class Policy {
 public:
  Policy() = default;
  Policy(std::vector<Entry> env, std::optional<YamlPolicy> yaml, std::vector<ConfFile> confs);

  // Reads and checks the environment map, the YAML policy (inputs.yamlPath, else $WEFT_CONFIG,
  // else ~/.config/weft/weft.yaml, else /etc/weft.yaml) and the conf files (NCCL_CONF_FILE or
  // ~/.nccl.conf, then /etc/nccl.conf). Unknown NCCL_* variables, and conf-file names weft does
  // not read, are one WARN line. The first bad file, key or value is the error.
  static Result<Policy> load(const Inputs& inputs);

  // The effective settings for a communicator that knows `facts`. Profiles whose match tests a
  // fact that is not known do not apply.
  Settings resolve(const Facts& facts) const;

  const std::vector<Entry>& env() const { return env_; }
  const std::optional<YamlPolicy>& yaml() const { return yaml_; }
  const std::vector<ConfFile>& confFiles() const { return confs_; }
  const std::vector<FileRead>& files() const { return files_; }
  const std::vector<UnknownName>& unknown() const { return unknown_; }

 private:
  std::vector<Entry> env_;
  std::optional<YamlPolicy> yaml_;
  std::vector<ConfFile> confs_;
  std::vector<FileRead> files_;
  std::vector<UnknownName> unknown_;
};

// Policy::load + resolve, then logEffective: what a communicator calls.
Result<Settings> loadSettings(const Inputs& inputs, const Facts& facts);

// For every value that differs from its default, the INFO (ENV) line NCCL prints:
// "NCCL_ALGO set by environment to Ring." or "NCCL_ALGO set by weft.yaml:3 to Ring.".
std::vector<std::string> effectiveLines(const Settings& settings);
void logEffective(const Settings& settings);

// The logger options the settings ask for (NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE).
log::Options logOptions(const Settings& settings);

}  // namespace weft::config
