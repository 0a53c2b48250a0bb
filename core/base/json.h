// A minimal streaming JSON writer for tool output (--format json). Keys and values are written
// in call order; the writer inserts commas and escapes strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

class JsonWriter {
 public:
  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(int64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(double v);  // %.6g
  JsonWriter& fixed(double v, int decimals);  // %.*f: every digit up to `decimals` (null if not finite)
  JsonWriter& value(bool v);
  JsonWriter& null();
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  const std::string& str() const { return out_; }

 private:
  void separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool afterKey_ = false;
};

}  // namespace weft
