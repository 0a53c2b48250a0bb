// Whole-file reads and writes for outputs that must never be left half written.
#pragma once

#include <string>
#include <string_view>

#include "core/base/status.h"

namespace weft {

// Writes `text` to `path` through a temporary file in the same directory renamed over it, so
// that readers see the old file or the whole new one, never a part. Nothing is left on failure.
[[nodiscard]] Status writeFileAtomic(const std::string& path, std::string_view text);

// The whole content of `path`.
[[nodiscard]] Result<std::string> readWholeFile(const std::string& path);

}  // namespace weft
