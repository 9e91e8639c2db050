// A <body>'s presentational colours, which a browser paints on a body only, as the CSS that
// shows them on the <div> an archive page writes in its place (html_sanitize.cc); and HTML's
// "rules for parsing a legacy colour value" (WHATWG HTML, 2.3.6 Colors) they are read by.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mimeuri::html {

// The colour a browser gives an attribute such as bgcolor="..." as CSS text: a named colour's
// keyword as written (lower case), else "#rrggbb"; none where the browser gives none (an empty
// value, "transparent").
std::optional<std::string> legacy_colour(std::string_view value);

// The style of that <div>: background-color (bgcolor) and color (text) as legacy_colour reads
// them, background-image (background, a URL already checked by the caller), then the body's
// own style, which outranks them as an author style outranks presentational hints. Link
// colours (link, vlink, alink) style a body's descendants and have no inline form: not kept.
// "" when there is nothing to paint.
std::string body_css(const std::optional<std::string> &bgcolor, const std::optional<std::string> &text,
                     const std::optional<std::string> &background, const std::optional<std::string> &style);

} // namespace mimeuri::html
