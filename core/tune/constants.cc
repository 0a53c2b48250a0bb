#include "core/tune/constants.h"

namespace weft::tune {

namespace {

Constants makeDefaults() {
  // Each row is {LL, LL128, Simple} of one algorithm: Tree, Ring, CollNetDirect, CollNetChain,
  // NVLS, NVLSTree, PAT. 2.28.9 values (2.28.7 had NET NVLSTree/Simple 14, Blackwell
  // NVLSTree cap 43.1 above 2 nodes).
  return Constants{
      .baseLatencies = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}},
      .hwLatencies =
          {
              // NVLINK
              {{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
              // PCI
              {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
              // NET
              {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}},
          },
      // Rows: on one node by GPU generation; on several nodes row 0 is Intel-like CPUs, row 1 AMD.
      .llMaxBws = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
      .perChMaxRingLL128Bws = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {2 * 36.7, 34.6, 2 * 36.7}},
      .perChMaxTreeLL128Bws = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
      .perChMaxTreeBws = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
      .perChMaxNVLSTreeBws = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}},
  };
}

constexpr const char* kFuncNames[kNumFuncs] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
constexpr const char* kAlgoNames[kNumAlgorithms] = {"Tree", "Ring", "CollNetDirect", "CollNetChain",
                                                    "NVLS", "NVLSTree", "PAT"};
constexpr const char* kProtoNames[kNumProtocols] = {"LL", "LL128", "Simple"};

}  // namespace

const Constants& defaultConstants() {
  static const Constants kDefaults = makeDefaults();
  return kDefaults;
}

const char* funcName(int func) { return func >= 0 && func < kNumFuncs ? kFuncNames[func] : "?"; }
const char* algoName(int algo) { return algo >= 0 && algo < kNumAlgorithms ? kAlgoNames[algo] : "?"; }
const char* protoName(int proto) { return proto >= 0 && proto < kNumProtocols ? kProtoNames[proto] : "?"; }

}  // namespace weft::tune
