// Where tests find ../shared/corpus: $WEFT_CORPUS_DIR, else the path configured at build time.
// Tests that need it skip with one line when it is absent (a user's fresh clone).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace weft::test {

std::filesystem::path corpusDir();
bool haveCorpus();
// Every *.xml under corpus/topologies, sorted.
std::vector<std::filesystem::path> corpusTopologies();
std::string readFile(const std::filesystem::path& path);

}  // namespace weft::test

#define WEFT_REQUIRE_CORPUS()                                                          \
  do {                                                                                 \
    if (!::weft::test::haveCorpus())                                                   \
      GTEST_SKIP() << "corpus not found at " << ::weft::test::corpusDir()              \
                   << " (set WEFT_CORPUS_DIR)";                                        \
  } while (0)
