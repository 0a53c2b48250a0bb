#include "tools/weft/perf_coll.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace weft::tool::perf {
namespace {

// The redop column (perf_bench.cc runType): all_gather, alltoall and broadcast print "none";
// sendrecv prints -o although it reduces nothing (sendrecv.cu), as nccl-tests.
constexpr std::array<CollInfo, 7> kColls{{
    {.coll = Coll::kAllReduce,
     .command = "all_reduce",
     .program = "all_reduce_perf",
     .reduces = true,
     .hasRoot = false},
    {.coll = Coll::kAllGather,
     .command = "all_gather",
     .program = "all_gather_perf",
     .reduces = false,
     .hasRoot = false},
    {.coll = Coll::kBroadcast, .command = "broadcast", .program = "broadcast_perf", .reduces = false, .hasRoot = true},
    {.coll = Coll::kReduce, .command = "reduce", .program = "reduce_perf", .reduces = true, .hasRoot = true},
    {.coll = Coll::kReduceScatter,
     .command = "reduce_scatter",
     .program = "reduce_scatter_perf",
     .reduces = true,
     .hasRoot = false},
    {.coll = Coll::kAllToAll, .command = "alltoall", .program = "alltoall_perf", .reduces = false, .hasRoot = false},
    {.coll = Coll::kSendRecv, .command = "sendrecv", .program = "sendrecv_perf", .reduces = false, .hasRoot = false},
}};

// common.cu: test_typenames, in ncclDataType_t order.
constexpr std::array<const char*, kNumTypes> kTypeNames{"int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
                                                        "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
constexpr std::array<size_t, kNumTypes> kTypeSizes{1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
// common.cu: test_opnames.
constexpr std::array<const char*, kNumOps> kOpNames{"sum", "prod", "max", "min", "avg", "mulsum"};

// AllGather, ReduceScatter and AlltoAll round each rank's block down to 16 bytes.
size_t blockOf(size_t count, size_t eltSize, int nranks) {
  return (count / static_cast<size_t>(nranks)) & -(16 / eltSize);
}

}  // namespace

std::span<const CollInfo> collectives() { return kColls; }

const CollInfo& collInfo(Coll coll) { return kColls[static_cast<size_t>(coll)]; }

std::optional<Coll> parseColl(std::string_view command) {
  for (const auto& c : kColls) {
    if (command == c.command) return c.coll;
  }
  return std::nullopt;
}

const char* typeName(DataType type) { return kTypeNames[static_cast<size_t>(type)]; }
size_t typeSize(DataType type) { return kTypeSizes[static_cast<size_t>(type)]; }

std::optional<DataType> parseType(std::string_view name) {
  for (int t = 0; t < kNumTypes; ++t) {
    if (name == kTypeNames[t]) return static_cast<DataType>(t);
  }
  return std::nullopt;
}

std::vector<DataType> allTypes() {
  std::vector<DataType> types;
  for (int t = 0; t < kNumTypes; ++t) types.push_back(static_cast<DataType>(t));
  return types;
}

const char* opName(RedOp op) { return kOpNames[static_cast<size_t>(op)]; }

std::optional<RedOp> parseOp(std::string_view name) {
  for (int o = 0; o < kNumOps; ++o) {
    if (name == kOpNames[o]) return static_cast<RedOp>(o);
  }
  return std::nullopt;
}

std::vector<RedOp> allOps() {
  std::vector<RedOp> ops;
  for (int o = 0; o < kNumOps; ++o) ops.push_back(static_cast<RedOp>(o));
  return ops;
}

Counts collCounts(Coll coll, size_t count, size_t eltSize, int nranks) {
  Counts c;
  switch (coll) {
    case Coll::kAllReduce:
    case Coll::kBroadcast:
    case Coll::kReduce:
    case Coll::kSendRecv:
      c.send = c.recv = c.param = count;
      break;
    case Coll::kAllGather: {
      size_t base = blockOf(count, eltSize, nranks);
      c.send = c.param = base;
      c.recv = base * static_cast<size_t>(nranks);
      c.sendInplaceOffset = base;
      break;
    }
    case Coll::kReduceScatter: {
      size_t base = blockOf(count, eltSize, nranks);
      c.send = base * static_cast<size_t>(nranks);
      c.recv = c.param = base;
      c.recvInplaceOffset = base;
      break;
    }
    case Coll::kAllToAll:
      c.param = blockOf(count, eltSize, nranks);
      c.send = c.recv = c.param * static_cast<size_t>(nranks);
      break;
  }
  return c;
}

Bandwidth bandwidth(Coll coll, size_t count, size_t eltSize, double seconds, int nranks) {
  const double n = nranks;
  double bytes = static_cast<double>(count * eltSize);
  double factor = 1;  // Broadcast, Reduce, SendRecv
  switch (coll) {
    case Coll::kAllReduce:
      factor = 2 * (n - 1) / n;
      break;
    case Coll::kAllGather:
    case Coll::kReduceScatter:
    case Coll::kAllToAll:
      // algbw counts every rank's block: count * eltSize * nranks.
      bytes = static_cast<double>(count * eltSize * static_cast<size_t>(nranks));
      factor = (n - 1) / n;
      break;
    case Coll::kBroadcast:
    case Coll::kReduce:
    case Coll::kSendRecv:
      break;
  }
  Bandwidth bw;
  bw.alg = bytes / 1.0E9 / seconds;
  bw.bus = bw.alg * factor;
  return bw;
}

std::optional<size_t> parseSize(std::string_view text) {
  std::string s(text);
  const char* begin = s.c_str();
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(value) || value < 0) return std::nullopt;
  while (*end == ' ') ++end;
  double unit = 1;
  switch (*end) {
    case 'G':
    case 'g':
      unit = 1024.0 * 1024 * 1024;
      ++end;
      break;
    case 'M':
    case 'm':
      unit = 1024.0 * 1024;
      ++end;
      break;
    case 'K':
    case 'k':
      unit = 1024.0;
      ++end;
      break;
    case '\0':
      break;
    default:
      return std::nullopt;
  }
  if (*end != '\0') return std::nullopt;
  double bytes = value * unit;
  if (bytes >= static_cast<double>(std::numeric_limits<size_t>::max())) return std::nullopt;
  return static_cast<size_t>(bytes);
}

std::vector<size_t> sizeSchedule(size_t minBytes, size_t maxBytes, size_t stepBytes, size_t stepFactor) {
  std::vector<size_t> sizes;
  for (size_t size = minBytes; size <= maxBytes;) {
    sizes.push_back(size);
    size_t next = stepFactor > 1 ? size * stepFactor : size + stepBytes;
    bool overflowed = stepFactor > 1 ? (size != 0 && next / stepFactor != size) : next < size;
    if (overflowed || next <= size) break;
    size = next;
  }
  return sizes;
}

std::vector<size_t> warmupSchedule(size_t minBytes, size_t maxBytes) {
  std::vector<size_t> sizes;
  for (size_t size = minBytes; size <= maxBytes;) {
    sizes.push_back(size);
    if (size > maxBytes / 2) break;
    size = size == 0 ? 1 : size * 2;  // nccl-tests would repeat 0 forever
  }
  return sizes;
}

}  // namespace weft::tool::perf
