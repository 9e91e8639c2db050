// html_refs: the references an HTML part holds, found with gumbo (the full HTML5 parser).
//
// SYNOPSIS  find_refs(html, limits): every reference (URL attributes, style attributes and
//           <style> text) and its holder, gumbo run under src/html/html_guard.c's limits;
//           may_hold_reference(html): false only where find_refs would find no cid: or mid:;
//           css_urls(text): the url() and @import references of CSS; page_cuts: what a saved
//           page drops; ScanBuilder: the Scan both gumbo's walk and src/html/html_tokenizer.cc fill.
// Rewriting the references found is src/html/html_rewrite.cc.
#include "html_refs.hh"

#include "html_detail.hh"
#include "html_guard.h"
#include "html_tags.hh"
#include "html_tokenizer.hh"

#include <glib.h>
#include <gumbo.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace mimeuri::html {

std::vector<std::pair<std::size_t, std::size_t>> srcset_urls(std::string_view v)
{
    using detail::is_space;
    std::vector<std::pair<std::size_t, std::size_t>> out;
    std::size_t i = 0;
    while (i < v.size()) {
        while (i < v.size() && (is_space(v[i]) || v[i] == ',')) ++i;
        const std::size_t b = i;
        while (i < v.size() && !is_space(v[i])) ++i;
        std::size_t e = i;
        while (e > b && v[e - 1] == ',') --e; // "url," with no descriptor
        if (e > b) out.emplace_back(b, e);
        // skip descriptors up to the next comma outside parentheses
        int depth = 0;
        while (i < v.size()) {
            if (v[i] == '(') ++depth;
            else if (v[i] == ')') --depth;
            else if (v[i] == ',' && depth <= 0) break;
            ++i;
        }
    }
    return out;
}

using detail::Guarded;
using detail::hexval;
using detail::is_space;

namespace {

bool iequal(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (g_ascii_tolower(a[i]) != g_ascii_tolower(b[i])) // never the locale's (Turkish I)
            return false;
    return true;
}

// Attributes whose whole value is one URL.
constexpr std::string_view kUrlAttributes[] = {"src",  "href",       "background", "poster",   "data",
                                               "longdesc", "lowsrc", "action",     "cite",     "formaction",
                                               "icon", "manifest",   "codebase",   "usemap",   "dynsrc"};
bool url_attribute(std::string_view name) { return tags::one_of(name, kUrlAttributes); }
// The other attributes the scan reads (ScanBuilder::wanted).
constexpr std::string_view kOtherWanted[] = {"style", "srcset", "imagesrcset", "xlink:href", "srcdoc"};

// What every wanted name shares, derived from the two lists: a length between the shortest
// and the longest, and one of their first letters. Most attribute names fail it at once
// (ScanBuilder::wanted is asked of every attribute of every tag, issue 53).
struct WantedShape {
    std::size_t shortest{~std::size_t{0}}, longest{0};
    bool first[128]{};
    constexpr WantedShape()
    {
        for (std::string_view n : kUrlAttributes) add(n);
        for (std::string_view n : kOtherWanted) add(n);
    }
    constexpr void add(std::string_view n)
    {
        shortest = std::min(shortest, n.size());
        longest = std::max(longest, n.size());
        first[static_cast<unsigned char>(n[0])] = true;
    }
    bool fits(std::string_view name) const
    {
        return name.size() >= shortest && name.size() <= longest && static_cast<unsigned char>(name[0]) < 128 &&
               first[static_cast<unsigned char>(name[0])];
    }
};
constexpr WantedShape kWantedShape;

// Trimmed span of s[begin, end).
std::pair<std::size_t, std::size_t> trim(std::string_view s, std::size_t begin, std::size_t end)
{
    while (begin < end && is_space(s[begin])) ++begin;
    while (end > begin && is_space(s[end - 1])) --end;
    return {begin, end};
}

void append_utf8(std::string &out, unsigned long cp)
{
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    if (cp < 0x80) out += static_cast<char>(cp);
    else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// CSS Syntax 4.3.7: consumes an escape after the backslash at i; returns the new index.
std::size_t css_escape(std::string_view t, std::size_t i, std::string &out)
{
    if (i >= t.size()) return i;
    if (hexval(t[i]) >= 0) {
        unsigned long cp = 0;
        std::size_t n = 0;
        while (i < t.size() && n < 6 && hexval(t[i]) >= 0) {
            cp = cp * 16 + static_cast<unsigned long>(hexval(t[i]));
            ++i;
            ++n;
        }
        if (i < t.size() && is_space(t[i])) ++i;
        append_utf8(out, cp);
        return i;
    }
    if (t[i] == '\n') return i + 1; // an escaped newline inside a string is a continuation
    out += t[i];
    return i + 1;
}

} // namespace

bool ScanBuilder::wanted(std::string_view name)
{
    return kWantedShape.fits(name) && (url_attribute(name) || tags::one_of(name, kOtherWanted));
}

std::string url_as_parsed(std::string_view text)
{
    // WHATWG URL, "basic URL parser": leading and trailing C0 controls and spaces stripped,
    // then every ASCII tab or newline removed.
    auto c0_or_space = [](char c) { return static_cast<unsigned char>(c) <= 0x20; };
    std::size_t b = 0, e = text.size();
    while (b < e && c0_or_space(text[b])) ++b;
    while (e > b && c0_or_space(text[e - 1])) --e;
    std::string out;
    out.reserve(e - b);
    std::size_t copied = b; // runs with none of them are copied whole
    for (std::size_t i = b; i < e; ++i)
        if (text[i] == '\t' || text[i] == '\n' || text[i] == '\r') out.append(text.substr(copied, i - copied)), copied = i + 1;
    out.append(text.substr(copied, e - copied));
    return out;
}

void ScanBuilder::add_ref(std::size_t holder, std::size_t b, std::size_t e, std::string url, bool css, bool css_quoted,
                          bool padded)
{
    if (full()) {
        scan_.truncated = true;
        return;
    }
    // The URL a browser loads: what its URL parser drops is padding (a repair writes it out).
    std::string parsed = url_as_parsed(url);
    if (parsed.empty()) return;
    padded = padded || parsed.size() != url.size();
    scan_.refs.push_back({holder, b, e, std::move(parsed), css, css_quoted, padded});
}

std::size_t ScanBuilder::add_holder(Holder h)
{
    scan_.holders.push_back(std::move(h));
    return scan_.holders.size() - 1;
}

void ScanBuilder::css_refs(std::size_t holder)
{
    for (auto &u : css_urls(scan_.holders[holder].decoded)) {
        std::string url = u.url;
        std::size_t b = url.find_first_not_of(" \t\r\n\f"), e = url.find_last_not_of(" \t\r\n\f");
        bool padded = b != 0 || (e != std::string::npos && e + 1 != url.size());
        url = b == std::string::npos ? std::string() : url.substr(b, e - b + 1);
        if (!url.empty()) add_ref(holder, u.begin, u.end, url, true, u.quoted, padded);
    }
}

void ScanBuilder::attribute(const std::string &tag, const std::string &name, std::size_t off, std::string_view raw,
                            std::string decoded)
{
    const std::size_t len = raw.size();
    const bool style = name == "style", srcset = name == "srcset" || name == "imagesrcset";
    const bool url = url_attribute(name) || name == "xlink:href";
    const bool srcdoc = name == "srcdoc" && tag == "iframe";
    if (!style && !srcset && !url && !srcdoc) return;
    if (len == 0) return;
    if (!seen_.insert(off).second) return;
    Holder h;
    if (len >= 2 && (raw[0] == '"' || raw[0] == '\'') && raw[len - 1] == raw[0]) {
        h.quote = raw[0];
        h.raw_begin = off + 1;
        h.raw_end = off + len - 1;
    } else {
        h.raw_begin = off;
        h.raw_end = off + len;
    }
    h.decoded = std::move(decoded);
    h.element = tag;
    h.attr = name;
    if (srcdoc) return document(std::move(h));
    if (tag == "base" && name == "href") {
        auto [b, e] = trim(h.decoded, 0, h.decoded.size());
        if (!scan_.base_href) scan_.base_href = h.decoded.substr(b, e - b); // the first one counts
        return;
    }
    std::size_t hi = add_holder(std::move(h));
    const std::size_t refs_before = scan_.refs.size();
    const std::string &v = scan_.holders[hi].decoded;
    struct DropEmpty { // a holder with no reference is not kept: holders stay bounded by refs
        Scan &scan;
        std::size_t refs_before;
        ~DropEmpty()
        {
            if (scan.refs.size() == refs_before) scan.holders.pop_back();
        }
    } drop{scan_, refs_before};
    if (style) {
        css_refs(hi);
    } else if (srcset) {
        for (const auto &[b, e] : srcset_urls(v)) add_ref(hi, b, e, v.substr(b, e - b), false, false);
    } else {
        // The whole value is the slot: a repair replaces the padding too.
        auto [b, e] = trim(v, 0, v.size());
        if (e > b) add_ref(hi, 0, v.size(), v.substr(b, e - b), false, false, b > 0 || e < v.size());
    }
}

namespace {

// srcdoc documents read inside srcdoc documents, at most this deep (each level is parsed once
// more: the work is bounded by this times the text). Mail has one level where it has any.
constexpr int kMaxSrcdocDepth = 3;
thread_local int srcdoc_depth = 0;

struct Deeper {
    Deeper() { ++srcdoc_depth; }
    ~Deeper() { --srcdoc_depth; }
    Deeper(const Deeper &) = delete;
    Deeper &operator=(const Deeper &) = delete;
};

} // namespace

// An <iframe srcdoc>'s value, decoded once, is the HTML document the frame shows (HTML 4.8.5):
// its references are read as a page's (the streaming tokenizer, gumbo where it cannot say) and
// kept as references of the srcdoc attribute, each at the offsets of its URL in the document,
// where it stands there in Ref::inner. A URL escaped in the document (a character reference in
// its inner attribute) is reported, spanning its inner holder, and never rewritten. The
// document's <base href> is its own, not the page's.
void ScanBuilder::document(Holder h)
{
    if (h.decoded.empty() || srcdoc_depth >= kMaxSrcdocDepth || full()) return;
    h.srcdoc = true;
    ParseLimits limits;
    limits.max_refs = max_refs_ - scan_.refs.size();
    auto doc = [&] {
        Deeper deeper;
        return scan_refs(h.decoded, limits);
    }();
    if (!doc || doc->stop != Stop::None || doc->refs.empty()) return; // a limit inside: not looked at
    if (doc->truncated) scan_.truncated = true;
    const std::size_t hi = add_holder(std::move(h));
    const std::string_view text = scan_.holders[hi].decoded;
    std::vector<ValuePiece> segs; // of the inner holder segs_of
    std::size_t segs_of = std::size_t(-1);
    for (const Ref &r : doc->refs) {
        if (full()) {
            scan_.truncated = true;
            break;
        }
        const Holder &ih = doc->holders[r.holder];
        Inner in = r.inner >= 0 ? doc->inner[static_cast<std::size_t>(r.inner)] : Inner{ih.element, ih.attr, ih.attribute, ih.quote, true};
        Ref out = r;
        out.holder = hi;
        // Where the URL stands in the document: <style> text is its own decoding; in an
        // attribute, where its bytes are literal (segments: the value's character references).
        std::optional<std::size_t> b = ih.raw_begin + r.begin, e = ih.raw_begin + r.end;
        const std::string_view raw = text.substr(ih.raw_begin, ih.raw_end - ih.raw_begin);
        if (ih.attribute && raw != ih.decoded) {
            if (segs_of != r.holder) {
                segs = segments(raw, ih.quote, ih.decoded);
                segs_of = r.holder;
            }
            b = raw_offset(segs, r.begin);
            e = raw_offset(segs, r.end);
            if (b && e) {
                *b += ih.raw_begin;
                *e += ih.raw_begin;
            }
        }
        if (b && e && *b <= *e) {
            out.begin = *b;
            out.end = *e;
        } else {
            out.begin = ih.raw_begin;
            out.end = ih.raw_end;
            in.verbatim = false;
        }
        scan_.inner.push_back(std::move(in));
        out.inner = static_cast<int>(scan_.inner.size() - 1);
        scan_.refs.push_back(std::move(out));
    }
}

void ScanBuilder::style_text(std::size_t off, std::string_view text)
{
    if (!seen_.insert(off).second) return;
    Holder h;
    h.attribute = false;
    h.raw_begin = off;
    h.raw_end = off + text.size();
    h.decoded.assign(text);
    h.element = "style";
    h.attr = "css";
    std::size_t refs_before = scan_.refs.size();
    css_refs(add_holder(std::move(h)));
    if (scan_.refs.size() == refs_before) scan_.holders.pop_back();
}

Scan ScanBuilder::finish()
{
    // Document order, as the bytes come: holders (gumbo's tree may hold them in another
    // order: the adoption agency moves elements), then references.
    std::vector<std::size_t> by_place(scan_.holders.size()), index_of(scan_.holders.size());
    for (std::size_t i = 0; i < by_place.size(); ++i) by_place[i] = i;
    std::stable_sort(by_place.begin(), by_place.end(),
                     [&](std::size_t a, std::size_t b) { return scan_.holders[a].raw_begin < scan_.holders[b].raw_begin; });
    std::vector<Holder> holders;
    holders.reserve(by_place.size());
    for (std::size_t i = 0; i < by_place.size(); ++i) {
        index_of[by_place[i]] = i;
        holders.push_back(std::move(scan_.holders[by_place[i]]));
    }
    scan_.holders = std::move(holders);
    for (Ref &r : scan_.refs) r.holder = index_of[r.holder];
    std::vector<std::size_t> order(scan_.refs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const Ref &ra = scan_.refs[a], &rb = scan_.refs[b];
        std::size_t ha = scan_.holders[ra.holder].raw_begin, hb = scan_.holders[rb.holder].raw_begin;
        return ha != hb ? ha < hb : ra.begin < rb.begin;
    });
    std::vector<Ref> sorted;
    sorted.reserve(order.size());
    for (std::size_t i : order) sorted.push_back(std::move(scan_.refs[i]));
    scan_.refs = std::move(sorted);
    return std::move(scan_);
}

namespace {

// Visits the nodes of gumbo's tree in document order, iteratively (hostile nesting must not
// grow the stack), descending into the document, elements and templates; stops when visit
// returns false.
template <typename Visit> void for_each_node(const GumboNode *root, Visit visit)
{
    std::vector<const GumboNode *> stack{root};
    while (!stack.empty()) {
        const GumboNode *n = stack.back();
        stack.pop_back();
        if (!visit(n)) return;
        const GumboVector *children = nullptr;
        if (n->type == GUMBO_NODE_DOCUMENT) children = &n->v.document.children;
        else if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) children = &n->v.element.children;
        if (!children) continue;
        for (unsigned i = children->length; i > 0; --i) stack.push_back(static_cast<const GumboNode *>(children->data[i - 1]));
    }
}

// Where gumbo's text (p, len bytes) lies in html; nullopt for text of its own (not in the input).
std::optional<std::size_t> offset_in(std::string_view html, const char *p, std::size_t len)
{
    const auto base = reinterpret_cast<std::uintptr_t>(html.data()), at = reinterpret_cast<std::uintptr_t>(p);
    if (at < base || at - base > html.size() || len > html.size() - (at - base)) return std::nullopt;
    return static_cast<std::size_t>(at - base);
}

// gumbo's tree, walked: every element's attributes and <style> text, to a ScanBuilder.
struct Walker {
    const std::function<bool()> *out_of_time;
    std::string_view html;
    ScanBuilder &b;
    Stop stop{Stop::None};

    std::optional<std::size_t> offset_of(const char *p, std::size_t len) const { return offset_in(html, p, len); }

    void walk(const GumboNode *root)
    {
        std::size_t visited = 0;
        for_each_node(root, [&](const GumboNode *n) {
            if (++visited % 4096 == 0 && out_of_time && *out_of_time && (*out_of_time)()) {
                stop = Stop::Time;
                return false;
            }
            if (n->type != GUMBO_NODE_ELEMENT && n->type != GUMBO_NODE_TEMPLATE) return true;
            const GumboElement &el = n->v.element;
            std::string tag = el.tag == GUMBO_TAG_UNKNOWN ? std::string() : gumbo_normalized_tagname(el.tag);
            if (tag.empty() && el.original_tag.data) {
                GumboStringPiece t = el.original_tag;
                gumbo_tag_from_original_text(&t);
                tag.assign(t.data, t.length);
                for (char &c : tag) c = static_cast<char>(g_ascii_tolower(c));
            }
            for (unsigned i = 0; i < el.attributes.length; ++i) {
                auto *a = static_cast<const GumboAttribute *>(el.attributes.data[i]);
                std::string name = a->name;
                if (a->attr_namespace == GUMBO_ATTR_NAMESPACE_XLINK) name = "xlink:" + name;
                if (!ScanBuilder::wanted(name) || !a->original_value.data) continue;
                if (auto off = offset_of(a->original_value.data, a->original_value.length))
                    b.attribute(tag, name, *off, html.substr(*off, a->original_value.length), a->value ? a->value : "");
            }
            if (el.tag == GUMBO_TAG_STYLE) {
                for (unsigned i = 0; i < el.children.length; ++i) {
                    auto *c = static_cast<const GumboNode *>(el.children.data[i]);
                    if (c->type != GUMBO_NODE_TEXT && c->type != GUMBO_NODE_WHITESPACE) continue;
                    const GumboText &t = c->v.text;
                    if (!t.original_text.data) continue;
                    if (auto off = offset_of(t.original_text.data, t.original_text.length))
                        b.style_text(*off, html.substr(*off, t.original_text.length));
                }
            }
            if (b.full()) {
                b.truncate(); // stopped looking at the limit
                return false;
            }
            return true;
        });
    }
};

} // namespace

namespace {

// Whether a numeric character reference at html[i] ("&#...") decodes to c, i, d, m or ':'.
// HTML 13.2.5.80: any number of digits; a value past U+10FFFF is U+FFFD.
bool spells_reference_char(std::string_view html, std::size_t i)
{
    std::size_t j = i + 2;
    int base = 10;
    if (j < html.size() && (html[j] == 'x' || html[j] == 'X')) {
        base = 16;
        ++j;
    }
    unsigned long v = 0;
    std::size_t digits = 0;
    for (; j < html.size() && g_ascii_isxdigit(html[j]); ++j, ++digits) {
        if (base == 10 && !g_ascii_isdigit(html[j])) break;
        v = v * static_cast<unsigned long>(base) + static_cast<unsigned long>(g_ascii_xdigit_value(html[j]));
        if (v > 0x10FFFF) v = 0x110000; // saturate: stays out of range however many digits follow
    }
    if (digits == 0) return false;
    // A tab or newline, which the URL parser removes, may stand between them.
    return v < 128 && std::string_view("cidmCIDM:\t\n\r").find(static_cast<char>(v)) != std::string_view::npos;
}

bool url_drops(char c) { return c == '\t' || c == '\n' || c == '\r'; }

} // namespace

bool holds_srcdoc(std::string_view html)
{
    // An attribute's name is never decoded: "srcdoc" is there in bytes, in any case, before
    // the '=' of its value (white space between): each '=' found by memchr, and looked back
    // from (a srcdoc with no value is an empty document).
    for (std::size_t i = html.find('='); i != std::string_view::npos; i = html.find('=', i + 1)) {
        std::size_t j = i;
        while (j > 0 && is_space(html[j - 1])) --j;
        if (j >= 6 && g_ascii_strncasecmp(html.data() + j - 6, "srcdoc", 6) == 0) return true;
    }
    return false;
}

bool may_hold_reference(std::string_view html)
{
    // A backslash or '&' before the last byte, "id:" in any case: found by memchr, the text
    // read once per character looked for.
    if (html.size() < 2) return false;
    if (html.substr(0, html.size() - 1).find('\\') != std::string_view::npos) return true;
    // A srcdoc document is decoded once more than the page: "cid&amp;colon;x" is a cid: there.
    if (holds_srcdoc(html)) return true;
    for (std::size_t i = html.find('&'); i != std::string_view::npos && i + 1 < html.size(); i = html.find('&', i + 1)) {
        if (html[i + 1] == '#' && spells_reference_char(html, i)) return true;
        if (i + 6 < html.size() && g_ascii_strncasecmp(html.data() + i + 1, "colon", 5) == 0) return true;
        // &Tab; and &NewLine;: what the URL parser removes (any case: a superset is safe).
        if (i + 4 < html.size() && g_ascii_strncasecmp(html.data() + i + 1, "tab", 3) == 0) return true;
        if (i + 8 < html.size() && g_ascii_strncasecmp(html.data() + i + 1, "newline", 7) == 0) return true;
    }
    // "id:" with any tabs and newlines between its letters (the URL parser removes them). A
    // run of them is stepped back over only from the ':' or 'd' right after it: linear.
    for (std::size_t i = html.find(':', 1); i != std::string_view::npos; i = html.find(':', i + 1)) {
        std::size_t j = i;
        while (j > 0 && url_drops(html[j - 1])) --j;
        if (j == 0 || (html[j - 1] | 0x20) != 'd') continue;
        --j;
        while (j > 0 && url_drops(html[j - 1])) --j;
        if (j > 0 && (html[j - 1] | 0x20) == 'i') return true;
    }
    return false;
}

std::vector<CssUrl> css_urls(std::string_view t)
{
    std::vector<CssUrl> out;
    std::size_t i = 0;
    auto read_string = [&](std::size_t &j, char q, std::string *value) -> std::size_t {
        // j is just past the opening quote; returns the index of the closing quote (or end); value null: skipped
        std::string scratch;
        while (j < t.size() && t[j] != q) {
            if (t[j] == '\\') {
                j = css_escape(t, j + 1, value ? *value : scratch);
                continue;
            }
            if (t[j] == '\n') break; // a bad string
            if (value) *value += t[j];
            ++j;
        }
        return j;
    };
    // A quoted URL at j: recorded, and j moved past its closing quote.
    auto quoted_url = [&](std::size_t &j) {
        if (j >= t.size() || (t[j] != '"' && t[j] != '\'')) return false;
        char q = t[j];
        std::size_t b = ++j;
        std::string value;
        std::size_t e = read_string(j, q, &value);
        out.push_back({b, e, value, true});
        j = e + 1;
        return true;
    };
    while (i < t.size()) {
        if (!detail::kCssStops[static_cast<unsigned char>(t[i])] && ++i) continue; // none of the cases below
        char c = t[i];
        if (c == '/' && i + 1 < t.size() && t[i + 1] == '*') {
            auto close = t.find("*/", i + 2);
            i = close == std::string_view::npos ? t.size() : close + 2;
            continue;
        }
        if (c == '"' || c == '\'') { // a string that is not a url(): skip it
            std::size_t j = i + 1;
            j = read_string(j, c, nullptr);
            i = j + 1;
            continue;
        }
        if (c == '\\') {
            std::string ignored;
            i = css_escape(t, i + 1, ignored);
            continue;
        }
        if (c == '@' && i + 7 <= t.size() && iequal(t.substr(i, 7), "@import")) {
            std::size_t j = i + 7;
            while (j < t.size() && is_space(t[j])) ++j;
            quoted_url(j);
            i = j;
            continue;
        }
        if ((c == 'u' || c == 'U') && i + 4 <= t.size() && iequal(t.substr(i, 4), "url(") &&
            (i == 0 || !(g_ascii_isalnum(t[i - 1]) || t[i - 1] == '-' || t[i - 1] == '_'))) {
            std::size_t j = i + 4;
            while (j < t.size() && is_space(t[j])) ++j;
            if (quoted_url(j)) {
                i = j;
                continue;
            }
            std::size_t b = j;
            std::string value;
            while (j < t.size() && t[j] != ')' && !is_space(t[j])) {
                if (t[j] == '\\') {
                    j = css_escape(t, j + 1, value);
                    continue;
                }
                if (t[j] == '"' || t[j] == '\'' || t[j] == '(') break; // a bad url
                value += t[j++];
            }
            if (j > b) out.push_back({b, j, value, false});
            i = j;
            continue;
        }
        ++i;
    }
    return out;
}

ErrorCode stop_kind(Stop stop)
{
    switch (stop) {
    case Stop::Time: return ErrorCode::HtmlTimeLimit;
    case Stop::Memory: return ErrorCode::HtmlMemoryLimit;
    case Stop::Nesting: return ErrorCode::HtmlNestingLimit;
    case Stop::Work: return ErrorCode::HtmlWorkLimit;
    case Stop::None: break;
    }
    return ErrorCode::Limit;
}

std::size_t memory_cap(std::size_t size, std::size_t html_max)
{
    const std::size_t floor = 64u << 20, ceiling = std::max(floor, 8 * html_max);
    std::size_t cap = size > ceiling / 40 ? ceiling : std::max(floor, 40 * size);
    return std::min(cap, ceiling);
}

namespace {

// gumbo 0.10 reads a NUL that starts an attribute name (before and after attribute name
// states) into a buffer it then drops, so <img \0src=...> has a "src" to it; WHATWG HTML
// 13.2.5.33 and browsers name it U+FFFD + "src". Such a name's text starts right after the
// NUL. The NULs to mend: each that starts a name gumbo kept, and every NUL in the start tag
// of an element holding one: a second "\0src" in that tag was dropped as a duplicate of the
// first, and would be read as "src" once the first is mended (inside a tag, a NUL anywhere
// else is U+FFFD to gumbo as a C0 control is, so mending it changes nothing else).
std::vector<std::size_t> nuls_to_mend(const GumboNode *root, std::string_view html)
{
    std::vector<std::size_t> at;
    for_each_node(root, [&](const GumboNode *n) {
        if (n->type != GUMBO_NODE_ELEMENT && n->type != GUMBO_NODE_TEMPLATE) return true;
        const GumboElement &el = n->v.element;
        bool holds = false;
        for (unsigned i = 0; i < el.attributes.length; ++i) {
            auto *a = static_cast<const GumboAttribute *>(el.attributes.data[i]);
            auto p = offset_in(html, a->original_name.data, 0);
            if (!p || *p == 0 || html[*p - 1] != '\0') continue;
            at.push_back(*p - 1);
            holds = true;
        }
        auto tag = offset_in(html, el.original_tag.data, el.original_tag.length);
        if (holds && tag)
            for (std::size_t i = *tag; i < *tag + el.original_tag.length; ++i)
                if (html[i] == '\0') at.push_back(i);
        return true;
    });
    return at;
}

// The parses that mending may take: html and body start tags met again add their attributes
// to the first, and each round shows one more name that an earlier one hid as a duplicate.
// Mail never needs a second; a document that needs more is not read (Stop::Work).
constexpr int kMaxMendRounds = 4;

// mended: the parses made so far; copy: where the mended text is kept (html, after the first).
Result<Scan> find_refs_once(std::string_view html, const ParseLimits &limits, int mended, std::string &copy);

} // namespace

std::vector<Splice> page_cuts(std::string_view html, const std::set<std::size_t> &rewritten, const ParseLimits &limits)
{
    std::vector<Splice> cuts;
    if (html.size() >= 0xFFFFFFFFu) return cuts;
    Guarded g(html, limits.max_bytes ? limits.max_bytes : memory_cap(html.size(), kDefaultHtmlMax), &limits.out_of_time);
    if (g.status != HTML_GUARD_OK || !g.out) return cuts;
    // An attribute's raw span, name to value end (its closing quote included).
    auto span = [&](const GumboAttribute *a) -> std::optional<std::pair<std::size_t, std::size_t>> {
        auto b = offset_in(html, a->original_name.data, a->original_name.length);
        if (!b) return std::nullopt;
        std::size_t e = *b + a->original_name.length;
        if (auto v = offset_in(html, a->original_value.data, a->original_value.length); v && *v >= e)
            e = *v + a->original_value.length;
        return std::make_pair(*b, e);
    };
    auto value_at = [&](const GumboAttribute *a) -> std::optional<std::size_t> {
        auto off = offset_in(html, a->original_value.data, 1); // its first byte, to look at
        if (off && (html[*off] == '"' || html[*off] == '\'')) ++*off; // a Holder's raw_begin is inside the quotes
        return off;
    };
    for_each_node(g.out->document, [&](const GumboNode *n) {
        if (n->type != GUMBO_NODE_ELEMENT && n->type != GUMBO_NODE_TEMPLATE) return true;
        const GumboElement &el = n->v.element;
        bool names_file = false;
        for (unsigned i = 0; i < el.attributes.length && !names_file; ++i)
            if (auto off = value_at(static_cast<const GumboAttribute *>(el.attributes.data[i])))
                names_file = rewritten.count(*off) > 0;
        for (unsigned i = 0; i < el.attributes.length; ++i) {
            auto *a = static_cast<const GumboAttribute *>(el.attributes.data[i]);
            const std::string_view name = a->name;
            const bool cut = (el.tag == GUMBO_TAG_BASE && name == "href") ||
                             (names_file && (name == "crossorigin" || name == "integrity"));
            if (!cut) continue;
            if (auto s = span(a)) cuts.push_back({s->first, s->second, ""});
        }
        return true;
    });
    std::sort(cuts.begin(), cuts.end(), [](const Splice &a, const Splice &b) { return a.begin < b.begin; });
    return cuts;
}

Result<Scan> find_refs(std::string_view html, const ParseLimits &limits)
{
    std::string copy;
    return find_refs_once(html, limits, 0, copy);
}

namespace {

Result<Scan> find_refs_once(std::string_view html, const ParseLimits &limits, int mended, std::string &copy)
{
    if (html.size() >= 0xFFFFFFFFu) return Error::limit("HTML part too large for the tokenizer");
    const std::size_t cap = limits.max_bytes ? limits.max_bytes : memory_cap(html.size(), kDefaultHtmlMax);
    Guarded g(html, cap, &limits.out_of_time);
    Scan stopped;
    switch (g.status) {
    case HTML_GUARD_OK: break;
    case HTML_GUARD_NO_MEMORY:
        return Error{Code::TempFail, "out of memory parsing " + std::to_string(html.size()) + " bytes of HTML"};
    case HTML_GUARD_TIME:
        stopped.stop = Stop::Time;
        stopped.stop_message = "time limit reached parsing the HTML (--max-time); references not looked at";
        return stopped;
    case HTML_GUARD_MEMORY:
        stopped.stop = Stop::Memory;
        stopped.stop_message = "the HTML parser needed more than " + std::to_string(cap >> 20) + " MiB for " +
                               std::to_string(html.size()) + " bytes; references not looked at";
        return stopped;
    case HTML_GUARD_NESTING:
        stopped.stop = Stop::Nesting;
        stopped.stop_message = "HTML nested too deeply for the parser; references not looked at";
        return stopped;
    }
    if (!g.out) return Error{Code::Software, "the HTML tokenizer failed"};
    if (std::memchr(html.data(), '\0', html.size())) {
        // Parsed again with each such NUL a C0 control, which gumbo's input stream makes
        // U+FFFD: the same length (every offset holds), the same tokens, the browsers' names.
        auto at = nuls_to_mend(g.out->document, html);
        if (!at.empty() && mended + 1 >= kMaxMendRounds) {
            stopped.stop = Stop::Work;
            stopped.stop_message = "the HTML needs more than " + std::to_string(kMaxMendRounds) +
                                   " parses to name its NUL-started attributes as a browser does (html or body "
                                   "start tags repeating one); references not looked at";
            return stopped;
        }
        if (!at.empty()) {
            // One copy of the input, made at the first mending; later rounds mend it in place.
            if (mended == 0) copy.assign(html);
            for (std::size_t p : at) copy[p] = '\x01';
            html_guard_free(g.guard); // this tree is done with: one tree at a time
            g.guard = nullptr;
            return find_refs_once(copy, limits, mended + 1, copy);
        }
    }
    ScanBuilder builder(limits.max_refs);
    Walker w{&limits.out_of_time, html, builder};
    w.walk(g.out->document); // the guard frees the tree at once: no recursive gumbo_destroy_output
    if (w.stop == Stop::Time) {
        stopped.stop = Stop::Time;
        stopped.stop_message = "time limit reached walking the HTML (--max-time); references not looked at";
        return stopped;
    }
    Scan scan = builder.finish();
    return scan;
}

} // namespace

} // namespace mimeuri::html
