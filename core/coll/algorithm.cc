#include "core/coll/algorithm.h"

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/runtime/comm.h"
#include "core/tune/select.h"

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

namespace {

// NCCL's choice on an emulated communicator, restricted to the algorithms the host path runs.
Result<AlgoChoice> tunedChoice(const char* what, runtime::Comm& comm, Coll coll, weft_datatype_t type, size_t bytes) {
  runtime::Tuning& t = *comm.tuning;
  tune::Operation op;
  op.func = static_cast<int>(funcOf(coll));  // config::Func values are ncclFunc_t's
  op.bytes = bytes;
  op.fp8 = type == weftFloat8e4m3 || type == weftFloat8e5m2;
  op.algoMask = 1u << tune::kRing | (coll == Coll::kAllReduce ? 1u << tune::kTree : 0u);
  op.typeName = ncclTypeName(type);
  Result<tune::Choice> c = tune::choose(t.inputs, t.model, t.settings, op, t.tuner.get());
  if (!c.isOk()) return std::move(c).takeStatus().withContext(what);
  AlgoChoice out;
  out.algo = c->algo == tune::kTree ? config::Algo::kTree : config::Algo::kRing;
  out.proto = static_cast<config::Proto>(c->proto);
  out.channels = c->nMaxChannels;
  return out;
}

// CPU endpoints with a tuner: the tuner sees a table of the Simple cells of the allowed Ring and
// Tree, 1 for the size rule's pick and 2 for the other (ranks, not times: there is no model),
// and the lowest cell it leaves at or above 0 runs, with its channel budget.
Result<AlgoChoice> hostTunerChoice(const char* what, runtime::Comm& comm, Coll coll, size_t bytes, bool ring, bool tree,
                                   config::Algo rule) {
  float table[tune::kNumAlgorithms][tune::kNumProtocols];
  for (auto& row : table)
    for (float& cell : row) cell = tune::kIgnore;
  if (ring) table[tune::kRing][tune::kSimple] = rule == config::Algo::kRing ? 1.0f : 2.0f;
  if (tree) table[tune::kTree][tune::kSimple] = rule == config::Algo::kTree ? 1.0f : 2.0f;
  int nChannels = 0;
  tune::CollQuery q{.func = static_cast<int>(funcOf(coll)), .bytes = bytes};
  Status s = comm.hostTuner->getCollInfo(q, &table[0][0], &nChannels);
  if (!s.isOk()) return std::move(s).withContext(strprintf("%s: tuner getCollInfo", what));
  AlgoChoice out;
  float best = -1.0f;
  for (int a : {tune::kTree, tune::kRing}) {
    for (int p = 0; p < tune::kNumProtocols; ++p) {
      float c = table[a][p];
      if (c >= 0.0f && (best < 0.0f || c < best)) {
        best = c;
        out.algo = a == tune::kTree ? config::Algo::kTree : config::Algo::kRing;
      }
    }
  }
  if (best < 0.0f)
    return internalError(strprintf("%s: the tuner plugin left no Ring or Tree cell for function %s", what,
                                   config::funcName(funcOf(coll))));
  out.channels = nChannels;
  return out;
}

}  // namespace

Result<AlgoChoice> chooseAlgorithm(const char* what, runtime::Comm& comm, Coll coll, weft_datatype_t type,
                                   size_t count) {
  bool perRank = countIsPerRank(coll);
  // NCCL's model is given the whole gathered buffer for AllGather and ReduceScatter.
  size_t bytes = count * weft_datatype_size(type) * (perRank ? static_cast<size_t>(comm.nranks) : 1);
  if (comm.tuning) return tunedChoice(what, comm, coll, type, bytes);
  config::Func f = funcOf(coll);
  bool ring = comm.algorithms.allows(f, static_cast<int>(config::Algo::kRing));
  bool tree = coll == Coll::kAllReduce && comm.algorithms.allows(f, static_cast<int>(config::Algo::kTree));
  if (ring || tree) {
    // WEFT_HOST_ALGO and NCCL_ALGO read once: this is on the path of every small allreduce.
    if (comm.hostDoubling < 0) comm.hostDoubling = static_cast<int>(hostDoublingMode(comm.settings));
    const auto mode = comm.hostTuner ? HostDoubling::kNever : static_cast<HostDoubling>(comm.hostDoubling);
    const HostPick pick = hostPick(coll, bytes, comm.nranks, comm.nNodes, ring, tree, mode, comm.oversubscribed);
    AlgoChoice out;
    out.algo = pick.algo;
    if (comm.hostTuner) return hostTunerChoice(what, comm, coll, bytes, ring, tree, out.algo);
    out.doubling = pick.doubling;
    if (pick.modeled && comm.rank == 0) {
      WEFT_INFO(log::kTuning,
                "AllReduce: %zu Bytes on %d ranks, %d hosts%s: CPU cost model Ring %.2f us, Tree %.2f us, "
                "RecursiveDoubling %.2f us (WEFT_HOST_ALGO=%s) -> %s",
                bytes, comm.nranks, comm.nNodes, comm.oversubscribed ? " (oversubscribed)" : "", pick.times.ring,
                pick.times.tree, pick.times.doubling,
                mode == HostDoubling::kAlways ? "doubling" : "auto",
                pick.doubling ? "RecursiveDoubling" : config::algoName(pick.algo));
    }
    return out;
  }
  return invalidUsage(strprintf("%s: Error : no algorithm/protocol available for function %s with datatype %s. NCCL_ALGO "
                                "was set to %s.",
                                what, config::funcName(f), ncclTypeName(type), comm.settings.string("NCCL_ALGO").c_str()));
}

}  // namespace weft::coll
