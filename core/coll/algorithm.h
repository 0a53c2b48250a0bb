// Which algorithm a collective runs on the host path: NCCL_ALGO's restrictions with NCCL's error
// when nothing is left, and weft's size rule between Ring and Tree until the tuning model picks
// (NCCL 2.28's topoGetAlgoInfo).
#pragma once

#include <cstddef>

#include "core/base/status.h"
#include "core/coll/host_cost.h"
#include "core/coll/schedule.h"
#include "core/config/values.h"
#include "weft/weft.h"

namespace weft::runtime {
class Comm;
}

namespace weft::coll {

// How a collective runs: its algorithm and its channel budget (0: one per 512 KiB, see run.h).
struct AlgoChoice {
  bool doubling = false;  // recursive doubling (schedule.h's doublingAllReduce); algo is then unused
  config::Algo algo = config::Algo::kRing;
  config::Proto proto = config::Proto::kSimple;  // NCCL's pick (emulated devices); data moves Simple
  int channels = 0;
};

// Ring, Tree or recursive doubling for `coll` of `count` elements of `type` (per rank for AllGather and
// ReduceScatter) on `comm`:
//   - only AllReduce has a Tree schedule; every function has Ring;
//   - emulated devices (comm.tuning): NCCL's choice (tune::choose, the tuner plugin included)
//     among the cells of Ring and Tree, the algorithms the host path runs, with NCCL's channel
//     budget; the protocol is NCCL's pick but host memory moves Simple steps;
//   - CPU endpoints: NCCL_ALGO removes algorithms (see config::Selection); with both allowed, Tree
//     when nNodes > 1 and the buffer is below kTreeBelowBytes, else Ring; a tuner plugin named by
//     NCCL_TUNER_PLUGIN (comm.hostTuner) may override that pick and set the channel budget;
//     with neither NCCL_ALGO nor a tuner plugin set, an AllReduce runs recursive doubling where
//     the cost model (hostAllReduceTimes) finds it faster than that pick (WEFT_HOST_ALGO=auto),
//     always (doubling) or never (nccl); rank 0 logs the model's times (NCCL_DEBUG_SUBSYS=TUNING);
//   - nothing left is NCCL's error "no algorithm/protocol available for function F with datatype
//     T. NCCL_ALGO was set to …" (invalid usage).
// `what` prefixes errors. Every rank decides the same for the same call.
Result<AlgoChoice> chooseAlgorithm(const char* what, runtime::Comm& comm, Coll coll, weft_datatype_t type,
                                   size_t count);

// NCCL's ncclDatatypeToString: "ncclFloat32", … ("unknown" outside 0..11).
const char* ncclTypeName(weft_datatype_t type);

config::Func funcOf(Coll coll);

}  // namespace weft::coll
