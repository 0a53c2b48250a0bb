#include "core/coll/host_cost.h"

#include <cmath>

namespace weft::coll {

HostCost hostCost(int nNodes) {
  // Shared memory, fitted to 2-rank allreduces of 1 KiB to 64 KiB on the development host (bench/
  // README.md, "Host algorithms"): a step costs ~0.2 us, a byte sent ~0.089 ns (copied into a
  // slot and out of it), a byte reduced ~0.012 ns more. Across hosts (socket plugin) the
  // constants are guesses, not measured yet: ~15 us a step, ~1 GB/s.
  if (nNodes > 1) return {15.0, 1e-3, 1.2e-5};
  return {0.2, 8.9e-5, 1.2e-5};
}

HostAllReduceTimes hostAllReduceTimes(size_t bytes, int nranks, int nNodes) {
  HostAllReduceTimes t;
  if (nranks < 2) return t;
  const HostCost c = hostCost(nNodes);
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

}  // namespace weft::coll
