// Fuzz target: any byte string through the YAML tuner's rule parser. It must return an error
// that names the file, or rules that are all well formed (as YAML and as NVIDIA's CSV); matching and applying them to a cost
// table must never enable a cell that was disabled.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "plugins/tuner-yaml/rules.h"

namespace {

using namespace weft::tuneryaml;

void checkRule(const Rule& r) {
  bool ok = r.collMask != 0 && (r.collMask & ~0x1fu) == 0 && r.bytes.min <= r.bytes.max &&
            r.nodes.min <= r.nodes.max && r.ranks.min <= r.ranks.max && r.algo >= -1 && r.algo < 7 &&
            r.proto >= -1 && r.proto < 3 && r.channels >= 0 && r.channels <= 64 &&
            (r.algo >= 0 || r.proto >= 0 || r.channels > 0) && r.where.starts_with("fuzz.yaml:");
  if (!ok) std::abort();
}

void checkApply(const std::vector<Rule>& rules) {
  const size_t sizes[] = {0, 8, 65536, 65537, 1u << 30, SIZE_MAX};
  for (int coll = -1; coll <= 5; ++coll) {
    for (size_t bytes : sizes) {
      const Rule* r = firstMatch(rules, {.coll = coll, .bytes = bytes, .nRanks = 16, .nNodes = 2, .arch = 90,
                                         .numPipeOps = 1, .regBuff = 0});
      if (r == nullptr) continue;
      if (coll < 0 || coll > 4) std::abort();
      float table[21];
      for (int i = 0; i < 21; ++i) table[i] = i % 4 == 0 ? -1.0f : i % 4 == 1 ? NAN : static_cast<float>(i);
      int channels = 0;
      applyRule(*r, table, &channels);
      for (int i = 0; i < 21; ++i) {
        if (i % 4 == 0 && table[i] != -1.0f) std::abort();        // IGNORE stays IGNORE
        if (i % 4 == 1 && !std::isnan(table[i])) std::abort();    // NaN is never chosen
      }
      if (channels != r->channels) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<Rule> rules;
  std::string err = parseRulesDocument(text, "fuzz.yaml", rules);
  if (!err.empty()) {
    if (!err.starts_with("fuzz.yaml:") || !rules.empty()) std::abort();  // outputs only on success
  }
  for (const Rule& r : rules) checkRule(r);
  checkApply(rules);
  // The same bytes as NVIDIA's ext-tuner CSV.
  std::vector<Rule> csv;
  err = parseCsvRules(text, "fuzz.yaml", csv);
  if (!err.empty()) {
    if (!err.starts_with("fuzz.yaml:") || !csv.empty()) std::abort();
    return 0;
  }
  for (const Rule& r : csv) checkRule(r);
  checkApply(csv);
  return 0;
}
