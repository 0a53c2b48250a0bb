#include "tests/support/tune_corpus.h"

#include <algorithm>
#include <cstdlib>
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

// "NAME=VALUE NAME='a b' NAME=\"a b\"" after "env: "; "-" is none. (No std::regex: GCC 12
// warns inside it under the sanitizers.)
std::vector<std::pair<std::string, std::string>> parseEnv(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t eq = text.find('=', i);
    if (eq == std::string::npos) break;
    std::string name = text.substr(i, eq - i);
    size_t v = eq + 1, end;
    std::string value;
    if (v < text.size() && (text[v] == '"' || text[v] == '\'')) {
      end = text.find(text[v], v + 1);
      if (end == std::string::npos) end = text.size();
      value = text.substr(v + 1, end - v - 1);
      ++end;
    } else {
      end = text.find(' ', v);
      if (end == std::string::npos) end = text.size();
      value = text.substr(v, end - v);
    }
    if (!name.empty() && name.find(' ') == std::string::npos) out.emplace_back(name, value);
    i = end;
  }
  return out;
}

// "... N identical node(s) built from PATH, env: ENV" -> N, PATH, ENV.
bool parseHeader(const std::string& line, int& nodes, std::string& path, std::string& env) {
  const std::string kNodes = " identical node(s) built from ", kEnv = ", env: ";
  size_t at = line.find(kNodes);
  size_t envAt = line.rfind(kEnv);
  if (at == std::string::npos || envAt == std::string::npos || envAt < at) return false;
  size_t numStart = line.rfind(' ', at - 1);
  numStart = numStart == std::string::npos ? 0 : numStart + 1;
  nodes = std::atoi(line.substr(numStart, at - numStart).c_str());
  path = line.substr(at + kNodes.size(), envAt - at - kNodes.size());
  env = line.substr(envAt + kEnv.size());
  return nodes > 0;
}

TuneCase parseCase(const fs::path& log) {
  TuneCase c;
  c.name = log.filename().string();
  std::string text = readFile(log);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    int nodes = 0;
    std::string path, env;
    if (line.rfind("# oracle:", 0) == 0 && parseHeader(line, nodes, path, env)) {
      c.nodes = nodes;
      c.topology = corpusDir() / path;
      c.env = parseEnv(env);
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
