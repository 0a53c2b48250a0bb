// A fast reader for the plain YAML that policies are written in: block mappings and sequences,
// plain and simply quoted scalars, one-level flow sequences and mappings, comments. It builds
// exactly the tree (values, tags, positions) that yaml-cpp's parser gives for such text, in a
// small fraction of its time (yaml-cpp's scanner costs ~5 µs per line). Anything else —
// anchors, tags, block scalars, multi-line scalars, escapes, tabs, non-ASCII, errors — is
// declined, and the caller reads the text with yaml-cpp, which stays the authority.
// Equality with yaml-cpp is checked by tests and by the YAML fuzz target.
#pragma once

#include <optional>
#include <string_view>

#include "core/config/yaml_tree.h"

namespace weft::config {

// The document's tree, or nothing when the text is outside the subset.
std::optional<YamlNode> parseSimpleYaml(std::string_view text);

// yaml-cpp's reading of `text`, always (parseYamlDocument tries parseSimpleYaml first).
Result<YamlNode> parseYamlWithYamlCpp(std::string_view text, const std::string& path);

// Deep equality of two trees, positions and tags included.
bool sameTree(const YamlNode& a, const YamlNode& b);

}  // namespace weft::config
