// The rules of weft's YAML tuner: parsed from a `TUNER_RULES:` list, matched first-match per
// call. Pure (yaml-cpp and the standard library only), shared by the plugin and by weft's
// policy loader, which checks the same list when it reads the policy file.
//
//   TUNER_RULES:
//     - {coll: allreduce, size: 0-64K, nodes: 2-, algo: tree, proto: ll}
//     - {coll: [allgather, reducescatter], size: 1M-, arch: hopper, channels: 16}
//
// Match keys (all optional; a missing key matches anything): coll (name or list), size (bytes:
// N, A-B, A- or -B, with K/M/G/T binary units, inclusive), nodes, ranks and pipe_ops (N, A-B,
// A- or -B), reg_buff (0 or 1), arch (sm number like 90, or volta/ampere/hopper/blackwell; or a
// list), host (a glob on the host name, like a policy profile's; or a list). Action keys, at least one: algo, proto (NCCL's names, any case), channels (1..64).
//
// NVIDIA's ext-tuner CSV (nccl_tuner.conf) is read too, into the same rules, but checked:
// an unknown value is an error with its line instead of a silent default.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Node;
}

namespace weft::tuneryaml {

struct Range {
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
  bool contains(uint64_t v) const { return v >= min && v <= max; }
};

struct Rule {
  std::string where;          // "weft.yaml:12", for logs
  unsigned collMask = 0x1f;   // bit per ncclFunc_t 0..4
  Range bytes, nodes, ranks, pipeOps;
  int regBuff = -1;           // 0 or 1; -1: any
  std::vector<int> archs;     // sm numbers (70, 80, 90, 100, …); empty: any
  std::vector<std::string> hosts;  // fnmatch globs; empty: any
  int algo = -1;              // NCCL algorithm index, -1: keep
  int proto = -1;             // NCCL protocol index, -1: keep
  int channels = 0;           // 0: keep
};

// What a rule list is checked against at a call.
struct Query {
  int coll = 0;
  size_t bytes = 0;
  size_t nRanks = 0, nNodes = 0;
  int arch = 0;  // 0: unknown; rules with `arch` then never match
  int numPipeOps = 1;
  int regBuff = -1;  // -1: unknown (v3 hosts); rules with reg_buff then never match
  std::string_view host{};  // this machine's name; rules with `host` never match an empty one
};

// Parses a TUNER_RULES list (`node`, from file `path`). Returns the error text
// ("path:line: …"), empty on success; `out` is written only on success.
std::string parseRules(const YAML::Node& node, const std::string& path, std::vector<Rule>& out);

// Reads `text` (a YAML document, file `path`) and parses its top-level TUNER_RULES key, if
// any. Error text as parseRules, or a YAML syntax error with its line.
std::string parseRulesDocument(std::string_view text, const std::string& path, std::vector<Rule>& out);

// Reads NVIDIA ext-tuner CSV lines: collective,min_bytes,max_bytes,algorithm,protocol,channels,
// nNodes,nRanks[,numPipeOps[,regBuff]]; '#' comments and blank lines skipped; -1 for "any"
// (channels: "keep"). Error text "path:line: …", empty on success.
std::string parseCsvRules(std::string_view text, const std::string& path, std::vector<Rule>& out);

// The first rule that matches, or null.
const Rule* firstMatch(const std::vector<Rule>& rules, const Query& q);

// Applies a rule to NCCL's cost table (row-major float[7][3]): algo+proto zero that cell;
// algo alone zeroes its cheapest usable protocol, proto alone its cheapest usable algorithm.
// Cells that are IGNORE (negative) are never touched. Returns false when the rule asked for an
// algorithm/protocol the table has disabled here (nothing changed).
bool applyRule(const Rule& rule, float* table, int* nChannels);

// Parses a byte count: digits with an optional K, M, G or T (binary) suffix; false on error.
bool parseBytes(std::string_view text, uint64_t& out);

// Name lookups (case-insensitive), -1 when unknown.
int collIndex(std::string_view name);
int algoIndex(std::string_view name);
int protoIndex(std::string_view name);
const char* algoName(int algo);
const char* protoName(int proto);

}  // namespace weft::tuneryaml
