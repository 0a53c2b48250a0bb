// The fast search (link bandwidths as exact integers, candidates skipped when a full link rules
// them out) against the search that keeps every bandwidth as NCCL's float and takes no shortcut:
// on every corpus topology, at 1 and 2 nodes, with every pattern and with NCCL_CROSS_NIC 0/1/2,
// both give the same graphs (channels, bandwidths, types, NICs). The float reference is what
// NCCL computes, so any shortcut that changes a result shows up here.
#include <gtest/gtest.h>

#include "core/topo/offline.h"
#include "tests/golden/float_reference.h"
#include "tests/support/corpus.h"
#include "tests/support/sanitizer.h"

namespace weft::topo {
namespace {

TEST(SearchFloatReference, FastSearchEqualsTheFloatSearchOnEveryCorpusTopology) {
  WEFT_REQUIRE_CORPUS();
  int compared = 0;
  constexpr size_t kStride = 3;  // of the corpus under a sanitizer
  for (const auto& file : test::sampleUnderSanitizer(test::corpusTopologies(), kStride, "corpus topologies")) {
    auto topo = TopoXml::load(file.string());
    if (!topo.isOk()) continue;
    for (int nodes : {1, 2}) {
      // (One node too: NCCL 2.28 keeps the NICs when one node holds every rank, so its rings
      // start and end on NICs and NCCL_CROSS_NIC changes them.)
      for (int crossNic : {0, 1, 2}) {
        SCOPED_TRACE(file.string() + " nodes " + std::to_string(nodes) + " NCCL_CROSS_NIC " + std::to_string(crossNic));
        OfflineOptions o;
        o.nodes = nodes;
        o.collnet = o.nvls = true;
        o.params.crossNic = crossNic;
        if (!::weft::test::fastEqualsFloatReference(*topo, o)) break;  // not a file NCCL can build
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, test::expectedUnderSanitizer(120, kStride)) << "too few corpus topologies built: is the corpus complete?";
}

}  // namespace
}  // namespace weft::topo
