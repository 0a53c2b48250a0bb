// The files settings come from, parsed and checked but not yet combined: NCCL conf files and
// the YAML policy with its profiles. loader.h combines them with the environment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/config/settings.h"

namespace weft::config {

// One checked NAME=value from a file or the environment.
struct Entry {
  const SettingDef* def = nullptr;
  std::string key;    // as written: NCCL_MIN_NRINGS, MAX_NCHANNELS
  std::string value;  // as NCCL would read it ("" = default)
  std::string where;  // "weft.yaml:3:16", "/etc/nccl.conf:4", "env"
  int line = 0;       // 1-based; 0 for the environment
};

// A name a source gave that is not in the table; reported in one WARN line.
struct UnknownName {
  std::string name;
  std::string where;                      // "env", "/etc/nccl.conf:3"
  std::optional<std::string> suggestion;  // a close known name
};

// ---- NCCL conf files -------------------------------------------------------------------------

struct ConfFile {
  std::string path;
  Source source = Source::kConfFile;  // kConfFile (NCCL_CONF_FILE or ~/.nccl.conf) or kEtcConf
  std::vector<Entry> entries;         // in file order; the first line of a name wins, as in NCCL
  std::vector<UnknownName> unknown;
};

// Reads `text` as NCCL does: NAME=value lines, '#' comments, CR/LF stripped, the value is all
// after the first '=' (quotes kept). Unlike NCCL, a line that NCCL would turn into a variable
// nothing reads (no '=', spaces around the name, quotes around a value) is an error.
Result<ConfFile> parseConfFile(std::string_view text, std::string_view path, Source source);

// ---- profiles --------------------------------------------------------------------------------

// What a communicator knows about where it runs. Unknown facts stay nullopt; a profile that
// tests an unknown fact does not apply.
struct Facts {
  std::optional<std::string> host{};        // host name
  std::optional<int> nodes{};               // number of nodes in the communicator
  std::optional<int> gpusPerNode{};
  std::optional<int> smArch{};              // 90 for sm90 (compute capability 9.0)
  std::optional<std::string> netPlugin{};   // name of the net plugin in use (IB, Socket, …)

  std::string describe() const;  // "host=gpu01 nodes=4 gpus=? arch=sm90 net=?"
};

// "sm90" -> 90. Also accepts "90" and "9.0".
Result<int> parseArch(std::string_view text);

struct IntSpan {
  int64_t lo = 0;
  int64_t hi = 0;  // inclusive
};

// A profile's `match:`. Every listed condition must hold; a list means any of its items.
struct Match {
  std::vector<std::string> hosts;  // fnmatch globs
  std::vector<IntSpan> nodes;
  std::vector<IntSpan> gpus;
  std::vector<IntSpan> arch;
  std::vector<std::string> nets;   // case-insensitive plugin names

  bool holds(const Facts& facts) const;
  // Why it does not hold, e.g. "nodes is 4, not 1-2" or "host is unknown"; "" when it holds.
  std::string whyNot(const Facts& facts) const;
  std::string describe() const;  // "host=gpu*, nodes=2-8"
};

struct Profile {
  Match match;
  std::vector<Entry> settings;
  std::string where;  // "weft.yaml:12"
};

// ---- YAML policy -----------------------------------------------------------------------------

struct YamlPolicy {
  std::string path;
  std::vector<Entry> base;         // top-level keys
  std::vector<Profile> profiles;   // in file order; later ones win
};

// Parses a policy. Errors name file, line, column, key, value and what is expected.
Result<YamlPolicy> parseYamlPolicy(std::string_view text, std::string_view path);

// ---- files -----------------------------------------------------------------------------------

// The contents of `path`, or nullopt when it does not exist; other failures are errors.
Result<std::optional<std::string>> readTextFile(const std::string& path);

}  // namespace weft::config
