// Small pieces that weft_bench_comm and weft_bench_comm_gloo share (header-only: the Gloo
// baseline does not link weft): size and list arguments, touched malloc buffers, nccl-tests'
// bus bandwidth factor.
#pragma once

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace weft::bench::comm {

// "4M" -> 4194304; K, M, G are powers of 1024.
inline size_t parseSize(const std::string& s) {
  size_t pos = 0;
  unsigned long long v = std::stoull(s, &pos);
  std::string unit = s.substr(pos);
  if (unit == "K" || unit == "k") v <<= 10;
  else if (unit == "M" || unit == "m") v <<= 20;
  else if (unit == "G" || unit == "g") v <<= 30;
  else if (!unit.empty()) throw std::invalid_argument("bad size: " + s);
  return static_cast<size_t>(v);
}

inline std::vector<std::string> splitCommas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// Buffers from malloc, touched before any timing, as the MPI baseline allocates its own. `data`
// is null when malloc failed.
struct Buffer {
  explicit Buffer(size_t n) : data(static_cast<char*>(std::malloc(n == 0 ? 1 : n))), size(n) {
    if (data != nullptr) std::memset(data, 0x5a, size);
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* data;
  size_t size;
};

// busbw as nccl-tests: allreduce algbw * 2(n-1)/n, allgather algbw * (n-1)/n.
// nccl-tests' bus bandwidth factors (allgather and reducescatter: (n-1)/n of the whole buffer).
inline double busFactor(const std::string& op, int n) {
  if (op == "broadcast") return 1.0;
  return op == "allreduce" ? 2.0 * (n - 1) / n : static_cast<double>(n - 1) / n;
}

// The float ops (sum): allreduce and reducescatter. size = the whole buffer (allreduce's, allgather's
// output, reducescatter's input, broadcast's), as nccl-tests' size.
inline bool floatOp(const std::string& op) { return op == "allreduce" || op == "reducescatter"; }
// The ops whose buffer is cut in one part per rank: allgather (output), reducescatter (input).
inline bool perRankOp(const std::string& op) { return op == "allgather" || op == "reducescatter"; }
// What a size must be a multiple of for `op` on n ranks.
inline size_t sizeQuantum(const std::string& op, int n) {
  size_t q = floatOp(op) ? sizeof(float) : 1;
  return perRankOp(op) ? q * static_cast<size_t>(n) : q;
}

}  // namespace weft::bench::comm
