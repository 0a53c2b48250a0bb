/* Compiled as C11: the public headers must be valid C. */
#include "weft/topo.h"
#include "weft/weft.h"

int weftCHeadersCompile(void) {
  weft_topo_options_t options = WEFT_TOPO_OPTIONS_INIT;
  weft_graph_info_t info;
  weft_tune_choice_t choice;
  info.n_channels = options.nodes;
  choice.algo = WEFT_ALGO_TREE;
  choice.proto = WEFT_PROTO_LL;
  return info.n_channels + WEFT_GRAPH_RING + choice.algo + choice.proto + WEFT_COLL_BROADCAST;
}
