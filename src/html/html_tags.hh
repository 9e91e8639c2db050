// The tag sets the streaming tokenizer reads by, and its text rules: white space, case,
// attribute values and names as gumbo reads them (src/html/html_tags.cc; html_tokenizer.cc).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mimeuri::html::tags {

// 13.2.5: the tokenizer's white space (a CR never reaches it: the input stream makes CR LF
// and CR into LF, 13.2.3.5).
inline bool ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
inline bool alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool one_of_chars(char c, std::string_view set) { return set.find(c) != std::string_view::npos; }

inline bool iequal(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
        if (lower(a[k]) != lower(b[k])) return false;
    return true;
}

inline bool iequal_at(std::string_view s, std::size_t at, std::string_view word)
{
    if (at + word.size() > s.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k)
        if (lower(s[at + k]) != word[k]) return false;
    return true;
}

// The value as gumbo decodes it, where that is plain: printable ASCII (no DEL), tab, LF, FF, space
// as they are, CR LF and CR as LF, a '&' that starts no reference (followed by letters and
// digits and '=': a query's "&name=", 13.2.5.73), and the references mail is full of (tracking
// links' "&amp;"): &amp; &lt; &gt; &quot; &apos; with their ';', and numeric ones with ';' for
// a printable ASCII character (13.2.5.72-80: no replacement table applies to those). Anything
// else (another reference, a NUL, 8-bit bytes) is left to gumbo itself (decode_attribute):
// nullopt.
std::optional<std::string> plain_decoded(std::string_view v);


// Script data (13.2.5.4, 13.2.5.15-30): text up to "</script" followed by white space, '/'
// or '>', where "<!--" escapes the text and, escaped, "<script" and such a byte escape it
// twice: "</script" then closes the inner one only, and "-->" ends both. Only '<', '-' and
// '>' move between the states.
enum class Script { Data, Esc, EscDash, EscDashDash, Dbl, DblDash, DblDashDash };
struct ScriptEnd {
    std::size_t at; // where the end tag's "</" is; else where reading stopped
    bool end_tag;
};
// h read from j in state st (moved on): to the end tag, or to h's end, or (cut: h is not the
// whole text) to a '<' whose (at most 8) deciding bytes go past h's end, st then the state
// before it, to be read again from there with more text.
ScriptEnd script_data(std::string_view h, std::size_t j, Script &st, bool cut);

// Whether name is one of names (string literals or views; views compare their lengths first,
// no byte for most).
template <typename Name, std::size_t N> bool one_of(std::string_view name, const Name (&names)[N])
{
    for (const Name &n : names)
        if (name == n) return true;
    return false;
}

// Start tags after which tree construction changes the tokenizer's states or drops tags:
// foreign content (CDATA, self-closing, other attribute names), PLAINTEXT,
// template contents, the frameset insertion mode (which ignores most tags),
// <noscript> (whose reading depends on scripting), and tags gumbo renames or rewrites.
inline constexpr std::string_view kFallbackTags[] = {"math", "plaintext", "template", "frameset",
                                     "frame", "noscript", "isindex", "image"};
inline constexpr std::string_view kRawText[] = {"style", "xmp", "iframe", "noembed", "noframes"}; // 13.2.6.4.7 and in head
inline constexpr std::string_view kRcdata[] = {"title", "textarea"};
// SVG elements read inside <svg> (13.2.6.5, "any other start tag": a foreign element with
// the tag's attributes). Not among them, so that the tree goes to gumbo: the tags that break
// out of foreign content (<div>, <p>, <font>...), <script> and <style> (their text is not
// RAWTEXT there), and anything else. The HTML integration points (foreignObject, desc,
// title) are read while they hold text only: a start tag in one is read by HTML's rules
// (13.2.6, the tree construction dispatcher), and goes to gumbo.
inline constexpr std::string_view kSvgTags[] = {
    "a", "animate", "animatemotion", "animatetransform", "circle", "clippath", "defs", "ellipse", "feblend",
    "fecolormatrix", "fecomponenttransfer", "fecomposite", "feconvolvematrix", "fediffuselighting",
    "fedisplacementmap", "fedistantlight", "fedropshadow", "feflood", "fefunca", "fefuncb", "fefuncg", "fefuncr",
    "fegaussianblur", "feimage", "femerge", "femergenode", "femorphology", "feoffset", "fepointlight",
    "fespecularlighting", "fespotlight", "fetile", "feturbulence", "filter", "g", "image", "line", "lineargradient",
    "marker", "mask", "metadata", "mpath", "path", "pattern", "polygon", "polyline", "radialgradient", "rect", "set",
    "stop", "svg", "switch", "symbol", "text", "textpath", "tspan", "use", "view",
    "foreignobject", "desc", "title"};
inline constexpr std::size_t kMaxSvgDepth = 512;
inline constexpr std::size_t kMaxSvgName = 64; // the longest SVG tag name is 19 bytes
// Table structure: ignored "in body" (no table open), handled inside a table.
inline constexpr std::string_view kCellTags[] = {"td", "th", "caption"};
inline constexpr std::string_view kRowTags[] = {"tr", "tbody", "thead", "tfoot", "col", "colgroup"};

// An attribute name as gumbo may compare it, over-approximated: printable ASCII as it is, each
// run of other bytes one mark. gumbo's input stream makes controls, DEL and invalid UTF-8 U+FFFD
// one or more times and leaves other UTF-8 as it is, and changes no printable ASCII (names are
// lowercased before they get here): two names gumbo holds equal have the same key.
std::string name_key(std::string_view name);

} // namespace mimeuri::html::tags
