// Printing settings for people and tools: `weft info --config` and docs/settings.md.
#pragma once

#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/config/loader.h"

namespace weft::config {

enum class Format { kText, kJson, kMarkdown };
Result<Format> parseFormat(std::string_view text);  // text, json, markdown

// Every setting: name, effective value, source and doc, after a header that says which files
// were read, which profiles apply and which names were ignored. kText or kJson.
std::string renderSettings(const Settings& settings, const Policy& policy, const Facts& facts, Format format);

// One setting: every source that set it, which one won, and profiles that would have set it
// but do not apply to `facts`. kText or kJson.
std::string renderExplain(const SettingDef& def, const Settings& settings, const Policy& policy,
                          const Facts& facts, Format format);

// The reference of every setting (name, YAML key, type, default, accepted values, module, doc)
// as Markdown: the contents of docs/settings.md.
std::string renderReference();

// How a default reads in listings: "unset", "-2 (auto)", "2".
std::string displayDefault(const SettingDef& def);

}  // namespace weft::config
