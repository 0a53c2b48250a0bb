// The cases of corpus/reference-nccl-2.28.9-tuning: NCCL 2.28.9's tuning of N identical nodes of
// a topology under some settings, as its logs record it (README.md there).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace weft::test {

struct TuneCase {
  std::string name;  // the log's file name
  int nodes = 1;
  std::filesystem::path topology;
  std::vector<std::pair<std::string, std::string>> env;  // NAME=VALUE settings of the run ("env: -": none)
  std::map<std::string, std::string> comm;               // "# comm" fields
  std::map<std::string, std::map<std::string, std::string>> graphs;  // "# graph NAME" fields
  // "[0] NCCL INFO " payloads in order; a message NCCL printed over several lines (the
  // Func/Proto/Algo matrix) is one entry, its lines joined with '\n'.
  std::vector<std::string> info;
  std::vector<std::vector<std::string>> tune, tunech, cost;  // fields after the TUNE/TUNECH/COST tag
};

// Every case, sorted by name; empty when the corpus has no tuning references.
std::vector<TuneCase> tuneCases();

// `text`'s "[rank] NCCL INFO " payloads, continuation lines (no prefix, not a comment, not a
// TUNE/TUNECH/COST record) joined to the message before them; a blank line ends a message and
// is not part of it (NCCL's matrix message ends with a newline, which weft's logger drops).
std::vector<std::string> infoMessages(const std::string& text, int rank = 0);

}  // namespace weft::test
