#include "core/coll/host_cost.h"

#include <cmath>
#include <string>

#include "core/config/settings.h"

namespace weft::coll {

HostCost hostCost(int nNodes, bool oversubscribed) {
  // Shared memory, fitted to 2-rank allreduces of 1 KiB to 64 KiB on the development host (bench/
  // README.md, "Host algorithms"): a step costs ~0.2 us, a byte sent ~0.089 ns (copied into a
  // slot and out of it), a byte reduced ~0.012 ns more. Across hosts (socket plugin) the
  // constants are guesses, not measured yet: ~15 us a step, ~1 GB/s.
  if (nNodes > 1) return {15.0, 1e-3, 1.2e-5};
  // More ranks than CPUs (4 and 3 ranks on 2 CPUs, bench/README.md "Host algorithms"): a step
  // waits for the peer to be scheduled, ~7 us; a byte costs ~0.15 ns (the copies share the CPUs).
  if (oversubscribed) return {7.0, 1.5e-4, 1.2e-5};
  return {0.2, 8.9e-5, 1.2e-5};
}

HostAllReduceTimes hostAllReduceTimes(size_t bytes, int nranks, int nNodes, bool oversubscribed) {
  HostAllReduceTimes t;
  if (nranks < 2) return t;
  const HostCost c = hostCost(nNodes, oversubscribed);
  const double b = static_cast<double>(bytes);
  const double n = nranks;
  t.ring = 2 * (n - 1) * (c.alphaUs + b / n * c.betaUsPerByte) + (n - 1) * b / n * c.gammaUsPerByte;
  int p = 1, rounds = 0;
  while (p * 2 <= nranks) p *= 2, ++rounds;
  const int fold = p < nranks ? 1 : 0;  // the fold adds a reduce before the rounds and a copy after them
  t.doubling = (rounds + 2 * fold) * (c.alphaUs + b * c.betaUsPerByte) + (rounds + fold) * b * c.gammaUsPerByte;
  if (nNodes > 1) {
    const int depth = static_cast<int>(std::ceil(std::log2(nNodes))) + nranks / nNodes - 1;
    t.tree = 2 * depth * c.alphaUs + 2 * b * c.betaUsPerByte + b * c.gammaUsPerByte;
  }
  return t;
}

HostDoubling hostDoublingMode(const config::Settings& settings) {
  const std::string mode = settings.string("WEFT_HOST_ALGO");
  if (settings.isSet("NCCL_ALGO") || mode == "nccl") return HostDoubling::kNever;
  return mode == "doubling" ? HostDoubling::kAlways : HostDoubling::kAuto;
}

HostPick hostPick(Coll coll, size_t bytes, int nranks, int nNodes, bool ring, bool tree, HostDoubling mode,
                  bool oversubscribed) {
  HostPick out;
  if (!ring && !tree) return out;
  if (ring && tree) out.algo = nNodes > 1 && bytes < kTreeBelowBytes ? config::Algo::kTree : config::Algo::kRing;
  else out.algo = ring ? config::Algo::kRing : config::Algo::kTree;
  out.runs = true;
  if (coll != Coll::kAllReduce || mode == HostDoubling::kNever) return out;
  out.times = hostAllReduceTimes(bytes, nranks, nNodes, oversubscribed);
  out.modeled = true;
  const double ruleTime = out.algo == config::Algo::kTree ? out.times.tree : out.times.ring;
  // Across hosts the model's network constants are guesses: doubling only where latency rules.
  const bool small = nNodes == 1 || bytes <= kDoublingAcrossHostsMaxBytes;
  out.doubling = nranks > 1 && (mode == HostDoubling::kAlways || (small && out.times.doubling < ruleTime));
  return out;
}

}  // namespace weft::coll
