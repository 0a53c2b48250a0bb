#include "tests/support/reference.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/support/corpus.h"

namespace weft::test {

std::vector<ReferenceCase> referenceCases() {
  std::vector<ReferenceCase> out;
  std::filesystem::path dir = corpusDir() / "reference-nccl-2.28.9";
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string file = e.path().filename().string();
    if (e.path().extension() != ".log") continue;
    ReferenceCase c;
    c.name = file.substr(0, file.size() - 4);
    c.log = e.path();
    c.graphXml = dir / (c.name + ".graph.xml");
    size_t dot = c.name.rfind(".n");
    c.nodes = std::stoi(c.name.substr(dot + 2));
    std::ifstream in(c.log);
    std::string first;
    std::getline(in, first);
    const std::string marker = "built from ";
    size_t at = first.find(marker);
    if (at == std::string::npos) continue;
    c.topology = corpusDir() / first.substr(at + marker.size());
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const ReferenceCase& a, const ReferenceCase& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> rankLines(const std::filesystem::path& log, int rank) {
  std::vector<std::string> out;
  std::ifstream in(log);
  std::string prefix = "[" + std::to_string(rank) + "] NCCL INFO ";
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) out.push_back(line.substr(prefix.size()));
  return out;
}

std::vector<std::string> block(const std::vector<std::string>& lines, const std::string& first,
                               const std::string& last) {
  auto begin = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(first, 0) == 0; });
  if (begin == lines.end()) return {};
  auto end = std::find_if(begin + 1, lines.end(), [&](const std::string& l) { return l.rfind(last, 0) == 0; });
  if (end == lines.end()) return {};
  return {begin, end + 1};
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

std::string diffLines(const std::vector<std::string>& expected, const std::vector<std::string>& actual) {
  size_t n = std::max(expected.size(), actual.size());
  for (size_t i = 0; i < n; ++i) {
    std::string e = i < expected.size() ? expected[i] : "<missing>";
    std::string a = i < actual.size() ? actual[i] : "<missing>";
    if (e != a) {
      std::ostringstream s;
      s << "first difference at line " << i + 1 << " of " << expected.size() << ":\n  expected: " << e
        << "\n  actual:   " << a;
      return s.str();
    }
  }
  return "";
}

}  // namespace weft::test
