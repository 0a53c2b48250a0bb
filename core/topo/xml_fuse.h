// Fusion and trimming of topology XML, as NCCL does between detection and building the system
// (ncclTopoFuseXml, ncclTopoTrimXml). Pure functions on TopoXml.
#pragma once

#include <span>

#include "core/base/status.h"
#include "core/topo/xml.h"

namespace weft::topo {

// Whether `a` stands for the same element as `b` in NCCL's fusion (xmlFindNode): same name, same
// form (self-closing, open, or made in memory), the same number of attributes, and every
// attribute of `b` present in `a` with the same value, in any order. Children are not compared.
bool sameFusionNode(const XmlNode& a, const XmlNode& b);

// Fuses `src` into `dst` as NCCL fuses one rank's XML into the node's: each child of src's
// <system> is added at the end of dst's <system> unless a child of dst already matches it
// (sameFusionNode, including children added earlier in this call), in which case their children
// are fused the same way. An empty `dst` becomes a copy of `src`. Fails, leaving `dst` unchanged,
// when src has no <system> element or dst is not empty and has none.
Status fuseXml(TopoXml& dst, const TopoXml& src);

// Fuses the documents in order into an empty one, as NCCL fuses the XMLs of a node's ranks in
// local-rank order. The result is named after `source`.
Result<TopoXml> fuseXmls(std::span<const TopoXml> xmls, std::string source = "<fused>");

// NCCL's trim: an element with keep="1" loses that attribute and is kept whole (nothing under it
// is visited); any other <pci>, <cpu>, <nic> or <net> is removed when nothing under it was kept.
// Other elements stay, and so does the top element. Returns the number of kept branches (keep="1"
// marks reached by the walk); 0 means nothing was marked and only the bare skeleton is left.
int trimXml(TopoXml& xml);

}  // namespace weft::topo
