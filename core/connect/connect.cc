#include "core/connect/connect.h"

#include "core/base/strings.h"
#include "core/connect/exchange.h"

namespace weft::connect {

Status addRanks(std::vector<RankInput>& ranks, const GraphSet& graphs, int compCap) {
  if (graphs.ring == nullptr || graphs.tree == nullptr) return invalidArgument("connect: a node without ring or tree graph");
  const topo::Graph& ring = *graphs.ring;
  for (int i = 0; i < ring.ngpus; ++i) {
    int r = graphs.rank(ring, 0, i);
    if (r < 0) return invalidArgument(strprintf("connect: negative rank %d in a ring graph", r));
    if (static_cast<size_t>(r) >= ranks.size()) ranks.resize(static_cast<size_t>(r) + 1);
    RankInput& in = ranks[static_cast<size_t>(r)];
    if (in.graphs.ring != nullptr) return invalidArgument(strprintf("connect: rank %d belongs to two nodes", r));
    in.graphs = graphs;
    in.compCap = compCap;
  }
  return Status::ok();
}

Result<Connection> connectRanks(const std::vector<RankInput>& ranks, const ConnectOptions& options) {
  WEFT_ASSIGN_OR_RETURN(Exchange ex, exchange(ranks, options.collnet));
  // CollNet direct reads each node's own graphs: those of its first rank.
  std::vector<GraphSet> nodeGraphs;
  nodeGraphs.reserve(static_cast<size_t>(ex.nNodes));
  for (int first : ex.nodeFirstRank) nodeGraphs.push_back(ranks[static_cast<size_t>(first)].graphs);
  return postset(std::move(ex), nodeGraphs, options);
}

}  // namespace weft::connect
