#include "core/coll/algorithm.h"

#include "core/base/strings.h"
#include "core/runtime/comm.h"

namespace weft::coll {

config::Func funcOf(Coll coll) {
  switch (coll) {
    case Coll::kAllReduce: return config::Func::kAllReduce;
    case Coll::kAllGather: return config::Func::kAllGather;
    case Coll::kReduceScatter: return config::Func::kReduceScatter;
    case Coll::kBroadcast: return config::Func::kBroadcast;
    case Coll::kReduce: return config::Func::kReduce;
  }
  return config::Func::kAllReduce;
}

const char* ncclTypeName(weft_datatype_t type) {
  static const char* const kNames[] = {"ncclInt8",    "ncclUint8",   "ncclInt32",    "ncclUint32",
                                       "ncclInt64",   "ncclUint64",  "ncclFloat16",  "ncclFloat32",
                                       "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
  int t = static_cast<int>(type);
  return t >= 0 && t < 12 ? kNames[t] : "unknown";
}

Result<config::Algo> chooseAlgorithm(const char* what, const runtime::Comm& comm, Coll coll, weft_datatype_t type,
                                     size_t bytes) {
  config::Func f = funcOf(coll);
  bool ring = comm.algorithms.allows(f, static_cast<int>(config::Algo::kRing));
  bool tree = coll == Coll::kAllReduce && comm.algorithms.allows(f, static_cast<int>(config::Algo::kTree));
  if (ring && tree) return comm.nNodes > 1 && bytes < kTreeBelowBytes ? config::Algo::kTree : config::Algo::kRing;
  if (ring) return config::Algo::kRing;
  if (tree) return config::Algo::kTree;
  return invalidUsage(strprintf("%s: Error : no algorithm/protocol available for function %s with datatype %s. NCCL_ALGO "
                                "was set to %s.",
                                what, config::funcName(f), ncclTypeName(type), comm.settings.string("NCCL_ALGO").c_str()));
}

}  // namespace weft::coll
