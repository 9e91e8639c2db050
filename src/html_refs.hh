// Finding and rewriting URL references in HTML, at byte offsets, with a real HTML5
// tokenizer (gumbo) for the markup and a CSS tokenizer for url() and @import.
// Pure C++ over bytes: no GMime types.
#pragma once

#include "result.hh"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri::html {

// Where references live: an attribute value or the text of a <style> element.
struct Holder {
    std::size_t raw_begin{0}; // span of the raw value in the HTML, inside any quotes
    std::size_t raw_end{0};
    char quote{0};            // '"' or '\'' for a quoted attribute, 0 otherwise
    bool attribute{true};     // false: <style> text (raw text, no character references)
    std::string decoded;      // the value as a browser sees it (character references decoded)
    std::string element;      // tag name, lower case
    std::string attr;         // attribute name ("xlink:href" for the XLink namespace), or "style" text
};

struct Ref {
    std::size_t holder{0};
    std::size_t begin{0}; // the URL's span in holder.decoded
    std::size_t end{0};
    std::string url;      // the URL text (CSS escapes undone, surrounding white space trimmed)
    bool css{false};      // inside url() or @import
    bool css_quoted{false};
    bool padded{false};   // white space around the URL in its slot, covered by [begin, end)
};

struct Scan {
    std::vector<Holder> holders;
    std::vector<Ref> refs;
    std::optional<std::string> base_href; // the first <base href>
    bool truncated{false};                // stopped at max_refs
};

// Every reference in src, href, background, poster, data, longdesc, lowsrc, action, srcset
// (each candidate), SVG href and xlink:href, <base href> (reported as base_href, not as a
// reference), CSS url() and @import in style attributes and <style> elements. The HTML is
// bytes in any ASCII-compatible charset.
Result<Scan> find_refs(std::string_view html, std::size_t max_refs);

// CSS references in text: url(...) quoted or not, with escapes, and @import "..."; comments
// and strings skipped. Exposed for tests.
struct CssUrl {
    std::size_t begin, end; // span of the URL text inside text (inside the quotes if quoted)
    std::string url;
    bool quoted;
};
std::vector<CssUrl> css_urls(std::string_view text);

struct Replacement {
    std::size_t ref; // index into Scan::refs
    std::string url; // the new URL
};

// Applies replacements to the HTML: bytes outside changed references stay as they are.
// Where a value holds character references, or a new URL needs quoting its old place
// cannot give, the holder's whole value is rewritten (re-escaped, quoted).
std::string rewrite(std::string_view html, const Scan &scan, const std::vector<Replacement> &replacements);

} // namespace mimeuri::html
