// Small string helpers shared by every stage.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

// printf into a std::string.
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// vprintf appended to `out`: one formatting pass when the text fits 1 KiB (most do), two
// otherwise; `ap` is left as it was given (the function works on a copy).
void appendFormatV(std::string& out, const char* fmt, va_list ap) __attribute__((format(printf, 2, 0)));

std::vector<std::string_view> split(std::string_view text, char sep);
std::string_view trim(std::string_view text);
bool iequals(std::string_view a, std::string_view b);
bool startsWith(std::string_view text, std::string_view prefix);
std::string toLower(std::string_view text);

// Whole-string integer parses. `base` 0 accepts 0x.. and 0.. prefixes like strtoll(…, 0).
std::optional<int64_t> parseInt(std::string_view text, int base = 10);
std::optional<uint64_t> parseUint(std::string_view text, int base = 10);
std::optional<double> parseDouble(std::string_view text);

// Levenshtein distance, for "did you mean …" hints.
size_t editDistance(std::string_view a, std::string_view b);

// Appends `text` escaped for XML character data and attribute values (&, <, >, " as entities;
// \n, \r and \t as character references, which a reader would otherwise normalize).
void appendXmlEscaped(std::string& out, std::string_view text);
std::string xmlEscaped(std::string_view text);

}  // namespace weft
