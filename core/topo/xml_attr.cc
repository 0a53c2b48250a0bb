#include "core/topo/xml_attr.h"

#include "core/base/strings.h"

namespace weft::topo {

Status XmlAttrs::missing(const XmlNode& n, std::string_view key, std::string_view expected) const {
  return invalidArgument(doc_.where(n) + "missing attribute " + std::string(key) + " (expected " +
                         std::string(expected) + ")");
}

Status XmlAttrs::malformed(const XmlNode& n, std::string_view key, std::string_view expected) const {
  return invalidArgument(doc_.where(n) + std::string(key) + "=\"" + n.get(key) + "\": expected " +
                         std::string(expected));
}

Result<std::string> XmlAttrs::string(const XmlNode& n, std::string_view key) const {
  const std::string* v = n.find(key);
  if (v == nullptr) return missing(n, key, "a value");
  return *v;
}

Result<int64_t> XmlAttrs::integer(const XmlNode& n, std::string_view key) const {
  const std::string* v = n.find(key);
  if (v == nullptr) return missing(n, key, "an integer");
  auto i = parseInt(*v, 0);
  if (!i) return malformed(n, key, "an integer");
  return *i;
}

Result<uint64_t> XmlAttrs::hex(const XmlNode& n, std::string_view key) const {
  const std::string* v = n.find(key);
  if (v == nullptr) return missing(n, key, "a hexadecimal number");
  std::string_view text = trim(*v);
  if (startsWith(text, "0x") || startsWith(text, "0X")) text.remove_prefix(2);
  auto i = parseUint(text, 16);
  if (!i) return malformed(n, key, "a hexadecimal number");
  return *i;
}

Result<int64_t> XmlAttrs::integerOr(const XmlNode& n, std::string_view key, int64_t fallback) const {
  if (!n.has(key)) return fallback;
  return integer(n, key);
}

Result<double> XmlAttrs::realOr(const XmlNode& n, std::string_view key, double fallback) const {
  const std::string* v = n.find(key);
  if (v == nullptr) return fallback;
  auto d = parseDouble(*v);
  if (!d) return malformed(n, key, "a number");
  return *d;
}

}  // namespace weft::topo
