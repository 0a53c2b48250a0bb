// Fuzz target: any byte string through the YAML policy parser (and the conf-file parser). Each
// must return an error naming the file, or a policy whose every value is valid for its setting
// and which resolves and prints for any facts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/config/loader.h"
#include "core/config/render.h"
#include "core/config/yaml_fast.h"

namespace {

using namespace weft::config;

void checkSettings(const Settings& s) {
  for (const SettingDef& d : table()) {
    const Value* v = s.lookup(d.name);
    if (v != nullptr && !validateValue(d, v->text).isOk()) std::abort();
  }
}

void checkPolicy(YamlPolicy yaml) {
  Policy policy({}, std::move(yaml), {});
  const Facts factSets[] = {
      {},
      {.host = "gpu-a17", .nodes = 16, .gpusPerNode = 8, .smArch = 90, .netPlugin = "IB"},
      {.host = "login", .nodes = 1, .gpusPerNode = 1, .smArch = 70, .netPlugin = "Socket"},
  };
  for (const Facts& f : factSets) {
    Settings s = policy.resolve(f);
    checkSettings(s);
    (void)renderSettings(s, policy, f, Format::kJson);
    (void)renderExplain(*findDef("NCCL_ALGO"), s, policy, f, Format::kText);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Differential: whatever the fast YAML reader accepts, yaml-cpp must read into the same tree.
  if (std::optional<YamlNode> fast = parseSimpleYaml(text)) {
    auto slow = parseYamlWithYamlCpp(text, "fuzz.yaml");
    if (!slow.isOk() || !sameTree(*fast, *slow)) std::abort();
  }
  auto yaml = parseYamlPolicy(text, "fuzz.yaml");
  if (yaml.isOk()) {
    checkPolicy(std::move(yaml).value());
  } else if (!yaml.status().message().starts_with("fuzz.yaml")) {
    std::abort();  // every error must say which file
  }
  auto conf = parseConfFile(text, "fuzz.conf", Source::kConfFile);
  if (conf.isOk()) {
    for (const Entry& e : conf->entries)
      if (!e.value.empty() && !validateValue(*e.def, e.value).isOk()) std::abort();
  } else if (!conf.status().message().starts_with("fuzz.conf:")) {
    std::abort();
  }
  return 0;
}
