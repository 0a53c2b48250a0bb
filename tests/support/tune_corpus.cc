#include "tests/support/tune_corpus.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include "tests/support/corpus.h"

namespace weft::test {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::map<std::string, std::string> pairs(const std::vector<std::string>& w, size_t from) {
  std::map<std::string, std::string> m;
  for (size_t i = from; i + 1 < w.size(); i += 2) m[w[i]] = w[i + 1];
  return m;
}

bool isRecord(const std::string& l) {
  return l.rfind("TUNE ", 0) == 0 || l.rfind("TUNECH ", 0) == 0 || l.rfind("COST ", 0) == 0;
}

// "NAME=VALUE NAME='a b' NAME=\"a b\"" after "env: "; "-" is none.
std::vector<std::pair<std::string, std::string>> parseEnv(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  static const std::regex kAssign(R"re(([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|\S*))re");
  for (std::sregex_iterator it(text.begin(), text.end(), kAssign), end; it != end; ++it) {
    std::string v = (*it)[2].str();
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
    out.emplace_back((*it)[1].str(), v);
  }
  return out;
}

TuneCase parseCase(const fs::path& log) {
  TuneCase c;
  c.name = log.filename().string();
  std::string text = readFile(log);
  std::istringstream in(text);
  static const std::regex kHeader(R"((\d+) identical node\(s\) built from (\S+), env: (.*)$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.rfind("# oracle:", 0) == 0 && std::regex_search(line, m, kHeader)) {
      c.nodes = std::stoi(m[1]);
      c.topology = corpusDir() / m[2].str();
      c.env = parseEnv(m[3]);
    } else if (line.rfind("# comm ", 0) == 0) {
      c.comm = pairs(words(line), 2);
    } else if (line.rfind("# graph ", 0) == 0) {
      std::vector<std::string> w = words(line);
      if (w.size() > 2) c.graphs[w[2]] = pairs(w, 3);
    } else if (isRecord(line)) {
      std::vector<std::string> w = words(line);
      std::string tag = w[0];
      w.erase(w.begin());
      (tag == "TUNE" ? c.tune : tag == "TUNECH" ? c.tunech : c.cost).push_back(std::move(w));
    }
  }
  c.info = infoMessages(text);
  return c;
}

}  // namespace

std::vector<std::string> infoMessages(const std::string& text, int rank) {
  const std::string prefix = "[" + std::to_string(rank) + "] NCCL INFO ";
  std::vector<std::string> out;
  bool inMessage = false;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) {
      out.push_back(line.substr(prefix.size()));
      inMessage = true;
    } else if (inMessage && !line.empty() && line[0] != '#' && line[0] != '[' && !isRecord(line)) {
      out.back() += "\n" + line;
    } else {
      // A blank line ends a message that ended with its own newline (NCCL adds one more); weft's
      // logger drops a message's trailing newlines, so neither side keeps it.
      inMessage = false;
    }
  }
  return out;
}

std::vector<TuneCase> tuneCases() {
  std::vector<TuneCase> out;
  fs::path dir = corpusDir() / "reference-nccl-2.28.9-tuning";
  if (!fs::exists(dir)) return out;
  std::vector<fs::path> logs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".log") logs.push_back(e.path());
  std::sort(logs.begin(), logs.end());
  for (const fs::path& l : logs) out.push_back(parseCase(l));
  return out;
}

}  // namespace weft::test
