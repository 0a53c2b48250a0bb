#include "tests/support/corpus.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace weft::test {

std::filesystem::path corpusDir() {
  if (const char* env = std::getenv("WEFT_CORPUS_DIR"); env != nullptr && *env != '\0') return env;
  return WEFT_DEFAULT_CORPUS_DIR;
}

bool haveCorpus() { return std::filesystem::is_directory(corpusDir() / "topologies"); }

std::vector<std::filesystem::path> corpusTopologies() {
  std::vector<std::filesystem::path> out;
  if (!haveCorpus()) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(corpusDir() / "topologies"))
    if (e.is_regular_file() && e.path().extension() == ".xml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace weft::test
