// Fuzz target: any byte string through the topology XML loader, the system builder, fusion and
// trimming. Each must return an error or a result, never crash; a loaded document must save and
// reload identically, and so must a fused one.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/topo/system_build.h"
#include "core/topo/xml.h"
#include "core/topo/xml_fuse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto xml = weft::topo::TopoXml::parse(text, "fuzz.xml");
  if (!xml.isOk()) return 0;
  (void)xml->expectRoot("system");
  std::string saved = xml->toString();
  auto again = weft::topo::TopoXml::parse(saved, "saved.xml");
  if (!again.isOk() || !(*again == *xml)) std::abort();

  (void)weft::topo::buildSystem(*xml);
  weft::topo::BuildOptions strict;
  strict.strict = true;
  (void)weft::topo::buildSystem(*xml, strict);

  // Fusion into an empty document copies; into a copy of itself it must give a document that
  // saves and reloads identically. (It need not be unchanged, nor idempotent: equal siblings
  // merge into the first one, as in NCCL, and a subtree copied whole keeps its own.)
  weft::topo::TopoXml empty;
  if (weft::topo::fuseXml(empty, *xml).isOk() && !(empty == *xml)) std::abort();
  weft::topo::TopoXml fused = *xml;
  if (weft::topo::fuseXml(fused, *xml).isOk()) {
    auto reloaded = weft::topo::TopoXml::parse(fused.toString(), "fused.xml");
    if (!reloaded.isOk() || !(*reloaded == fused)) std::abort();
  }
  weft::topo::TopoXml trimmed = *xml;
  (void)weft::topo::trimXml(trimmed);
  return 0;
}
