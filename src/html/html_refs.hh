// Finding and rewriting URL references in HTML, at byte offsets, with a real HTML5
// tokenizer (gumbo) for the markup and a CSS tokenizer for url() and @import.
// Pure C++ over bytes: no GMime types.
#pragma once

#include "error_code.hh"
#include "result.hh"

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
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
    bool srcdoc{false};       // an <iframe srcdoc>: decoded is an HTML document (HTML 4.8.5), and its
                              // references are that document's, each with its Ref::inner
};

// Where, inside an <iframe srcdoc> document, a reference stands (its holder there).
struct Inner {
    std::string element;  // the inner holder's element and attribute, as Holder's
    std::string attr;
    bool attribute{true}; // false: <style> text
    char quote{0};        // the inner attribute's quote ('"', '\'', 0 unquoted)
    bool verbatim{true};  // the URL's bytes stand as they are in the document (Ref::begin, end);
                          // false: escaped there (the span is then the inner holder's), not rewritable
};

struct Ref {
    std::size_t holder{0};
    std::size_t begin{0}; // the URL's span in holder.decoded
    std::size_t end{0};
    std::string url;      // the URL as a browser's URL parser reads it (url_as_parsed), CSS escapes undone
    bool css{false};      // inside url() or @import
    bool css_quoted{false};
    bool padded{false};   // white space around the URL in its slot, or bytes the URL parser drops
                          // (url_as_parsed), covered by [begin, end)
    int inner{-1};        // in a srcdoc holder: its place in that document (Scan::inner)
};

// What the WHATWG URL parser reads of a URL text before anything else (URL Standard, basic
// URL parser): leading and trailing C0 controls and spaces stripped, every ASCII tab, LF and
// CR removed. "ci\td:x", "\x01 CID:x" are cid: URLs to a browser, and so to the scanner.
std::string url_as_parsed(std::string_view text);

// Why a parse stopped before its end: each is a limit, reported, with no result.
enum class Stop { None, Time, Memory, Nesting, Work };

struct Scan {
    std::vector<Holder> holders;
    std::vector<Ref> refs;
    std::optional<std::string> base_href; // the first <base href>
    bool truncated{false};                // stopped at max_refs
    Stop stop{Stop::None};                // a limit stopped the parse: no holders, no refs
    std::string stop_message;
    std::vector<Inner> inner;             // the places of references inside srcdoc documents
};

// Makes a Scan from what a tokenizer found: the gumbo walk (find_refs) and the streaming
// tokenizer (html_tokenizer.hh) both report to one, so that both make the same holders and
// references from the same attributes.
class ScanBuilder {
public:
    explicit ScanBuilder(std::size_t max_refs) : max_refs_(max_refs) {}
    // Whether an attribute of this name (lower case; "xlink:href" for the XLink namespace)
    // can hold a reference: the others need not be decoded.
    static bool wanted(std::string_view name);
    // An attribute of element tag (lower case): its raw value with any quotes (raw, at off in
    // the HTML), and its decoded value. One offset is taken once (gumbo clones elements).
    void attribute(const std::string &tag, const std::string &name, std::size_t off, std::string_view raw,
                   std::string decoded);
    // The raw text of a <style> element, at off in the HTML.
    void style_text(std::size_t off, std::string_view text);
    bool full() const { return scan_.refs.size() >= max_refs_; }
    void truncate() { scan_.truncated = true; }
    // The scan, references in document order.
    Scan finish();

private:
    void add_ref(std::size_t holder, std::size_t b, std::size_t e, std::string url, bool css, bool css_quoted,
                 bool padded = false);
    std::size_t add_holder(Holder h);
    void css_refs(std::size_t holder);
    void document(Holder h);
    std::size_t max_refs_;
    Scan scan_;
    std::set<std::size_t> seen_; // value offsets already taken
};

// The report's error kind for a stop: "html-time-limit", "html-memory-limit", "html-nesting-limit",
// "html-work-limit".
ErrorCode stop_kind(Stop stop);

// Bounds on one parse. The parser's memory is capped, its time asked every few of its
// allocations, and the stack its recursion uses is bounded (Stop::Nesting).
struct ParseLimits {
    std::size_t max_refs{1000000};
    std::size_t max_bytes{0};          // 0: memory_cap(html.size(), kDefaultHtmlMax)
    std::function<bool()> out_of_time; // may be empty: no deadline
};

constexpr std::size_t kDefaultHtmlMax = 32u << 20;

// The parser's memory cap for an HTML text of `size` bytes under --html-max `html_max`
// (see docs/design.md): 40 times the text, at least 64 MiB, at most 8 times --html-max.
std::size_t memory_cap(std::size_t size, std::size_t html_max);

// A srcset's candidates (HTML 4.8.4.3.10: separated by commas, each a URL then descriptors):
// each URL's span in v, a trailing comma not part of it.
std::vector<std::pair<std::size_t, std::size_t>> srcset_urls(std::string_view v);

// Every reference in src, href, background, poster, data, longdesc, lowsrc, action, srcset
// (each candidate), SVG href and xlink:href, <base href> (reported as base_href, not as a
// reference), CSS url() and @import in style attributes and <style> elements, and those of the
// document an <iframe srcdoc> holds (Holder::srcdoc, Ref::inner). The HTML is
// bytes in any ASCII-compatible charset. A limit gives a Scan with stop set; an error is a
// failed allocation (Code::TempFail: the machine, not the message).
Result<Scan> find_refs(std::string_view html, const ParseLimits &limits);
inline Result<Scan> find_refs(std::string_view html, std::size_t max_refs)
{
    ParseLimits l;
    l.max_refs = max_refs;
    return find_refs(html, l);
}

// False only when no cid: or mid: reference can be in html: it holds no "id:" (any case,
// with or without tabs and newlines between its letters: url_as_parsed removes them), no
// numeric character reference that decodes to c, i, d, m, ':', a tab or a newline, no
// "&colon;", "&Tab;" or "&NewLine;", no backslash (a CSS escape) and no "srcdoc" (any case: its
// document is decoded once more). A cheap test that lets a part skip the HTML5 parse; it must
// agree with find_refs (a differential test and fuzz_html check that it does).
bool may_hold_reference(std::string_view html);
// Whether html holds "srcdoc" in any case (an attribute name is never decoded).
bool holds_srcdoc(std::string_view html);

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
    // In CSS, the new URL written quoted even where the old one was not: url(cid:x) is read
    // to its ')' by readers that find cid: URLs by pattern (mailparser). The quote is the one
    // its attribute's quotes leave alone ('), or " in <style> text.
    bool css_quote{false};
};

// One piece of an attribute's raw value: literal bytes, or one character reference ("&...").
struct ValuePiece {
    std::size_t raw_begin, raw_end; // in the raw value
    std::size_t begin, end;         // its decoded text's span in Holder::decoded
    bool identity;                  // literal bytes that decode to themselves: any byte is a boundary
};

// An attribute value decoded as gumbo decodes it (character references, CR LF, NUL, bytes
// that are not UTF-8), from one parse of a small fragment with the same quoting (0: unquoted);
// nullopt when that parse fails.
std::optional<std::string> decode_attribute(std::string_view raw, char quote);

// The raw value cut into pieces, each decoded as gumbo decodes it (one parse of a small
// fragment with the same quoting); empty when their decodings, end to end, are not exactly
// `decoded` (then no offset in the value can be mapped).
std::vector<ValuePiece> segments(std::string_view raw, char quote, std::string_view decoded);

// The raw offset of decoded offset x, where x is a segment boundary or inside a literal
// segment that decodes to itself; nullopt elsewhere.
std::optional<std::size_t> raw_offset(const std::vector<ValuePiece> &segs, std::size_t x);

struct Rewritten {
    std::string html;
    std::vector<std::size_t> skipped; // indexes into the replacements that were not applied
};

// Raw bytes [begin, end) of the HTML replaced with text.
struct Splice {
    std::size_t begin, end;
    std::string text;
};

// Applies replacements to the HTML. Every byte outside a replaced reference's raw bytes
// stays as it was: a reference is replaced only where its decoded span maps to raw
// offsets (segment boundaries); an unquoted value whose new URL needs quotes gets them
// only where the value reads the same quoted. Anything else is left, and listed in skipped.
// extra: splices of other bytes (page_cuts), none overlapping a reference's attribute.
Rewritten rewrite(std::string_view html, const Scan &scan, const std::vector<Replacement> &replacements,
                  const std::vector<Splice> &extra = {});

// For a page --cid=extract writes, what keeps a browser from loading the files it names
// once opened as a file: each <base href> attribute (the base would send every relative
// name elsewhere), and the crossorigin and integrity attributes of an element one of whose
// attribute values (at raw offsets `rewritten`, a Holder's raw_begin) names such a file (a
// browser fetches a file: URL in CORS mode from a file: page, and checks integrity only on
// a CORS response: both refuse it). Each is a splice that cuts the attribute, name to value
// end. Parsed by gumbo under the limits; a limit or failure gives no cuts (the page is
// written as it would have been).
std::vector<Splice> page_cuts(std::string_view html, const std::set<std::size_t> &rewritten, const ParseLimits &limits);

} // namespace mimeuri::html
