// html_rewrite: references rewritten in an HTML part, and attribute values decoded as gumbo
// decodes them.
//
// SYNOPSIS  rewrite(html, scan, replacements, ...): the part with each replaced reference's
//           raw bytes changed and every other byte kept; decode_attribute(raw, quote) and
//           segments(raw, quote, decoded): an attribute value's decoded text and where each
//           piece of it stands in the raw bytes.
// The scan that finds the references is src/html/html_refs.cc (gumbo) or src/html/html_tokenizer.cc.
#include "html_refs.hh"

#include "html_detail.hh"

#include <glib.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace mimeuri::html {

using detail::Guarded;
using detail::hexval;
using detail::is_space;

namespace {

// An attribute value's text: '&' and the quote escaped, and line ends too, so that no raw
// line break ever comes from a URL.
std::string escape_attr(std::string_view v, char quote)
{
    std::string out;
    out.reserve(v.size());
    // Runs between the octets to escape copied whole; each octet to escape found by memchr
    // (a data: URL has none).
    const char special[4] = {'&', quote == '\'' ? '\'' : '"', '\n', '\r'};
    std::size_t next[4];
    auto find = [&](int k, std::size_t from) {
        const void *hit = from < v.size() ? std::memchr(v.data() + from, special[k], v.size() - from) : nullptr;
        next[k] = hit ? static_cast<std::size_t>(static_cast<const char *>(hit) - v.data()) : v.size();
    };
    for (int k = 0; k < 4; ++k) find(k, 0);
    for (std::size_t at = 0; at < v.size();) {
        const int k = static_cast<int>(std::min_element(next, next + 4) - next);
        const std::size_t e = next[k];
        out.append(v.substr(at, e - at));
        if (e == v.size()) break;
        switch (v[e]) {
        case '&': out += "&amp;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\n': out += "&#10;"; break;
        default: out += "&#13;"; break;
        }
        at = e + 1;
        find(k, at);
    }
    return out;
}

// The new URL as CSS: kept unquoted when it can be and is not asked quoted (with `quote`),
// else quoted with escapes.
std::string css_url_text(std::string_view url, bool was_quoted, char quote, bool ask_quoted = false)
{
    bool special = std::any_of(url.begin(), url.end(), [](char c) {
        return is_space(c) || c == '"' || c == '\'' || c == '(' || c == ')' || c == '\\';
    });
    if (!was_quoted && !special && !ask_quoted) return std::string(url);
    if (!was_quoted && !ask_quoted) quote = '"';
    std::string out;
    for (char c : url) {
        if (c == '\n') out += "\\a ";
        else if (c == '\r') out += "\\d ";
        else {
            if (c == quote || c == '\\') out += '\\';
            out += c;
        }
    }
    return was_quoted ? out : quote + out + quote;
}

// Each piece decoded as gumbo decodes an attribute value written with `quote` (0:
// unquoted), all in one parse of "<p a0=..a1=..>"; nullopt if any is missing.
std::optional<std::vector<std::string>> decode_pieces(const std::vector<std::string_view> &pieces, char quote)
{
    std::string frag = "<p";
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        frag += " a" + std::to_string(i) + "=";
        if (quote) frag += quote;
        frag.append(pieces[i]);
        if (quote) frag += quote;
    }
    frag += ">";
    Guarded g(frag, memory_cap(frag.size(), kDefaultHtmlMax), nullptr);
    if (g.status != HTML_GUARD_OK || !g.out) return std::nullopt;
    std::vector<std::string> out(pieces.size());
    std::vector<bool> seen(pieces.size());
    std::vector<const GumboNode *> stack{g.out->document};
    while (!stack.empty()) { // document > html > body > p
        const GumboNode *n = stack.back();
        stack.pop_back();
        const GumboVector &children = n->type == GUMBO_NODE_DOCUMENT ? n->v.document.children : n->v.element.children;
        if (n->type == GUMBO_NODE_ELEMENT && n->v.element.tag == GUMBO_TAG_P) {
            const GumboVector &attrs = n->v.element.attributes;
            for (unsigned i = 0; i < attrs.length; ++i) {
                auto *a = static_cast<const GumboAttribute *>(attrs.data[i]);
                if (a->name[0] != 'a') continue;
                char *end = nullptr;
                unsigned long k = std::strtoul(a->name + 1, &end, 10);
                if (*end || k >= pieces.size()) continue;
                out[k] = a->value;
                seen[k] = true;
            }
            break;
        }
        if (n->type != GUMBO_NODE_DOCUMENT && n->type != GUMBO_NODE_ELEMENT) continue;
        for (unsigned i = children.length; i > 0; --i) stack.push_back(static_cast<const GumboNode *>(children.data[i - 1]));
    }
    for (std::size_t i = 0; i < pieces.size(); ++i)
        if (!seen[i] && !pieces[i].empty()) return std::nullopt;
    return out;
}

// The raw extent of the character reference at the start of run (run[0] == '&'): numeric
// "&#" digits [";"], or named "&" alphanumerics [";"]; 1 when no reference can start here.
std::size_t ref_extent(std::string_view run)
{
    std::size_t j = 1;
    if (j < run.size() && run[j] == '#') {
        ++j;
        bool hex = j < run.size() && (run[j] == 'x' || run[j] == 'X');
        if (hex) ++j;
        std::size_t d = j;
        while (j < run.size() && (hex ? hexval(run[j]) >= 0 : g_ascii_isdigit(run[j]))) ++j;
        if (j == d) return 1;
    } else {
        while (j < run.size() && g_ascii_isalnum(run[j])) ++j;
        if (j == 1) return 1;
    }
    if (j < run.size() && run[j] == ';') ++j;
    return j;
}

} // namespace

std::optional<std::string> decode_attribute(std::string_view raw, char quote)
{
    auto d = decode_pieces({raw}, quote);
    if (!d) return std::nullopt;
    return std::move(d->front());
}

std::vector<ValuePiece> segments(std::string_view raw, char quote, std::string_view decoded)
{
    // Runs: literal bytes up to a '&' or CR, and '&' up to the next. A '&' run is offered to
    // gumbo whole and as (reference, rest); the split is kept when the two decode, end to
    // end, as the whole run does.
    struct Run {
        std::size_t begin, end, split; // split: the reference's raw end, 0 when none
        std::size_t piece;             // index of the whole run in pieces
    };
    std::vector<Run> runs;
    std::vector<std::string_view> pieces;
    for (std::size_t i = 0; i < raw.size();) {
        // A line end (CR LF or CR, read as LF) is a run of its own, so that the literal
        // bytes around it still decode to themselves.
        std::size_t next = raw[i] == '\r' ? i + 1 + (i + 1 < raw.size() && raw[i + 1] == '\n')
                                          : raw.find_first_of("&\r", i + 1);
        if (next == std::string_view::npos) next = raw.size();
        Run r{i, next, 0, pieces.size()};
        pieces.push_back(raw.substr(i, next - i));
        if (raw[i] == '&') {
            std::size_t k = ref_extent(pieces.back());
            if (k < next - i) {
                r.split = i + k;
                pieces.push_back(raw.substr(i, k));
                pieces.push_back(raw.substr(i + k, next - i - k));
            }
        }
        runs.push_back(r);
        i = next;
    }
    auto dec = decode_pieces(pieces, quote);
    if (!dec) return {};
    std::vector<ValuePiece> segs;
    std::size_t pos = 0;
    auto add = [&](std::size_t rb, std::size_t re, const std::string &d) {
        if (decoded.substr(pos, d.size()) != d) return false;
        segs.push_back({rb, re, pos, pos + d.size(), d == raw.substr(rb, re - rb)});
        pos += d.size();
        return true;
    };
    for (const Run &r : runs) {
        const std::string &whole = (*dec)[r.piece];
        bool ok;
        if (r.split && (*dec)[r.piece + 1] + (*dec)[r.piece + 2] == whole)
            ok = add(r.begin, r.split, (*dec)[r.piece + 1]) && add(r.split, r.end, (*dec)[r.piece + 2]);
        else
            ok = add(r.begin, r.end, whole);
        if (!ok) return {};
    }
    if (pos != decoded.size()) return {};
    return segs;
}

std::optional<std::size_t> raw_offset(const std::vector<ValuePiece> &segs, std::size_t x)
{
    auto it = std::lower_bound(segs.begin(), segs.end(), x, [](const ValuePiece &s, std::size_t v) { return s.end < v; });
    if (it == segs.end()) return std::nullopt;
    if (x == it->begin) return it->raw_begin;
    if (x == it->end) return it->raw_end;
    if (it->identity) return it->raw_begin + (x - it->begin);
    return std::nullopt;
}

namespace {

bool needs_quotes(std::string_view v)
{
    return v.empty() || std::any_of(v.begin(), v.end(), [](char c) {
        return is_space(c) || c == '"' || c == '\'' || c == '=' || c == '<' || c == '>' || c == '`';
    });
}

// <style> text: a new URL never closes the element.
std::string style_safe(std::string text)
{
    std::string safe;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') safe += "\\3C ";
        else safe += text[i];
    }
    return safe;
}

// Whether a new URL text reads the same inside a srcdoc document, where it stands in an
// attribute (within its quotes: no '&', no such quote; unquoted: nothing that ends the value)
// or in <style> text (nothing that ends the element). The srcdoc attribute's own escaping is
// added after, as for any attribute.
bool inner_safe(const Inner &in, std::string_view text)
{
    if (!in.verbatim) return false;
    if (!in.attribute) return text.find("</") == std::string_view::npos;
    return std::none_of(text.begin(), text.end(), [&](char c) {
        return c == '&' || c == in.quote || (!in.quote && (is_space(c) || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' || c == '='));
    });
}

// The new URL's text in its context, before attribute escaping: in CSS, quoted as it was or
// as asked, with the quote its attribute (or, inside srcdoc, its inner attribute) leaves alone.
std::string url_text_of(const Scan &scan, const Holder &h, const Replacement &rep)
{
    const Ref &ref = scan.refs[rep.ref];
    if (!ref.css) return rep.url;
    const Inner *in = ref.inner >= 0 ? &scan.inner[static_cast<std::size_t>(ref.inner)] : nullptr;
    char q = '"';
    bool ask = rep.css_quote;
    if (ref.css_quoted && ref.begin > 0) q = h.decoded[ref.begin - 1];
    else if (in && in->attribute) {
        q = in->quote == '\'' ? '"' : '\''; // the quote its inner attribute leaves alone
        ask = ask && in->quote;              // none in an unquoted one
    } else if (h.attribute && h.quote != '\'') q = '\''; // in a "-quoted (or unquoted, then "-quoted) value
    return css_url_text(rep.url, ref.css_quoted, q, ask);
}

// The splice of one holder's replacements (reps, sorted here), or the replacements skipped.
void rewrite_holder(std::string_view html, const Scan &scan, const std::vector<Replacement> &replacements,
                    std::size_t hi, std::vector<std::size_t> &reps, Rewritten &res, std::vector<Splice> &splices)
{
    const Holder &h = scan.holders[hi];
    std::sort(reps.begin(), reps.end(), [&](std::size_t a, std::size_t b) {
        return scan.refs[replacements[a].ref].begin < scan.refs[replacements[b].ref].begin;
    });
    std::string_view raw = html.substr(h.raw_begin, h.raw_end - h.raw_begin);
    auto skip_all = [&] { res.skipped.insert(res.skipped.end(), reps.begin(), reps.end()); };
    auto url_text = [&](std::size_t r) { return url_text_of(scan, h, replacements[r]); };
    // In a srcdoc document, a URL whose new text would read otherwise there stays.
    std::erase_if(reps, [&](std::size_t r) {
        const int k = scan.refs[replacements[r].ref].inner;
        if (k < 0 || inner_safe(scan.inner[static_cast<std::size_t>(k)], url_text(r))) return false;
        res.skipped.push_back(r);
        return true;
    });
    if (reps.empty()) return;
    if (!h.attribute) { // <style> text: raw text, the decoded value is the raw value
        for (std::size_t r : reps) {
            const Ref &ref = scan.refs[replacements[r].ref];
            splices.push_back({h.raw_begin + ref.begin, h.raw_begin + ref.end, style_safe(url_text(r))});
        }
        return;
    }
    std::vector<ValuePiece> segs;
    if (raw == h.decoded) segs.push_back({0, raw.size(), 0, raw.size(), true});
    else segs = segments(raw, h.quote, h.decoded);
    if (segs.empty()) {
        skip_all();
        return;
    }
    char q = h.quote, wrap = 0;
    if (!q) {
        // A rewritten unquoted value gets quotes around its raw bytes, where it reads the
        // same quoted; else it stays unquoted if its new URLs need no quotes.
        wrap = raw.find('"') == std::string_view::npos ? '"' : raw.find('\'') == std::string_view::npos ? '\'' : 0;
        if (wrap && segments(raw, wrap, h.decoded).empty()) wrap = 0;
        q = wrap;
        if (!wrap && std::any_of(reps.begin(), reps.end(), [&](std::size_t r) { return needs_quotes(escape_attr(url_text(r), 0)); })) {
            skip_all();
            return;
        }
    }
    std::string value;
    std::size_t pos = 0;
    bool any = false;
    for (std::size_t r : reps) {
        const Ref &ref = scan.refs[replacements[r].ref];
        auto b = raw_offset(segs, ref.begin), e = raw_offset(segs, ref.end);
        if (!b || !e || *b < pos || *e < *b) {
            res.skipped.push_back(r);
            continue;
        }
        value.append(raw.substr(pos, *b - pos));
        value += escape_attr(url_text(r), q);
        pos = *e;
        any = true;
    }
    if (!any) return;
    value.append(raw.substr(pos));
    if (wrap) value = wrap + value + wrap;
    splices.push_back({h.raw_begin, h.raw_end, std::move(value)});
}

} // namespace

Rewritten rewrite(std::string_view html, const Scan &scan, const std::vector<Replacement> &replacements,
                  const std::vector<Splice> &extra)
{
    Rewritten res;
    std::map<std::size_t, std::vector<std::size_t>> by_holder; // holder -> replacement indexes
    for (std::size_t i = 0; i < replacements.size(); ++i) by_holder[scan.refs[replacements[i].ref].holder].push_back(i);
    std::vector<Splice> splices(extra);
    for (auto &entry : by_holder) rewrite_holder(html, scan, replacements, entry.first, entry.second, res, splices);
    std::sort(splices.begin(), splices.end(), [](const Splice &a, const Splice &b) { return a.begin < b.begin; });
    std::sort(res.skipped.begin(), res.skipped.end());
    res.html.reserve(html.size());
    std::size_t pos = 0;
    for (const auto &s : splices) {
        if (s.begin < pos) continue; // overlapping: impossible by construction; never corrupt
        res.html.append(html.substr(pos, s.begin - pos));
        res.html += s.text;
        pos = s.end;
    }
    res.html.append(html.substr(pos));
    return res;
}

} // namespace mimeuri::html
