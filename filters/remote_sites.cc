// remote_sites: every place an HTML part makes a browser fetch, found on gumbo's tree (the
// HTML5 tree builder: what a browser builds, <noscript> read as markup, SVG and its
// integration points as the browser reads them), at byte offsets (gumbo's original spans),
// and the splices that make each inert or send it through the proxy.
//
// The fetch sites (issue 52): src (img, input type=image, source, video, audio, track,
// embed, iframe, frame, script, any other), srcset and imagesrcset, background, poster,
// lowsrc, dynsrc, object data, a remote <link> (stylesheet, icon, preload, prefetch...),
// <meta http-equiv=refresh>, a remote <base> (and the relative URLs it makes remote), SVG
// href and xlink:href (image, feImage, use, ...), FuncIRI in SVG's presentation attributes
// (fill, stroke, filter, mask, clip-path, marker-*, cursor), SMIL's values, from, to and by,
// ping, manifest, CSS (remote_css.cc) in style attributes and <style> text, and the document
// of an <iframe srcdoc>.
#include "remote.hh"

#include "html_detail.hh"
#include "html_sanitize.hh"
#include "text.hh"

#include <glib.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>

namespace mimeuri::remote {

namespace {

using html::detail::Guarded;

bool one_of(std::string_view s, std::initializer_list<std::string_view> list)
{
    return std::find(list.begin(), list.end(), s) != list.end();
}

std::vector<std::string> words(const std::string &v)
{
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < v.size()) {
        while (i < v.size() && html::detail::is_space(v[i])) ++i;
        const std::size_t b = i;
        while (i < v.size() && !html::detail::is_space(v[i])) ++i;
        if (i > b) out.push_back(v.substr(b, i - b));
    }
    return out;
}

// A dimension of at most one pixel ("1", "0", "1px", " 1 "): a web bug's.
bool tiny(std::string_view v)
{
    std::size_t i = 0;
    while (i < v.size() && html::detail::is_space(v[i])) ++i;
    std::size_t d = i;
    while (i < v.size() && g_ascii_isdigit(v[i])) ++i;
    if (i == d) return false;
    return std::stoul(std::string(v.substr(d, std::min<std::size_t>(i - d, 6)))) <= 1;
}

// What a style attribute says that hides or shrinks an element to a web bug. A heuristic:
// declarations split at ';' and ':' (what it misses is a tracker not named, never a fetch
// not found: finding fetches is the CSS tokenizer's).
struct Shape {
    bool hidden{false}, tiny_w{false}, tiny_h{false};
};
Shape style_shape(std::string_view style)
{
    Shape s;
    std::string t;
    for (char c : style)
        if (!html::detail::is_space(c)) t += static_cast<char>(g_ascii_tolower(c));
    std::size_t at = 0;
    while (at <= t.size()) {
        std::size_t semi = t.find(';', at);
        if (semi == std::string::npos) semi = t.size();
        const std::string decl = t.substr(at, semi - at);
        const std::size_t colon = decl.find(':');
        if (colon != std::string::npos) {
            const std::string p = decl.substr(0, colon), v = decl.substr(colon + 1);
            if ((p == "display" && v.rfind("none", 0) == 0) || (p == "visibility" && v.rfind("hidden", 0) == 0) ||
                (p == "opacity" && (v == "0" || v.rfind("0!", 0) == 0)))
                s.hidden = true;
            if ((p == "width" || p == "max-width") && tiny(v)) s.tiny_w = true;
            if ((p == "height" || p == "max-height") && tiny(v)) s.tiny_h = true;
        }
        at = semi + 1;
    }
    return s;
}

// <meta http-equiv=refresh content>: the URL, as HTML's "shared declarative refresh steps"
// read it ("5; url='x'", "0,x"); empty when there is none.
std::pair<std::size_t, std::size_t> refresh_url(std::string_view c)
{
    std::size_t i = 0;
    auto ws = [&] {
        while (i < c.size() && html::detail::is_space(c[i])) ++i;
    };
    ws();
    while (i < c.size() && (g_ascii_isdigit(c[i]) || c[i] == '.')) ++i;
    ws();
    if (i < c.size() && (c[i] == ';' || c[i] == ',')) ++i;
    ws();
    const std::size_t save = i;
    if (i + 3 <= c.size() && g_ascii_strncasecmp(c.data() + i, "url", 3) == 0) {
        i += 3;
        ws();
        if (i < c.size() && c[i] == '=') {
            ++i;
            ws();
        } else {
            i = save;
        }
    }
    std::size_t e = c.size();
    if (i < c.size() && (c[i] == '"' || c[i] == '\'')) {
        const char q = c[i++];
        const std::size_t close = c.find(q, i);
        if (close != std::string_view::npos) e = close;
    }
    return {i, e};
}

std::optional<std::size_t> offset_in(std::string_view html, const char *p, std::size_t len)
{
    const auto base = reinterpret_cast<std::uintptr_t>(html.data()), at = reinterpret_cast<std::uintptr_t>(p);
    if (!p || at < base || at - base > html.size() || len > html.size() - (at - base)) return std::nullopt;
    return static_cast<std::size_t>(at - base);
}

constexpr int kMaxSrcdocDepth = 3;

class Finder {
public:
    Finder(std::string_view html, Sites &out, int depth) : html_(html), s_(out), depth_(depth) {}

    void walk(const GumboNode *root);

private:
    struct El {
        const GumboElement *el;
        std::string tag;
        bool svg;
        bool hidden; // it or an ancestor hidden (a web bug's place)
    };
    const GumboAttribute *attr(const GumboElement &el, const char *name) const
    {
        return gumbo_get_attribute(&el.attributes, name);
    }
    std::string value(const GumboElement &el, const char *name) const
    {
        const GumboAttribute *a = attr(el, name);
        return a && a->value ? a->value : "";
    }
    // The attribute's holder; nullopt when its bytes are not in the text.
    std::optional<std::size_t> holder(const GumboAttribute *a)
    {
        auto off = offset_in(html_, a->original_value.data, a->original_value.length);
        if (!off || a->original_value.length == 0) return std::nullopt;
        Holder h;
        h.raw_begin = *off;
        h.raw_end = *off + a->original_value.length;
        h.decoded = a->value ? a->value : "";
        s_.holders.push_back(std::move(h));
        return s_.holders.size() - 1;
    }
    std::size_t drop_of(const GumboElement &el)
    {
        auto off = offset_in(html_, el.original_tag.data, el.original_tag.length);
        if (!off || el.original_tag.length == 0) return 0;
        s_.drops.emplace_back(*off, *off + el.original_tag.length);
        return s_.drops.size();
    }
    // A URL the page names: a site when it reaches the network (or, under a remote
    // <base>, when it is relative).
    bool add(Site site)
    {
        site.url = html::url_as_parsed(site.url);
        if (site.url.empty()) return false;
        if (network_url(site.url)) {
            site.host = host_of(site.url);
        } else if (!remote_base_.empty() && html::url_scheme(site.url).empty()) {
            site.host = remote_base_; // relative to a remote <base>
        } else {
            return false;
        }
        s_.sites.push_back(std::move(site));
        return true;
    }
    void css(const El &e, std::size_t hi, const std::string &where, Site::Kind image_kind);
    void url_attr(const El &e, const GumboAttribute *a, const std::string &where, Site::Kind kind, std::size_t drop = 0);
    void element(const El &e);
    void style_text(const El &e, const GumboElement &el);
    void smil(const El &e, const GumboAttribute *a, const std::string &where);
    void srcset(const std::string &tag, const GumboAttribute *a, const std::string &where);
    void link(const GumboElement &el, const GumboAttribute *a, const std::string &where);
    void refresh(const GumboElement &el, const GumboAttribute *a, const std::string &where);
    void srcdoc(const El &e, const GumboAttribute *a);

    std::string_view html_;
    Sites &s_;
    int depth_;
    std::string remote_base_; // the host of a remote <base href>
};

void Finder::css(const El &e, std::size_t hi, const std::string &where, Site::Kind image_kind)
{
    const std::string &text = s_.holders[hi].decoded;
    for (const CssFetch &f : css_fetches(text)) {
        Site site;
        site.holder = hi;
        site.where = where;
        site.url = f.url;
        site.css = true;
        site.kind = std::string_view(f.kind) == "import" ? Site::Kind::Style : image_kind;
        site.begin = f.begin;
        site.end = f.end;
        site.url_begin = f.url_begin;
        site.url_end = f.url_end;
        if (e.hidden && site.kind == Site::Kind::Image) site.tracker = "hidden";
        add(std::move(site));
    }
}

void Finder::url_attr(const El &e, const GumboAttribute *a, const std::string &where, Site::Kind kind, std::size_t drop)
{
    auto hi = holder(a);
    if (!hi) return;
    const std::string &v = s_.holders[*hi].decoded;
    Site site;
    site.holder = *hi;
    site.where = where;
    site.kind = kind;
    site.url = v;
    site.begin = site.url_begin = 0;
    site.end = site.url_end = v.size();
    site.element = drop;
    if (kind == Site::Kind::Image && e.hidden) site.tracker = "hidden";
    add(std::move(site));
}

void Finder::smil(const El &e, const GumboAttribute *a, const std::string &where)
{
    // values="a;b;c" (SMIL 3.0 / SVG animation): each value may be a URL (an animated href)
    // or a paint with url(); the attribute emptied stops the animation.
    auto hi = holder(a);
    if (!hi) return;
    const std::string v = s_.holders[*hi].decoded;
    std::size_t at = 0;
    while (at <= v.size()) {
        std::size_t semi = v.find(';', at);
        if (semi == std::string::npos) semi = v.size();
        Site site;
        site.holder = *hi;
        site.where = where;
        site.url = v.substr(at, semi - at);
        site.whole = true;
        site.end = v.size();
        add(std::move(site));
        at = semi + 1;
    }
    const std::size_t before = s_.sites.size();
    css(e, *hi, where, Site::Kind::Other);
    for (std::size_t k = before; k < s_.sites.size(); ++k) s_.sites[k].whole = true;
}

void Finder::srcdoc(const El &e, const GumboAttribute *a)
{
    (void)e;
    if (depth_ >= kMaxSrcdocDepth || !a->value || !*a->value) return;
    html::ParseLimits limits;
    Sites inner;
    Guarded g(a->value, html::memory_cap(std::strlen(a->value), html::kDefaultHtmlMax), nullptr);
    if (g.status != HTML_GUARD_OK || !g.out) return;
    Finder f(a->value, inner, depth_ + 1);
    f.walk(g.out->document);
    if (inner.sites.empty()) return;
    auto hi = holder(a);
    if (!hi) return;
    for (Site &in : inner.sites) {
        in.holder = *hi;
        in.where = "iframe@srcdoc>" + in.where;
        in.whole = true;
        in.begin = 0;
        in.end = s_.holders[*hi].decoded.size();
        in.element = 0;
        s_.sites.push_back(std::move(in));
    }
}

void Finder::style_text(const El &e, const GumboElement &el)
{
    // The style sheet is the element's child text content, every text child joined (in SVG
    // a comment or an element between two pieces splits them: "url(ht<!---->tp://x)", and
    // character references are decoded). In HTML it is one RAWTEXT run, read as its bytes.
    Holder h;
    h.attribute = false;
    h.escaped = e.svg;
    for (unsigned i = 0; i < el.children.length; ++i) {
        auto *c = static_cast<const GumboNode *>(el.children.data[i]);
        if (c->type != GUMBO_NODE_TEXT && c->type != GUMBO_NODE_WHITESPACE && c->type != GUMBO_NODE_CDATA) continue;
        const GumboText &t = c->v.text;
        auto off = offset_in(html_, t.original_text.data, t.original_text.length);
        if (!off) continue;
        h.pieces.emplace_back(*off, *off + t.original_text.length);
        if (e.svg) h.decoded += t.text ? t.text : "";
        else h.decoded.append(html_.substr(*off, t.original_text.length));
    }
    if (h.pieces.empty()) return;
    h.raw_begin = h.pieces.front().first;
    h.raw_end = h.pieces.back().second;
    s_.holders.push_back(std::move(h));
    css(e, s_.holders.size() - 1, "style@text", Site::Kind::Image);
}

void Finder::srcset(const std::string &tag, const GumboAttribute *a, const std::string &where)
{
    auto hi = holder(a);
    if (!hi) return;
    for (auto [b, en] : html::srcset_urls(s_.holders[*hi].decoded)) {
        Site site;
        site.holder = *hi;
        site.where = where;
        site.kind = tag == "link" ? Site::Kind::Other : Site::Kind::Image;
        site.url = s_.holders[*hi].decoded.substr(b, en - b);
        site.url_begin = b;
        site.url_end = en;
        site.whole = true;
        site.end = s_.holders[*hi].decoded.size();
        add(std::move(site));
    }
}

void Finder::link(const GumboElement &el, const GumboAttribute *a, const std::string &where)
{
    // The rel keywords that load (HTML 4.6.7; icon's spellings); alternate, canonical and
    // the like only name.
    bool loads = false, sheet = false;
    for (const std::string &w : words(text::ascii_lower(value(el, "rel")))) {
        sheet = sheet || w == "stylesheet";
        loads = loads || one_of(w, {"stylesheet", "icon", "preload", "prefetch", "modulepreload", "prerender",
                                    "dns-prefetch", "preconnect", "manifest", "import", "apple-touch-icon",
                                    "apple-touch-icon-precomposed", "mask-icon", "fluid-icon", "apple-touch-startup-image"});
    }
    if (loads) url_attr(El{&el, "link", false, false}, a, where, sheet ? Site::Kind::Style : Site::Kind::Other, drop_of(el));
}

void Finder::refresh(const GumboElement &el, const GumboAttribute *a, const std::string &where)
{
    auto hi = holder(a);
    if (!hi) return;
    auto [b, en] = refresh_url(s_.holders[*hi].decoded);
    Site site;
    site.holder = *hi;
    site.where = where;
    site.url = s_.holders[*hi].decoded.substr(b, en - b);
    site.url_begin = b;
    site.url_end = en;
    site.whole = true;
    site.end = s_.holders[*hi].decoded.size();
    site.element = drop_of(el);
    add(std::move(site));
}

void Finder::element(const El &e)
{
    const GumboElement &el = *e.el;
    const std::string &tag = e.tag;
    const bool image_el = tag == "img" || tag == "image" || tag == "feimage" ||
                          (tag == "input" && g_ascii_strcasecmp(value(el, "type").c_str(), "image") == 0);
    const bool tiny_box = image_el && tiny(value(el, "width")) && tiny(value(el, "height"));
    const Shape shape = style_shape(value(el, "style"));
    const bool bug = image_el && (tiny_box || (shape.tiny_w && shape.tiny_h) || shape.hidden || e.hidden ||
                                  attr(el, "hidden"));
    const std::size_t before = s_.sites.size();
    for (unsigned i = 0; i < el.attributes.length; ++i) {
        auto *a = static_cast<const GumboAttribute *>(el.attributes.data[i]);
        std::string name = a->name;
        if (a->attr_namespace == GUMBO_ATTR_NAMESPACE_XLINK) name = "xlink:" + name;
        const std::string where = tag + "@" + name;
        using K = Site::Kind;
        if (name == "style") {
            if (auto hi = holder(a)) css(e, *hi, "style", K::Image);
        } else if (name == "src" || name == "lowsrc" || name == "dynsrc") {
            if (tag == "input" && !image_el) continue;
            const bool img = image_el || (tag == "source" && el.tag == GUMBO_TAG_SOURCE);
            url_attr(e, a, where, img ? K::Image : K::Other);
        } else if (name == "srcset" || name == "imagesrcset") {
            srcset(tag, a, where);
        } else if (name == "background" || name == "poster") {
            url_attr(e, a, where, K::Image);
        } else if ((name == "data" && tag == "object") || name == "ping" || (name == "manifest" && tag == "html")) {
            url_attr(e, a, where, K::Other);
        } else if ((name == "href" || name == "xlink:href") && e.svg && tag != "a") {
            url_attr(e, a, where, tag == "image" || tag == "feimage" ? K::Image : K::Other);
        } else if (name == "href" && tag == "link") {
            link(el, a, where);
        } else if (e.svg && one_of(name, {"fill", "stroke", "filter", "mask", "clip-path", "marker", "marker-start",
                                          "marker-mid", "marker-end", "cursor"})) {
            if (auto hi = holder(a)) css(e, *hi, where, K::Other);
        } else if (e.svg && one_of(name, {"values", "from", "to", "by"}) &&
                   one_of(tag, {"animate", "set", "animatemotion", "animatetransform", "animatecolor"})) {
            smil(e, a, where);
        } else if (name == "content" && tag == "meta" &&
                   text::ascii_lower(value(el, "http-equiv")).find("refresh") != std::string::npos) {
            refresh(el, a, where);
        } else if (name == "srcdoc" && tag == "iframe") {
            srcdoc(e, a);
        }
    }
    // An <img>'s own URLs (not its style's): the tag a tracker found by URL goes with, as a
    // web bug's does (issue 52: trackers are removed in block and proxy alike).
    std::size_t img_tag = 0;
    if (tag == "img" && !e.svg)
        for (std::size_t k = before; k < s_.sites.size(); ++k)
            if (!s_.sites[k].css && s_.sites[k].where.find('>') == std::string::npos)
                s_.sites[k].img = img_tag ? img_tag : (img_tag = drop_of(el));
    if (bug)
        for (std::size_t k = before; k < s_.sites.size(); ++k)
            if (s_.sites[k].kind == Site::Kind::Image && !s_.sites[k].css && s_.sites[k].where.find('>') == std::string::npos) {
                s_.sites[k].tracker = e.hidden || shape.hidden || attr(el, "hidden") ? "hidden" : "shape";
                if (tag == "img" && !s_.sites[k].element) s_.sites[k].element = drop_of(el);
            }
    if (tag == "style") style_text(e, el);
}

void Finder::walk(const GumboNode *root)
{
    // A remote <base href> first: the relative URLs of the whole page resolve against it.
    struct Item {
        const GumboNode *n;
        bool hidden;
    };
    std::vector<Item> stack{{root, false}};
    std::vector<El> order;
    while (!stack.empty()) {
        const auto [n, hidden] = stack.back();
        stack.pop_back();
        const GumboVector *children = nullptr;
        bool hid = hidden;
        if (n->type == GUMBO_NODE_DOCUMENT) {
            children = &n->v.document.children;
        } else if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) {
            const GumboElement &el = n->v.element;
            std::string tag = el.tag == GUMBO_TAG_UNKNOWN ? std::string() : gumbo_normalized_tagname(el.tag);
            if (tag.empty() && el.original_tag.data) {
                GumboStringPiece t = el.original_tag;
                gumbo_tag_from_original_text(&t);
                tag = text::ascii_lower(std::string_view(t.data, t.length));
            }
            const GumboAttribute *style = gumbo_get_attribute(&el.attributes, "style");
            hid = hidden || gumbo_get_attribute(&el.attributes, "hidden") ||
                  (style && style->value && style_shape(style->value).hidden);
            order.push_back({&el, text::ascii_lower(tag), el.tag_namespace == GUMBO_NAMESPACE_SVG, hid});
            children = &el.children;
        }
        if (!children) continue;
        for (unsigned i = children->length; i > 0; --i) stack.push_back({static_cast<const GumboNode *>(children->data[i - 1]), hid});
    }
    for (const El &e : order)
        if (e.tag == "base") {
            const GumboAttribute *href = gumbo_get_attribute(&e.el->attributes, "href");
            if (!href || !href->value) continue;
            const std::string url = html::url_as_parsed(href->value);
            if (network_url(url)) {
                url_attr(e, href, "base@href", Site::Kind::Other, drop_of(*e.el));
                remote_base_ = host_of(url);
            }
            break; // the first <base href> is the one
        }
    for (const El &e : order)
        if (e.tag != "base") element(e);
}

} // namespace

namespace {

Result<Sites> parse_sites(std::string_view html, const html::ParseLimits &limits)
{
    if (html.size() >= 0xFFFFFFFFu) return Error::limit("HTML part too large for the tokenizer");
    Sites s;
    const std::size_t cap = limits.max_bytes ? limits.max_bytes : html::memory_cap(html.size(), html::kDefaultHtmlMax);
    Guarded g(html, cap, &limits.out_of_time);
    switch (g.status) {
    case HTML_GUARD_OK: break;
    case HTML_GUARD_NO_MEMORY: return Error{Code::TempFail, "out of memory parsing HTML"};
    case HTML_GUARD_TIME: s.stop = html::Stop::Time; break;
    case HTML_GUARD_MEMORY: s.stop = html::Stop::Memory; break;
    case HTML_GUARD_NESTING: s.stop = html::Stop::Nesting; break;
    }
    if (s.stop != html::Stop::None) {
        s.stop_message = "the HTML could not be parsed within its limits; remote content not looked at";
        return s;
    }
    if (!g.out) return Error{Code::Software, "the HTML parser failed"};
    Finder f(html, s, 0);
    f.walk(g.out->document);
    return s;
}

// Where "noscript" stands in html, any case.
std::vector<std::size_t> noscripts(std::string_view html)
{
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i + 8 <= html.size(); ++i)
        if ((html[i] | 0x20) == 'n' && g_ascii_strncasecmp(html.data() + i, "noscript", 8) == 0) at.push_back(i);
    return at;
}

// Where an end tag </p or </br starts (its name ended by white space, '/' or '>').
std::vector<std::size_t> p_br_ends(std::string_view html)
{
    std::vector<std::size_t> at;
    for (std::size_t i = html.find("</"); i != std::string_view::npos; i = html.find("</", i + 2)) {
        std::size_t n = 0;
        if (i + 3 < html.size() && (html[i + 2] | 0x20) == 'p') n = 1;
        else if (i + 4 < html.size() && (html[i + 2] | 0x20) == 'b' && (html[i + 3] | 0x20) == 'r') n = 2;
        if (!n) continue;
        const char c = html[i + 2 + n];
        if (c == '>' || c == '/' || html::detail::is_space(c)) at.push_back(i);
    }
    return at;
}

// The sites of s2 (a parse of a text with the same offsets) that s has not, added to s.
void merge(Sites &s, const Sites &s2)
{
    auto key = [](const Sites &x, const Site &site) {
        return std::make_tuple(x.holders[site.holder].raw_begin, site.begin, site.url_begin, site.where);
    };
    std::set<std::tuple<std::size_t, std::size_t, std::size_t, std::string>> seen;
    for (const Site &site : s.sites) seen.insert(key(s, site));
    for (Site site : s2.sites) {
        if (!seen.insert(key(s2, site)).second) continue;
        s.holders.push_back(s2.holders[site.holder]);
        site.holder = s.holders.size() - 1;
        for (std::size_t *d : {&site.element, &site.img}) {
            if (!*d) continue;
            s.drops.push_back(s2.drops[*d - 1]);
            *d = s.drops.size();
        }
        s.sites.push_back(std::move(site));
    }
}

} // namespace

Result<Sites> find_sites(std::string_view html, const html::ParseLimits &limits)
{
    auto r = parse_sites(html, limits);
    if (!r || r->stop != html::Stop::None) return r;
    Sites &s = *r;
    // Where gumbo 0.10 and today's browsers read the same bytes differently, each reading is
    // looked at: a parse of the text with the same offsets, its sites added.
    //  - </p> and </br> in SVG or MathML leave foreign content (HTML 13.2.6.5, since 2020;
    //    "<svg></p><style><a id='</style><img src=http://t/x>'>"); gumbo keeps them inside.
    //    "<p/" and "<br/" are start tags that leave it in gumbo too, and as long: each so spelled.
    //  - gumbo reads <noscript> with scripting off (its content markup); a reader with
    //    scripting on reads it as text up to </noscript>, and what follows as markup
    //    ('<noscript><p title="</noscript><img src=http://t/x>">'). "noframes" is RAWTEXT to
    //    gumbo and as long: each "noscript" so renamed.
    const auto ends = p_br_ends(html), nos = noscripts(html);
    std::vector<std::string> readings;
    std::string breakout;
    if (!ends.empty()) {
        breakout.assign(html);
        for (std::size_t i : ends) { // "</p" -> "<p/", "</br" -> "<br/"
            const bool br = (html[i + 2] | 0x20) == 'b';
            breakout[i + 1] = html[i + 2];
            if (br) breakout[i + 2] = html[i + 3];
            breakout[i + (br ? 3 : 2)] = '/';
        }
        readings.push_back(breakout);
    }
    if (!nos.empty()) {
        std::string scripting = ends.empty() ? std::string(html) : breakout;
        for (std::size_t i : nos) scripting.replace(i, 8, "noframes");
        readings.push_back(std::move(scripting));
    }
    for (const std::string &text : readings) {
        auto t = parse_sites(text, limits);
        if (!t) return t.error();
        if (t->stop != html::Stop::None) return t;
        merge(s, *t);
    }
    // Document order: the sites of each holder together, holders as the bytes come.
    std::stable_sort(s.sites.begin(), s.sites.end(), [&](const Site &a, const Site &b) {
        return s.holders[a.holder].raw_begin < s.holders[b.holder].raw_begin;
    });
    return r;
}

Sites css_sites(std::string_view css)
{
    Sites s;
    Holder h;
    h.attribute = false;
    h.raw_begin = 0;
    h.raw_end = css.size();
    h.decoded.assign(css);
    h.pieces.emplace_back(0, css.size());
    s.holders.push_back(std::move(h));
    for (const CssFetch &f : css_fetches(css)) {
        Site site;
        site.where = "css";
        site.url = html::url_as_parsed(f.url);
        if (!network_url(site.url)) continue;
        site.host = host_of(site.url);
        site.css = true;
        site.kind = std::string_view(f.kind) == "import" ? Site::Kind::Style : Site::Kind::Image;
        site.begin = f.begin;
        site.end = f.end;
        site.url_begin = f.url_begin;
        site.url_end = f.url_end;
        s.sites.push_back(std::move(site));
    }
    return s;
}

} // namespace mimeuri::remote
