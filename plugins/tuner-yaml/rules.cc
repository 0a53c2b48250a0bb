#include "plugins/tuner-yaml/rules.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace weft::tuneryaml {
namespace {

constexpr int kAlgos = 7;
constexpr int kProtos = 3;
constexpr int kMaxChannels = 64;  // MAXCHANNELS in NCCL 2.28

const char* const kColls[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
const char* const kAlgoNames[kAlgos] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
const char* const kProtoNames[kProtos] = {"LL", "LL128", "Simple"};

// Lower case without '_' or '-': "collnet_direct", "CollNetDirect" and "all-reduce" compare equal.
std::string folded(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

template <size_t N>
int lookup(const char* const (&names)[N], std::string_view name) {
  std::string f = folded(name);
  for (size_t i = 0; i < N; ++i) {
    if (folded(names[i]) == f) return static_cast<int>(i);
  }
  return -1;
}

std::string list(const char* const* names, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += std::string(i ? ", " : "") + names[i];
  return out;
}

struct Ctx {
  const std::string& path;
  std::string at(const YAML::Node& n) const { return path + ":" + std::to_string(n.Mark().line + 1); }
};

bool parseCount(std::string_view t, uint64_t& out) {
  if (t.empty()) return false;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size();
}

// "N", "A-B", "A-", "-B" through `one` for each end.
template <typename One>
bool parseRange(std::string_view t, Range& r, One one) {
  size_t dash = t.find('-');
  if (dash == std::string_view::npos) {
    if (!one(t, r.min)) return false;
    r.max = r.min;
    return true;
  }
  std::string_view a = t.substr(0, dash), b = t.substr(dash + 1);
  if (a.empty() && b.empty()) return false;
  if (!a.empty() && !one(a, r.min)) return false;
  if (!b.empty() && !one(b, r.max)) return false;
  return r.min <= r.max;
}

std::string trimmed(std::string s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

int archOf(std::string_view t) {
  static const struct { const char* name; int sm; } kNames[] = {
      {"volta", 70}, {"turing", 75}, {"ampere", 80}, {"ada", 89}, {"hopper", 90}, {"blackwell", 100}};
  for (const auto& n : kNames) {
    if (folded(t) == n.name) return n.sm;
  }
  std::string_view digits = t.substr(0, 2) == "sm" ? t.substr(2) : t;
  uint64_t v = 0;
  return parseCount(digits, v) && v >= 30 && v <= 1000 ? static_cast<int>(v) : -1;
}

// A scalar or a list of scalars, each through `item`.
template <typename Item>
std::string eachScalar(const Ctx& c, const std::string& key, const YAML::Node& v, Item item) {
  if (v.IsScalar()) return item(v);
  if (!v.IsSequence() || v.size() == 0) return c.at(v) + ": " + key + ": expected a name or a list of names";
  for (const YAML::Node& x : v) {
    if (!x.IsScalar()) return c.at(x) + ": " + key + ": list items must be names";
    std::string e = item(x);
    if (!e.empty()) return e;
  }
  return {};
}

std::string parseKey(const Ctx& c, const std::string& key, const YAML::Node& v, Rule& r, unsigned& seenColl) {
  auto scalar = [&]() -> std::string { return v.IsScalar() ? trimmed(v.Scalar()) : std::string(); };
  auto bad = [&](const std::string& expected) {
    return c.at(v) + ": " + key + ": bad value" + (v.IsScalar() ? " \"" + v.Scalar() + "\"" : "") + "; expected " +
           expected;
  };
  if (key == "coll") {
    return eachScalar(c, key, v, [&](const YAML::Node& x) -> std::string {
      int i = collIndex(trimmed(x.Scalar()));
      if (i < 0) return c.at(x) + ": coll: unknown collective \"" + x.Scalar() + "\"; expected " + list(kColls, 5);
      seenColl |= 1u << i;
      return {};
    });
  }
  if (key == "arch") {
    return eachScalar(c, key, v, [&](const YAML::Node& x) -> std::string {
      int a = archOf(trimmed(x.Scalar()));
      if (a < 0) return c.at(x) + ": arch: unknown architecture \"" + x.Scalar() + "\"; expected an sm number (90) or volta, ampere, hopper, blackwell";
      r.archs.push_back(a);
      return {};
    });
  }
  if (key == "host") {
    return eachScalar(c, key, v, [&](const YAML::Node& x) -> std::string {
      std::string glob = trimmed(x.Scalar());
      if (glob.empty()) return c.at(x) + ": host: empty host name pattern";
      r.hosts.push_back(std::move(glob));
      return {};
    });
  }
  std::string s = scalar();
  if (key == "size") return parseRange(s, r.bytes, parseBytes) ? "" : bad("bytes as N, A-B, A- or -B with K/M/G/T units (0-64K)");
  if (key == "pipe_ops") return parseRange(s, r.pipeOps, parseCount) ? "" : bad("a count as N, A-B, A- or -B");
  if (key == "reg_buff") return s == "0" || s == "1" ? (r.regBuff = s[0] - '0', "") : bad("0 or 1");
  if (key == "nodes") return parseRange(s, r.nodes, parseCount) ? "" : bad("a count as N, A-B, A- or -B");
  if (key == "ranks") return parseRange(s, r.ranks, parseCount) ? "" : bad("a count as N, A-B, A- or -B");
  if (key == "algo") return (r.algo = algoIndex(s)) >= 0 ? "" : bad("one of " + list(kAlgoNames, kAlgos));
  if (key == "proto") return (r.proto = protoIndex(s)) >= 0 ? "" : bad("one of " + list(kProtoNames, kProtos));
  if (key == "channels") {
    uint64_t n = 0;
    if (!parseCount(s, n) || n < 1 || n > kMaxChannels) return bad("a channel count from 1 to 64");
    r.channels = static_cast<int>(n);
    return {};
  }
  return c.at(v) + ": unknown rule key \"" + key + "\"; expected coll, size, nodes, ranks, pipe_ops, reg_buff, arch, host, algo, proto, channels";
}

std::string parseRule(const Ctx& c, const YAML::Node& item, Rule& r) {
  if (!item.IsMap()) return c.at(item) + ": a rule must be a map ({coll: allreduce, size: 0-64K, algo: tree})";
  r.where = c.at(item);
  unsigned seenColl = 0;
  std::vector<std::string> keys;
  for (const auto& kv : item) {
    if (!kv.first.IsScalar()) return c.at(kv.first) + ": rule keys must be names";
    std::string key = kv.first.Scalar();
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return c.at(kv.first) + ": duplicate rule key " + key;
    keys.push_back(key);
    std::string e = parseKey(c, key, kv.second, r, seenColl);
    if (!e.empty()) return e;
  }
  if (seenColl != 0) r.collMask = seenColl;
  if (r.algo < 0 && r.proto < 0 && r.channels == 0) {
    return r.where + ": the rule sets nothing; give algo, proto and/or channels";
  }
  return {};
}

}  // namespace

int collIndex(std::string_view name) { return lookup(kColls, name); }
int algoIndex(std::string_view name) { return lookup(kAlgoNames, name); }
int protoIndex(std::string_view name) { return lookup(kProtoNames, name); }
const char* algoName(int a) { return a >= 0 && a < kAlgos ? kAlgoNames[a] : "-"; }
const char* protoName(int p) { return p >= 0 && p < kProtos ? kProtoNames[p] : "-"; }

bool parseBytes(std::string_view t, uint64_t& out) {
  if (t.empty()) return false;
  uint64_t scale = 1;
  switch (std::toupper(static_cast<unsigned char>(t.back()))) {
    case 'K': scale = 1ull << 10; break;
    case 'M': scale = 1ull << 20; break;
    case 'G': scale = 1ull << 30; break;
    case 'T': scale = 1ull << 40; break;
    default: break;
  }
  if (scale != 1) t.remove_suffix(1);
  uint64_t v = 0;
  if (!parseCount(t, v) || v > UINT64_MAX / scale) return false;
  out = v * scale;
  return true;
}

std::string parseRules(const YAML::Node& node, const std::string& path, std::vector<Rule>& out) {
  Ctx c{path};
  if (node.IsNull()) {
    out.clear();
    return {};
  }
  if (!node.IsSequence()) return c.at(node) + ": TUNER_RULES: expected a list of rules";
  std::vector<Rule> rules;
  for (const YAML::Node& item : node) {
    Rule r;
    std::string e = parseRule(c, item, r);
    if (!e.empty()) return e;
    rules.push_back(std::move(r));
  }
  out = std::move(rules);
  return {};
}

std::string parseRulesDocument(std::string_view text, const std::string& path, std::vector<Rule>& out) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (root.IsNull()) {
      out.clear();
      return {};
    }
    if (!root.IsMap()) return path + ":" + std::to_string(root.Mark().line + 1) + ": expected a map at the top";
    for (const auto& kv : root) {
      if (kv.first.IsScalar() && kv.first.Scalar() == "TUNER_RULES") return parseRules(kv.second, path, out);
    }
    out.clear();
    return {};
  } catch (const YAML::Exception& e) {
    return path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
  }
}

namespace {

// One CSV field: -1 means "any" (kept as the default range); otherwise `one` parses it.
template <typename One>
bool csvRange(std::string_view t, Range& r, One one) {
  if (t == "-1") return true;
  uint64_t v = 0;
  if (!one(t, v)) return false;
  r.min = r.max = v;
  return true;
}

std::vector<std::string> csvFields(std::string_view line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    out.push_back(trimmed(std::string(line.substr(start, comma == std::string_view::npos ? comma : comma - start))));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::string csvRule(const std::vector<std::string>& f, const std::string& where, Rule& r) {
  auto bad = [&](const char* field, const std::string& v, const std::string& expected) {
    return where + ": " + field + " \"" + v + "\": expected " + expected;
  };
  r.where = where;
  int coll = collIndex(f[0]);
  if (coll < 0) return bad("collective_type", f[0], list(kColls, 5));
  r.collMask = 1u << coll;
  if (!parseBytes(f[1], r.bytes.min)) return bad("min_bytes", f[1], "a byte count");
  if (!parseBytes(f[2], r.bytes.max)) return bad("max_bytes", f[2], "a byte count");
  if (r.bytes.min > r.bytes.max) return where + ": min_bytes " + f[1] + " is above max_bytes " + f[2];
  if ((r.algo = algoIndex(f[3])) < 0) return bad("algorithm", f[3], "one of " + list(kAlgoNames, kAlgos));
  if ((r.proto = protoIndex(f[4])) < 0) return bad("protocol", f[4], "one of " + list(kProtoNames, kProtos));
  uint64_t ch = 0;
  if (f[5] != "-1" && (!parseCount(f[5], ch) || ch < 1 || ch > kMaxChannels)) return bad("channels", f[5], "-1 or 1 to 64");
  r.channels = f[5] == "-1" ? 0 : static_cast<int>(ch);
  if (!csvRange(f[6], r.nodes, parseCount)) return bad("nNodes", f[6], "-1 or a count");
  if (!csvRange(f[7], r.ranks, parseCount)) return bad("nRanks", f[7], "-1 or a count");
  if (f.size() > 8 && !csvRange(f[8], r.pipeOps, parseCount)) return bad("numPipeOps", f[8], "-1 or a count");
  if (f.size() > 9) {
    if (f[9] != "-1" && f[9] != "0" && f[9] != "1") return bad("regBuff", f[9], "-1, 0 or 1");
    r.regBuff = std::stoi(f[9]);
  }
  return {};
}

}  // namespace

std::string parseCsvRules(std::string_view text, const std::string& path, std::vector<Rule>& out) {
  std::vector<Rule> rules;
  int lineNo = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string line = trimmed(std::string(text.substr(0, nl)));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(lineNo);
    std::vector<std::string> f = csvFields(line);
    if (f.size() < 8 || f.size() > 10) {
      return where + ": " + std::to_string(f.size()) + " fields; expected collective_type,min_bytes,max_bytes,"
                     "algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]";
    }
    Rule r;
    std::string e = csvRule(f, where, r);
    if (!e.empty()) return e;
    rules.push_back(std::move(r));
  }
  out = std::move(rules);
  return {};
}

const Rule* firstMatch(const std::vector<Rule>& rules, const Query& q) {
  for (const Rule& r : rules) {
    if (q.coll < 0 || q.coll > 4 || (r.collMask & (1u << q.coll)) == 0) continue;
    if (!r.bytes.contains(q.bytes) || !r.nodes.contains(q.nNodes) || !r.ranks.contains(q.nRanks)) continue;
    if (!r.archs.empty() && std::find(r.archs.begin(), r.archs.end(), q.arch) == r.archs.end()) continue;
    if (q.numPipeOps < 0 || !r.pipeOps.contains(static_cast<uint64_t>(q.numPipeOps))) continue;
    if (r.regBuff >= 0 && r.regBuff != q.regBuff) continue;
    if (!r.hosts.empty()) {
      const std::string host(q.host);
      bool any = false;
      for (const std::string& g : r.hosts) any = any || (!host.empty() && fnmatch(g.c_str(), host.c_str(), 0) == 0);
      if (!any) continue;
    }
    return &r;
  }
  return nullptr;
}

bool applyRule(const Rule& rule, float* table, int* nChannels) {
  if (rule.channels > 0) *nChannels = rule.channels;
  if (rule.algo < 0 && rule.proto < 0) return true;
  int best = -1;
  for (int a = 0; a < kAlgos; ++a) {
    if (rule.algo >= 0 && a != rule.algo) continue;
    for (int p = 0; p < kProtos; ++p) {
      if (rule.proto >= 0 && p != rule.proto) continue;
      float v = table[a * kProtos + p];
      if (v >= 0.0f && (best < 0 || v < table[best])) best = a * kProtos + p;  // NaN is never >= 0
    }
  }
  if (best < 0) return false;
  table[best] = 0.0f;
  return true;
}

}  // namespace weft::tuneryaml
