// Which algorithm a collective runs on the host path: NCCL_ALGO's restrictions with NCCL's error
// when nothing is left, and weft's size rule between Ring and Tree until the tuning model picks
// (NCCL 2.28's topoGetAlgoInfo).
#pragma once

#include <cstddef>

#include "core/base/status.h"
#include "core/coll/schedule.h"
#include "core/config/values.h"
#include "weft/weft.h"

namespace weft::runtime {
class Comm;
}

namespace weft::coll {

// Tree allreduce below this many bytes when the communicator spans hosts: one tree step (512 KiB)
// or less per operation, where the tree's 2·depth hops beat the ring's 2(n−1) and its halved
// bandwidth does not matter yet.
inline constexpr size_t kTreeBelowBytes = size_t{512} << 10;

// Ring or Tree for `coll` moving `bytes` (the buffer; NCCL's size) on `comm`:
//   - only AllReduce has a Tree schedule; every function has Ring (Broadcast and Reduce only Ring);
//   - NCCL_ALGO removes algorithms (see config::Selection); nothing left is NCCL's invalid-usage
//     error "no algorithm/protocol available for function F with datatype T. NCCL_ALGO was set to …";
//   - with both allowed: Tree when nNodes > 1 and bytes < kTreeBelowBytes, else Ring.
// `what` prefixes errors. Pure: every rank decides the same for the same call.
Result<config::Algo> chooseAlgorithm(const char* what, const runtime::Comm& comm, Coll coll, weft_datatype_t type,
                                     size_t bytes);

// NCCL's ncclDatatypeToString: "ncclFloat32", … ("unknown" outside 0..11).
const char* ncclTypeName(weft_datatype_t type);

config::Func funcOf(Coll coll);

}  // namespace weft::coll
