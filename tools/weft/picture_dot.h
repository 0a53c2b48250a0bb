// Pictures through Graphviz: the DOT text weft writes, and its rendering by Graphviz's `dot`
// (run as a subprocess when installed; weft lays nothing out itself).
#pragma once

#include <string>
#include <string_view>

#include "core/base/status.h"

namespace weft::tool {

// `text` as a DOT double-quoted string, quotes included ("a\"b").
std::string dotQuote(std::string_view text);
// `text` escaped for a Graphviz HTML-like label (&, <, >, ").
std::string htmlEscape(std::string_view text);

// Colours and widths shared by every picture, so that an NVLink looks the same in all of them.
struct LinkStyle {
  const char* color;
  const char* style;  // "solid", "dashed", …
};
// By link/path type name: NVL, NVB, C2C, PCI (PIX, PXB, P2C, PHB), PXN, SYS, NET, LOC.
LinkStyle linkStyle(std::string_view type);

// Graphviz's `dot`: $WEFT_DOT when set, else `dot` on PATH; empty when neither is executable.
std::string findDot();

// Seconds Graphviz may take for one picture unless WEFT_DOT_TIMEOUT says otherwise.
inline constexpr int kDotTimeoutSeconds = 60;

// Renders `dot` text with `dotProgram -T<format>` (svg, png, pdf); returns the output. Fails,
// naming the program and what to do, when it rejects the text (its messages go to stderr) or
// runs past WEFT_DOT_TIMEOUT seconds (it is then killed).
Result<std::string> renderDot(const std::string& dotProgram, const std::string& dot, const std::string& format);

// The format a picture file's name asks for: "svg", "png", "pdf" or "dot" (by extension; svg
// when there is none or it is unknown).
std::string pictureFormat(const std::string& path);

// Writes a picture: DOT text for format "dot", else the rendering. Without Graphviz, writes the
// DOT text next to `path` (its extension replaced by .dot) and prints one line on stderr saying
// how to render it. `path` "-" is stdout. Files are written atomically, only on success.
Status writePicture(const std::string& dot, const std::string& path, const std::string& format);

}  // namespace weft::tool
