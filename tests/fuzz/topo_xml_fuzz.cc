// Fuzz target: any byte string through the topology XML loader. The loader must return an
// error or a document, never crash, and a loaded document must save and reload identically.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/topo/xml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto xml = weft::topo::TopoXml::parse(text, "fuzz.xml");
  if (!xml.isOk()) return 0;
  (void)xml->expectRoot("system");
  std::string saved = xml->toString();
  auto again = weft::topo::TopoXml::parse(saved, "saved.xml");
  if (!again.isOk() || !(*again == *xml)) std::abort();
  return 0;
}
