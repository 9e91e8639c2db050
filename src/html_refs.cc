#include "html_refs.hh"

#include <gumbo.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace mimeuri::html {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

bool iequal(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

// Attributes whose whole value is one URL.
bool url_attribute(std::string_view name)
{
    static const char *names[] = {"src", "href", "background", "poster", "data", "longdesc", "lowsrc", "action",
                                  "cite", "formaction", "icon", "manifest", "codebase", "usemap", "dynsrc"};
    for (const char *n : names)
        if (name == n) return true;
    return false;
}

// Trimmed span of s[begin, end).
std::pair<std::size_t, std::size_t> trim(std::string_view s, std::size_t begin, std::size_t end)
{
    while (begin < end && is_space(s[begin])) ++begin;
    while (end > begin && is_space(s[end - 1])) --end;
    return {begin, end};
}

int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
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

struct Walker {
    std::string_view html;
    std::size_t max_refs;
    Scan scan;
    std::set<std::size_t> seen; // value offsets already taken (gumbo clones elements)

    bool full() const { return scan.refs.size() >= max_refs; }

    void add_ref(std::size_t holder, std::size_t b, std::size_t e, std::string url, bool css, bool css_quoted,
                 bool padded = false)
    {
        if (full()) {
            scan.truncated = true;
            return;
        }
        scan.refs.push_back({holder, b, e, std::move(url), css, css_quoted, padded});
    }

    std::size_t add_holder(Holder h)
    {
        scan.holders.push_back(std::move(h));
        return scan.holders.size() - 1;
    }

    void css_refs(std::size_t holder)
    {
        for (auto &u : css_urls(scan.holders[holder].decoded)) {
            std::string url = u.url;
            std::size_t b = url.find_first_not_of(" \t\r\n\f"), e = url.find_last_not_of(" \t\r\n\f");
            bool padded = b != 0 || (e != std::string::npos && e + 1 != url.size());
            url = b == std::string::npos ? std::string() : url.substr(b, e - b + 1);
            if (!url.empty()) add_ref(holder, u.begin, u.end, url, true, u.quoted, padded);
        }
    }

    void attribute(const std::string &tag, const GumboAttribute *a)
    {
        std::string name = a->name;
        if (a->attr_namespace == GUMBO_ATTR_NAMESPACE_XLINK) name = "xlink:" + name;
        const bool style = name == "style", srcset = name == "srcset" || name == "imagesrcset";
        const bool url = url_attribute(name) || name == "xlink:href";
        if (!style && !srcset && !url) return;
        if (a->original_value.length == 0 || a->original_value.data == nullptr) return;
        std::size_t off = static_cast<std::size_t>(a->original_value.data - html.data());
        if (off > html.size() || !seen.insert(off).second) return;
        Holder h;
        const char *raw = a->original_value.data;
        std::size_t len = a->original_value.length;
        if (len >= 2 && (raw[0] == '"' || raw[0] == '\'') && raw[len - 1] == raw[0]) {
            h.quote = raw[0];
            h.raw_begin = off + 1;
            h.raw_end = off + len - 1;
        } else {
            h.raw_begin = off;
            h.raw_end = off + len;
        }
        h.decoded = a->value ? a->value : "";
        h.element = tag;
        h.attr = name;
        if (tag == "base" && name == "href") {
            auto [b, e] = trim(h.decoded, 0, h.decoded.size());
            if (!scan.base_href) scan.base_href = h.decoded.substr(b, e - b); // the first one counts
            return;
        }
        std::size_t hi = add_holder(std::move(h));
        const std::string &v = scan.holders[hi].decoded;
        if (style) {
            css_refs(hi);
        } else if (srcset) {
            // HTML 4.8.4.3.10: candidates separated by commas; a URL then descriptors.
            std::size_t i = 0;
            while (i < v.size()) {
                while (i < v.size() && (is_space(v[i]) || v[i] == ',')) ++i;
                std::size_t b = i;
                while (i < v.size() && !is_space(v[i])) ++i;
                std::size_t e = i;
                while (e > b && v[e - 1] == ',') --e; // "url," with no descriptor
                if (e > b) add_ref(hi, b, e, v.substr(b, e - b), false, false);
                // skip descriptors up to the next comma outside parentheses
                int depth = 0;
                while (i < v.size()) {
                    if (v[i] == '(') ++depth;
                    else if (v[i] == ')') --depth;
                    else if (v[i] == ',' && depth <= 0) break;
                    ++i;
                }
            }
        } else {
            // The whole value is the slot: a repair replaces the padding too.
            auto [b, e] = trim(v, 0, v.size());
            if (e > b) add_ref(hi, 0, v.size(), v.substr(b, e - b), false, false, b > 0 || e < v.size());
        }
    }

    void walk(const GumboNode *root)
    {
        // Iterative: hostile nesting must not grow the stack.
        std::vector<const GumboNode *> stack{root};
        while (!stack.empty()) {
            const GumboNode *n = stack.back();
            stack.pop_back();
            const GumboVector *children = nullptr;
            if (n->type == GUMBO_NODE_DOCUMENT) {
                children = &n->v.document.children;
            } else if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) {
                const GumboElement &el = n->v.element;
                std::string tag = el.tag == GUMBO_TAG_UNKNOWN ? std::string() : gumbo_normalized_tagname(el.tag);
                if (tag.empty() && el.original_tag.data) {
                    GumboStringPiece t = el.original_tag;
                    gumbo_tag_from_original_text(&t);
                    tag.assign(t.data, t.length);
                    for (char &c : tag) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                }
                for (unsigned i = 0; i < el.attributes.length; ++i)
                    attribute(tag, static_cast<const GumboAttribute *>(el.attributes.data[i]));
                if (el.tag == GUMBO_TAG_STYLE) {
                    for (unsigned i = 0; i < el.children.length; ++i) {
                        auto *c = static_cast<const GumboNode *>(el.children.data[i]);
                        if (c->type != GUMBO_NODE_TEXT && c->type != GUMBO_NODE_WHITESPACE) continue;
                        const GumboText &t = c->v.text;
                        if (!t.original_text.data) continue;
                        std::size_t off = static_cast<std::size_t>(t.original_text.data - html.data());
                        if (off > html.size() || !seen.insert(off).second) continue;
                        Holder h;
                        h.attribute = false;
                        h.raw_begin = off;
                        h.raw_end = off + t.original_text.length;
                        h.decoded.assign(t.original_text.data, t.original_text.length);
                        h.element = "style";
                        h.attr = "css";
                        css_refs(add_holder(std::move(h)));
                    }
                }
                children = &el.children;
            }
            if (!children) continue;
            for (unsigned i = children->length; i > 0; --i) stack.push_back(static_cast<const GumboNode *>(children->data[i - 1]));
            if (full()) {
                scan.truncated = true; // stopped looking at the limit
                break;
            }
        }
    }
};

} // namespace

std::vector<CssUrl> css_urls(std::string_view t)
{
    std::vector<CssUrl> out;
    std::size_t i = 0;
    auto read_string = [&](std::size_t &j, char q, std::string &value) -> std::size_t {
        // j is just past the opening quote; returns the index of the closing quote (or end)
        while (j < t.size() && t[j] != q) {
            if (t[j] == '\\') {
                j = css_escape(t, j + 1, value);
                continue;
            }
            if (t[j] == '\n') break; // a bad string
            value += t[j++];
        }
        return j;
    };
    // A quoted URL at j: recorded, and j moved past its closing quote.
    auto quoted_url = [&](std::size_t &j) {
        if (j >= t.size() || (t[j] != '"' && t[j] != '\'')) return false;
        char q = t[j];
        std::size_t b = ++j;
        std::string value;
        std::size_t e = read_string(j, q, value);
        out.push_back({b, e, value, true});
        j = e + 1;
        return true;
    };
    while (i < t.size()) {
        char c = t[i];
        if (c == '/' && i + 1 < t.size() && t[i + 1] == '*') {
            auto close = t.find("*/", i + 2);
            i = close == std::string_view::npos ? t.size() : close + 2;
            continue;
        }
        if (c == '"' || c == '\'') { // a string that is not a url(): skip it
            std::size_t j = i + 1;
            std::string ignored;
            j = read_string(j, c, ignored);
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
            (i == 0 || !(std::isalnum(static_cast<unsigned char>(t[i - 1])) || t[i - 1] == '-' || t[i - 1] == '_'))) {
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

Result<Scan> find_refs(std::string_view html, std::size_t max_refs)
{
    if (html.size() >= 0xFFFFFFFFu) return Error{Code::DataErr, "HTML part too large for the tokenizer"};
    GumboOptions options = kGumboDefaultOptions;
    options.max_errors = 0; // do not keep a list of every error in hostile input
    GumboOutput *out = gumbo_parse_with_options(&options, html.data(), html.size());
    if (!out) return Error{Code::Software, "the HTML tokenizer failed"};
    Walker w{html, max_refs, {}, {}};
    w.walk(out->document);
    gumbo_destroy_output(&options, out);
    // Document order, as the bytes come.
    std::vector<std::size_t> order(w.scan.refs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const Ref &ra = w.scan.refs[a], &rb = w.scan.refs[b];
        std::size_t ha = w.scan.holders[ra.holder].raw_begin, hb = w.scan.holders[rb.holder].raw_begin;
        return ha != hb ? ha < hb : ra.begin < rb.begin;
    });
    std::vector<Ref> sorted;
    sorted.reserve(order.size());
    for (std::size_t i : order) sorted.push_back(std::move(w.scan.refs[i]));
    w.scan.refs = std::move(sorted);
    return std::move(w.scan);
}

namespace {

std::string escape_attr(std::string_view v, char quote)
{
    std::string out;
    for (char c : v) {
        if (c == '&') out += "&amp;";
        else if (c == '"' && quote != '\'') out += "&quot;";
        else if (c == '\'' && quote == '\'') out += "&#39;";
        else out += c;
    }
    return out;
}

// The new URL as CSS: kept unquoted when it can be, else quoted with escapes.
std::string css_url_text(std::string_view url, bool was_quoted, char quote)
{
    bool special = std::any_of(url.begin(), url.end(), [](char c) {
        return is_space(c) || c == '"' || c == '\'' || c == '(' || c == ')' || c == '\\';
    });
    if (!was_quoted && !special) return std::string(url);
    if (!was_quoted) quote = '"';
    std::string out;
    for (char c : url) {
        if (c == '\n') out += "\\a ";
        else {
            if (c == quote || c == '\\') out += '\\';
            out += c;
        }
    }
    return was_quoted ? out : quote + out + quote;
}

} // namespace

std::string rewrite(std::string_view html, const Scan &scan, const std::vector<Replacement> &replacements)
{
    // Group replacements by holder.
    std::map<std::size_t, std::vector<const Replacement *>> by_holder;
    for (const auto &r : replacements) by_holder[scan.refs[r.ref].holder].push_back(&r);
    struct Splice {
        std::size_t begin, end;
        std::string text;
    };
    std::vector<Splice> splices;
    for (auto &[hi, reps] : by_holder) {
        const Holder &h = scan.holders[hi];
        std::sort(reps.begin(), reps.end(), [&](auto *a, auto *b) { return scan.refs[a->ref].begin < scan.refs[b->ref].begin; });
        std::string_view raw = html.substr(h.raw_begin, h.raw_end - h.raw_begin);
        // Where the value is written as it reads (no character references), each URL is
        // replaced in place; else the whole value is rewritten.
        bool direct = raw == h.decoded && (h.quote != 0 || !h.attribute);
        // Each replacement's text in the decoded value.
        std::vector<Splice> local;
        for (const Replacement *r : reps) {
            const Ref &ref = scan.refs[r->ref];
            std::string text;
            if (ref.css) {
                char q = '"';
                if (ref.css_quoted && ref.begin > 0) q = h.decoded[ref.begin - 1];
                text = css_url_text(r->url, ref.css_quoted, q);
            } else {
                text = r->url;
            }
            local.push_back({ref.begin, ref.end, std::move(text)});
        }
        if (direct) {
            for (auto &s : local) {
                std::string text = h.attribute ? escape_attr(s.text, h.quote) : s.text;
                if (!h.attribute && text.find("</") != std::string::npos) { // never close <style>
                    std::string safe;
                    for (std::size_t i = 0; i < text.size(); ++i) {
                        if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') safe += "\\3C ";
                        else safe += text[i];
                    }
                    text = safe;
                }
                splices.push_back({h.raw_begin + s.begin, h.raw_begin + s.end, std::move(text)});
            }
            continue;
        }
        std::string value;
        std::size_t pos = 0;
        for (auto &s : local) {
            value.append(h.decoded, pos, s.begin - pos);
            value += s.text;
            pos = s.end;
        }
        value.append(h.decoded, pos, std::string::npos);
        char q = h.quote ? h.quote : '"';
        std::string text = escape_attr(value, q);
        if (h.quote) splices.push_back({h.raw_begin, h.raw_end, text});
        else splices.push_back({h.raw_begin, h.raw_end, std::string(1, q) + text + q});
    }
    std::sort(splices.begin(), splices.end(), [](const Splice &a, const Splice &b) { return a.begin < b.begin; });
    std::string out;
    out.reserve(html.size());
    std::size_t pos = 0;
    for (const auto &s : splices) {
        if (s.begin < pos) continue; // overlapping: impossible by construction; never corrupt
        out.append(html.substr(pos, s.begin - pos));
        out += s.text;
        pos = s.end;
    }
    out.append(html.substr(pos));
    return out;
}

} // namespace mimeuri::html
