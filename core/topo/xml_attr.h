// Typed attribute reads on a TopoXml element, with errors that say where and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/topo/xml.h"

namespace weft::topo {

class XmlAttrs {
 public:
  explicit XmlAttrs(const TopoXml& doc) : doc_(doc) {}

  // Required attributes.
  Result<std::string> string(const XmlNode& n, std::string_view key) const;
  // Integers as NCCL reads them (strtol base 0: decimal, 0x hex, 0 octal).
  Result<int64_t> integer(const XmlNode& n, std::string_view key) const;
  // A hexadecimal number with or without 0x (GUIDs, host hashes).
  Result<uint64_t> hex(const XmlNode& n, std::string_view key) const;

  // Optional attributes: the fallback when absent, an error when present but malformed.
  Result<int64_t> integerOr(const XmlNode& n, std::string_view key, int64_t fallback) const;
  Result<double> realOr(const XmlNode& n, std::string_view key, double fallback) const;

 private:
  Status missing(const XmlNode& n, std::string_view key, std::string_view expected) const;
  Status malformed(const XmlNode& n, std::string_view key, std::string_view expected) const;

  const TopoXml& doc_;
};

}  // namespace weft::topo
