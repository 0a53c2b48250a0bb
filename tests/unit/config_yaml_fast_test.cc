// The fast YAML reader must give exactly yaml-cpp's tree (values, tags, positions) whenever it
// accepts a text, and decline everything outside its subset.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "core/config/yaml_fast.h"
#include "tests/support/corpus.h"

namespace weft::config {
namespace {

void expectSameAsYamlCpp(const std::string& text, bool mustAccept) {
  std::optional<YamlNode> fast = parseSimpleYaml(text);
  if (mustAccept) {
    ASSERT_TRUE(fast.has_value()) << "declined:\n" << text;
  }
  if (!fast) return;
  auto slow = parseYamlWithYamlCpp(text, "t.yaml");
  ASSERT_TRUE(slow.isOk()) << "fast reader accepted what yaml-cpp rejects: " << slow.status().message() << "\n" << text;
  EXPECT_TRUE(sameTree(*fast, *slow)) << text;
}

TEST(YamlFast, ReadsPoliciesExactlyAsYamlCpp) {
  expectSameAsYamlCpp("DEBUG: WARN  # trailing\nNET_PLUGIN: [ib, ofi]\nSOCKET_IFNAME: ^docker,lo\n", true);
  expectSameAsYamlCpp("# header\n\nA: 1\nB: \"quoted: yes\"\nC: 'single'\nD: -2\nE: =mlx5_0:1,mlx5_1:1\n", true);
  expectSameAsYamlCpp(
      "profiles:\n"
      "  - match: {host: \"gpu-a*\", gpus: 8}\n"
      "    settings:\n"
      "      IB_TIMEOUT: 22\n"
      "  - match: {nodes: 16+, arch: sm90+}\n"
      "    settings:\n"
      "      PROTO: \"LL,LL128,Simple;allgather:LL,Simple\"\n"
      "LAST: x\n",
      true);
  expectSameAsYamlCpp("list:\n- a\n- b\nnext: [ ]\nempty: {}\n", true);
  expectSameAsYamlCpp("a:\n    deep:\n        deeper: v\nb: [x,y , z]\n", true);
  expectSameAsYamlCpp("m: {host: [\"a*\", b], n: {x: 1}}\ns: [[1, 2], {k: v}]\n", true);
}

TEST(YamlFast, DeclinesWhatItDoesNotRead) {
  for (const char* text : {"a: &x 1\nb: *x\n", "a: !tag v\n", "a: |\n  block\n", "a:\n", "a: null\n", "a: ~\n",
                           "---\na: 1\n", "a: \"esc\\n\"\n", "a:\tb\n", "a: b\n  c\n", "a: [1, [2, [3, [4, [5, [6]]]]]]\n",
                           "? complex\n: v\n", "a: b: c\n", "- top\n", "a: 'it''s'\n", "a: \xc3\xa9\n"}) {
    EXPECT_FALSE(parseSimpleYaml(text).has_value()) << text;
  }
}

TEST(YamlFast, RepositoryPoliciesTakeTheFastPath) {
  std::filesystem::path root(WEFT_SOURCE_DIR);
  std::vector<std::filesystem::path> files = {root / "examples/weft.yaml"};
  for (const auto& e : std::filesystem::directory_iterator(root / "tests/data/config"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    expectSameAsYamlCpp(test::readFile(f), f.filename() != "quirks.yaml");
  }
}

// Random documents built from the subset's pieces: whatever the fast reader accepts, yaml-cpp
// reads identically.
TEST(YamlFast, RandomSubsetDocumentsMatchYamlCpp) {
  std::mt19937 rng(12345);
  const char* values[] = {"WARN", "1", "-2", "0x10", "^docker,lo", "=mlx5_0:1", "\"LL;x:y\"", "'s'", "[a, b]",
                          "{k: v, n: 2}", "[]", "sm90+", "{h: [a, \"b\"], g: 8}", "[[1, 2], []]", "a#b", "x # comment", "16+"};
  for (int doc = 0; doc < 2000; ++doc) {
    std::string text;
    int entries = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < entries; ++e) {
      switch (rng() % 4) {
        case 0: text += "# note\n"; break;
        case 1: text += "\n"; break;
        default: break;
      }
      text += "K" + std::to_string(e) + ":";
      if (rng() % 5 == 0) {
        text += "\n  - match: {host: h" + std::to_string(e) + "}\n    settings:\n      X: " +
                values[rng() % std::size(values)] + "\n";
      } else {
        text += std::string(" ") + values[rng() % std::size(values)] + "\n";
      }
    }
    expectSameAsYamlCpp(text, false);
  }
}

}  // namespace
}  // namespace weft::config
