// `weft perf`: nccl-tests' tables (v2.17.6, src/*.cu): the tests, their data types and reduction
// operations, how many elements each collective moves at a given size, and how algorithm and bus
// bandwidth follow from the time. Pure functions; no communicator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace weft::tool::perf {

enum class Coll { kAllReduce, kAllGather, kBroadcast, kReduce, kReduceScatter, kAllToAll, kSendRecv };

struct CollInfo {
  Coll coll;
  const char* command;  // the `weft perf` argument: "all_reduce"
  const char* program;  // nccl-tests' binary, named in the preamble: "all_reduce_perf"
  bool reduces;         // the data is reduced (inputs per rank, -o matters)
  bool hasRoot;         // runs at root -r (each rank in turn with -1); otherwise the root column is -1
};

std::span<const CollInfo> collectives();
const CollInfo& collInfo(Coll coll);
std::optional<Coll> parseColl(std::string_view command);

// ncclDataType_t's values, names as nccl-tests prints them.
enum class DataType : int {
  kInt8 = 0,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kFloat,
  kDouble,
  kBfloat16,
  kF8e4m3,
  kF8e5m2,
};
inline constexpr int kNumTypes = 12;
const char* typeName(DataType type);
size_t typeSize(DataType type);
// "float" -> kFloat; nullopt for any other text ("all" is the caller's).
std::optional<DataType> parseType(std::string_view name);
// Every type, in nccl-tests' order (-d all).
std::vector<DataType> allTypes();

// nccl-tests' op indices: ncclRedOp_t's values, then "mulsum" (ncclRedOpCreatePreMulSum).
enum class RedOp : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4, kMulSum = 5 };
inline constexpr int kNumOps = 6;
const char* opName(RedOp op);
std::optional<RedOp> parseOp(std::string_view name);  // as parseType
std::vector<RedOp> allOps();

// getCollByteCount: element counts for a test of `count` elements (size / element size).
struct Counts {
  size_t send = 0;               // elements in the send buffer
  size_t recv = 0;               // elements in the receive buffer (and the expected result)
  size_t param = 0;              // the count argument of the call
  size_t sendInplaceOffset = 0;  // in place: sendbuff = recvbuff + rank * this (elements)
  size_t recvInplaceOffset = 0;  // in place: the result is at recvbuff + rank * this
};
Counts collCounts(Coll coll, size_t count, size_t eltSize, int nranks);

// getBw: GB/s from the element count (Counts::param), element size and seconds per operation.
struct Bandwidth {
  double alg = 0;
  double bus = 0;
};
Bandwidth bandwidth(Coll coll, size_t count, size_t eltSize, double seconds, int nranks);

// nccl-tests' parsesize: "32M", "1.5K", "8" (K/M/G powers of 1024, either case). nullopt if
// the text is not a non-negative size.
std::optional<size_t> parseSize(std::string_view text);

// The sizes of one cycle: from min while <= max, times factor (factor > 1) or plus step.
// Stops instead of repeating a size (min 0 with a factor, or step 0).
std::vector<size_t> sizeSchedule(size_t minBytes, size_t maxBytes, size_t stepBytes, size_t stepFactor);
// The warm-up sizes: from min while <= max, doubling (as nccl-tests, whatever the step).
std::vector<size_t> warmupSchedule(size_t minBytes, size_t maxBytes);

}  // namespace weft::tool::perf
