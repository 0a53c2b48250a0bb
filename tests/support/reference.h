// NCCL 2.28.9's own outputs on corpus topologies (../shared/corpus/reference-nccl-2.28.9):
// one INFO log and one graph dump per topology and node count.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace weft::test {

struct ReferenceCase {
  std::string name;                // "oracle-oci-hpc_H100-topology.n2"
  int nodes = 1;
  std::filesystem::path log;
  std::filesystem::path graphXml;
  std::filesystem::path topology;  // the corpus topology it was built from
};

// Every case of the reference folder, sorted by name; empty without the corpus.
std::vector<ReferenceCase> referenceCases();

// The lines logged by `rank`, without the "[rank] NCCL INFO " prefix, in order.
std::vector<std::string> rankLines(const std::filesystem::path& log, int rank);

// The first block of `lines` that starts with a line beginning with `first` and ends with the
// first line (after it) beginning with `last`, both included. Empty if absent.
std::vector<std::string> block(const std::vector<std::string>& lines, const std::string& first,
                               const std::string& last);

std::vector<std::string> splitLines(const std::string& text);

// A readable first difference between two line lists ("" when equal).
std::string diffLines(const std::vector<std::string>& expected, const std::vector<std::string>& actual);

}  // namespace weft::test
