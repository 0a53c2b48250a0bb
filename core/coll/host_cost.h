// weft's cost model for collectives on CPU endpoints (no GPU to model): which of its host
// schedules (schedule.h) is fastest for a size, in the shape of NCCL's model. algorithm.cc asks it.
#pragma once

#include <cstddef>

#include "core/coll/schedule.h"
#include "core/config/values.h"

namespace weft::config {
class Settings;
}

namespace weft::coll {

// CPU endpoints: a first cut of a cost model for AllReduce in NCCL's shape (a latency per step
// plus bytes over a bandwidth), along one rank's critical path:
//   time = steps · alpha + bytes sent · beta + bytes reduced · gamma
// with Ring taking 2(n−1) steps of B/n, recursive doubling log2(p) rounds of the whole B (two
// more, unreduced, with the non-power-of-two fold), and Tree (several hosts) 2·depth steps that
// pipeline the whole B. The constants are shared memory's, fitted to bench/comm on the
// development host (2 cores; bench/README.md "Host algorithms"), or the network's (nNodes > 1,
// every step then counted as crossing it; guesses), not calibrated per host yet. Every rank must
// decide the same, so the model sees only what every rank shares (sizes, nranks, nNodes, and
// whether some host's ranks outnumber the CPUs they may run on together: Comm::oversubscribed,
// from every rank's affinity mask), not this process's CPUs. Oversubscribed, a step waits for the
// peer to be scheduled (a context switch) and shared memory takes other constants, fitted to 3
// and 4 ranks on 2 CPUs.
// Across hosts doubling is considered only up to kDoublingAcrossHostsMaxBytes, where latency
// dominates whatever the constants.
inline constexpr size_t kDoublingAcrossHostsMaxBytes = size_t{64} << 10;

struct HostCost {
  double alphaUs;         // per step: the hop's latency and the step's fixed costs
  double betaUsPerByte;   // per byte sent (copied into a slot and out of it)
  double gammaUsPerByte;  // per byte reduced
};
HostCost hostCost(int nNodes, bool oversubscribed = false);

struct HostAllReduceTimes {
  double ring = 0, tree = -1, doubling = 0;  // microseconds; tree -1 where it does not apply (one host)
};
// The model's times for an AllReduce of `bytes` over `nranks` ranks on `nNodes` hosts.
HostAllReduceTimes hostAllReduceTimes(size_t bytes, int nranks, int nNodes, bool oversubscribed = false);

// Tree allreduce below this many bytes when the communicator spans hosts: one tree step (512 KiB)
// or less per operation, where the tree's 2·depth hops beat the ring's 2(n−1) and its halved
// bandwidth does not matter yet.
inline constexpr size_t kTreeBelowBytes = size_t{512} << 10;

// WEFT_HOST_ALGO: whether AllReduce on CPU endpoints may run recursive doubling. NCCL_ALGO set,
// or WEFT_HOST_ALGO=nccl: never (NCCL's algorithms only); doubling: always; auto: where the host
// cost model finds it faster.
enum class HostDoubling { kNever = 0, kAuto = 1, kAlways = 2 };
HostDoubling hostDoublingMode(const config::Settings& settings);

// What CPU endpoints run for `coll` of `bytes` (the model's size: the whole gathered buffer for
// AllGather and ReduceScatter) on `nranks` ranks over `nNodes` hosts, given the algorithms
// NCCL_ALGO leaves (`ring`, `tree`; tree only for AllReduce) and no tuner plugin: the size rule's
// Ring or Tree, then recursive doubling where `mode` and hostAllReduceTimes say so. The one rule
// behind chooseAlgorithm and `weft tune --cpu`.
struct HostPick {
  bool runs = false;      // something is left to run (ring or tree)
  config::Algo algo = config::Algo::kRing;
  bool doubling = false;  // recursive doubling instead of algo
  bool modeled = false;   // the cost model was asked (AllReduce, mode not kNever): times are set
  HostAllReduceTimes times;
};
HostPick hostPick(Coll coll, size_t bytes, int nranks, int nNodes, bool ring, bool tree, HostDoubling mode,
                  bool oversubscribed = false);

}  // namespace weft::coll
