// Pages made inert (html_sanitize.hh): gumbo's tree, written out again without what runs or
// fetches. Serialisation follows HTML 13.3 ("serializing HTML fragments").
#include "html_sanitize.hh"

#include "html_detail.hh"

#include <algorithm>
#include <cstring>
#include <vector>

namespace mimeuri::html {

namespace {

using detail::Guarded;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s)
{
    std::string out(s);
    for (char &c : out) c = lower(c);
    return out;
}

bool plain_name(std::string_view name)
{
    if (name.empty() || name.size() > 64) return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' ||
              c == '.' || c == '-'))
            return false;
    return true;
}

template <std::size_t N> bool one_of(std::string_view name, const char *const (&names)[N])
{
    for (const char *n : names)
        if (name == n) return true;
    return false;
}

// Elements taken out with everything in them.
const char *const kScriptTags[] = {"script", "noscript", "template", "math"};
// SVG: the HTML integration points (a namespace change inside the tree) and the animation
// elements (which can set an href to a javascript: URL), by lower-case name.
const char *const kSvgDropped[] = {"script", "foreignobject", "desc", "title", "animate", "set", "animatemotion",
                                   "animatetransform", "discard", "handler", "listener"};
const char *const kFrameTags[] = {"iframe", "frame", "frameset", "object", "embed", "applet", "portal", "param",
                                  "noembed", "noframes"};
const char *const kVoid[] = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
                             "source", "track", "wbr", "basefont", "bgsound", "frame", "keygen"};
// Attributes a page loads from when it opens.
const char *const kLoading[] = {"src", "srcset", "background", "poster", "lowsrc", "dynsrc"};
// Attributes whose URL a page navigates to or frames: no data: there.
const char *const kNavigating[] = {"href", "xlink:href", "action", "formaction"};

std::string attribute_name(const GumboAttribute *a)
{
    switch (a->attr_namespace) {
    case GUMBO_ATTR_NAMESPACE_XLINK: return std::string("xlink:") + a->name;
    case GUMBO_ATTR_NAMESPACE_XML: return std::string("xml:") + a->name;
    case GUMBO_ATTR_NAMESPACE_XMLNS:
        return std::strcmp(a->name, "xmlns") == 0 ? std::string("xmlns") : std::string("xmlns:") + a->name;
    default: return a->name;
    }
}

// The element's name as written out (HTML: lower case; SVG: its camelCase spelling).
std::string element_name(const GumboElement &e)
{
    std::string name;
    GumboStringPiece piece = e.original_tag;
    if (e.tag == GUMBO_TAG_UNKNOWN || e.tag_namespace == GUMBO_NAMESPACE_SVG) {
        if (piece.data && piece.length) {
            gumbo_tag_from_original_text(&piece);
            if (e.tag_namespace == GUMBO_NAMESPACE_SVG)
                if (const char *svg = gumbo_normalize_svg_tagname(&piece)) return svg;
            return lowered(std::string_view(piece.data, piece.length));
        }
    }
    return gumbo_normalized_tagname(e.tag);
}

void append_escaped(std::string &out, std::string_view text, bool attribute)
{
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"':
            if (attribute) out += "&quot;";
            else out += c;
            break;
        default: out += c;
        }
    }
}

bool srcset_remote(std::string_view v)
{
    // Candidates are split at commas followed by white space or at the URL's end; a URL with
    // a scheme anywhere in the value is remote enough to drop the whole list.
    for (std::size_t at = 0; at < v.size();) {
        while (at < v.size() && (detail::is_space(v[at]) || v[at] == ',')) ++at;
        std::size_t end = at;
        while (end < v.size() && !detail::is_space(v[end])) ++end;
        std::string_view url = v.substr(at, end - at);
        while (!url.empty() && url.back() == ',') url.remove_suffix(1);
        if (is_remote_url(url)) return true;
        at = v.find(',', end);
        if (at == std::string_view::npos) break;
    }
    return false;
}

// Whether raw text holds "</style" in any case: it would end the element (the parser made
// the element end there, so this is only a guard; the text is escaped then).
bool ends_raw_text(std::string_view text)
{
    for (std::size_t at = text.find("</"); at != std::string_view::npos; at = text.find("</", at + 2))
        if (lowered(text.substr(at + 2, 5)) == "style") return true;
    return false;
}

class Writer {
public:
    Writer(const SanitizeOptions &o, SanitizeCounts &c) : opts_(o), n_(c) {}

    std::string out;

    void write(const GumboNode *root)
    {
        struct Frame {
            const GumboNode *node;
            unsigned next;
            std::string close; // the end tag, written after the children ("" for none)
            bool raw;          // children written as raw text (<style>)
        };
        std::vector<Frame> stack;
        auto push = [&](const GumboNode *n) {
            if (n->type != GUMBO_NODE_ELEMENT && n->type != GUMBO_NODE_DOCUMENT) {
                text(n, !stack.empty() && stack.back().raw);
                return;
            }
            // A namespace a browser would not give the element where it stands (gumbo 0.10
            // predates some of the tree builder's rules): an HTML element inside SVG (the
            // integration points are dropped), an SVG element other than <svg> outside it.
            // Written out, it would be read in another namespace, where text is markup:
            // the "mutation XSS" readings. Dropped with its content.
            if (n->type == GUMBO_NODE_ELEMENT) {
                const GumboNode *up = n->parent;
                const bool in_svg = up && up->type == GUMBO_NODE_ELEMENT && up->v.element.tag_namespace == GUMBO_NAMESPACE_SVG;
                const GumboNamespaceEnum ns = n->v.element.tag_namespace;
                if ((ns == GUMBO_NAMESPACE_HTML && in_svg) ||
                    (ns == GUMBO_NAMESPACE_SVG && !in_svg && n->v.element.tag != GUMBO_TAG_SVG)) {
                    ++n_.scripts;
                    return;
                }
            }
            Frame f{n, 0, {}, false};
            if (n->type == GUMBO_NODE_ELEMENT && !open(n->v.element, f.close, f.raw)) return;
            stack.push_back(std::move(f));
        };
        push(root);
        while (!stack.empty()) {
            Frame &f = stack.back();
            const GumboVector &kids =
                f.node->type == GUMBO_NODE_DOCUMENT ? f.node->v.document.children : f.node->v.element.children;
            if (f.next < kids.length) {
                const auto *kid = static_cast<const GumboNode *>(kids.data[f.next++]);
                push(kid);
                continue;
            }
            out += f.close;
            stack.pop_back();
        }
    }

private:
    void text(const GumboNode *n, bool raw)
    {
        switch (n->type) {
        case GUMBO_NODE_TEXT:
        case GUMBO_NODE_WHITESPACE:
        case GUMBO_NODE_CDATA:
            if (raw && !ends_raw_text(n->v.text.text)) out += n->v.text.text;
            else append_escaped(out, n->v.text.text, false);
            break;
        case GUMBO_NODE_TEMPLATE: ++n_.scripts; break;
        default: break; // comments
        }
    }

    // Writes the start tag; false when the element is taken out with its content. close
    // gets the end tag ("" for a void element or one whose tag is not written).
    bool open(const GumboElement &e, std::string &close, bool &raw)
    {
        const std::string name = element_name(e);
        const std::string lname = lowered(name);
        const bool svg = e.tag_namespace == GUMBO_NAMESPACE_SVG;
        if (e.tag_namespace == GUMBO_NAMESPACE_MATHML || one_of(lname, kScriptTags) || (svg && one_of(lname, kSvgDropped))) {
            ++n_.scripts;
            return false;
        }
        if (!svg && one_of(lname, kFrameTags)) {
            ++n_.frames;
            return false;
        }
        if (!svg && (lname == "html" || lname == "head")) return true; // their content only
        if (!svg && lname == "title") return false;                     // the page has its own
        if (!svg && lname == "base") {
            ++n_.base;
            return false;
        }
        if (!svg && lname == "meta") {
            for (unsigned k = 0; k < e.attributes.length; ++k) {
                const auto *a = static_cast<const GumboAttribute *>(e.attributes.data[k]);
                if (lowered(a->name) == "http-equiv" && lowered(a->value).find("refresh") != std::string::npos) ++n_.refresh;
            }
            return false;
        }
        if (!svg && lname == "link" && !local_stylesheet(e)) return false;
        std::string tag = name;
        // <body> becomes a <div> where it has attributes (its colours), else its content only.
        if (!svg && lname == "body" && !e.attributes.length) return true;
        if (!svg && lname == "body") tag = "div";
        else if (!svg && lname == "form") tag = "div", ++n_.forms;
        else if (!svg && (lname == "xmp" || lname == "plaintext" || lname == "listing")) tag = "pre";
        if (!plain_name(tag)) return true; // the tag is not written, its content is
        out += '<';
        out += tag;
        attributes(e, lname, svg);
        out += '>';
        if (!svg && one_of(tag, kVoid)) return false;
        // 13.3: a leading newline of <pre>, <textarea> and <listing> is dropped by the parser.
        if (!svg && (tag == "pre" || tag == "textarea") && e.children.length) {
            const auto *first = static_cast<const GumboNode *>(e.children.data[0]);
            if ((first->type == GUMBO_NODE_TEXT || first->type == GUMBO_NODE_WHITESPACE) && first->v.text.text[0] == '\n')
                out += '\n';
        }
        raw = !svg && tag == "style";
        close = "</" + tag + ">";
        return true;
    }

    // <link rel=stylesheet> to a file of the archive: kept. Any other <link> (a prefetch, a
    // DNS prefetch, an import, a remote stylesheet) is not.
    bool local_stylesheet(const GumboElement &e)
    {
        const GumboAttribute *rel = gumbo_get_attribute(&e.attributes, "rel");
        const GumboAttribute *href = gumbo_get_attribute(&e.attributes, "href");
        if (!rel || !href || lowered(rel->value) != "stylesheet") return false;
        if (is_remote_url(href->value) && !opts_.allow_remote_images) {
            ++n_.remote;
            return false;
        }
        return true;
    }

    void attributes(const GumboElement &e, const std::string &lname, bool svg)
    {
        std::string remote_image;
        for (unsigned k = 0; k < e.attributes.length; ++k) {
            const auto *a = static_cast<const GumboAttribute *>(e.attributes.data[k]);
            const std::string name = attribute_name(a);
            const std::string lower_name = lowered(name);
            const std::string_view value = a->value;
            if (!plain_name(name)) continue;
            if (lower_name.size() >= 2 && lower_name[0] == 'o' && lower_name[1] == 'n') {
                ++n_.handlers;
                continue;
            }
            if (is_script_url(value)) {
                ++n_.urls;
                continue;
            }
            if (lower_name == "srcdoc") {
                ++n_.frames;
                continue;
            }
            if (lower_name == "action" || lower_name == "formaction") {
                ++n_.forms;
                continue;
            }
            // A browser fetches a file: image or stylesheet named with crossorigin in CORS mode
            // from a file: page, and checks integrity only on a CORS response: both refuse the
            // archive's own files. Neither matters to a page that loads nothing remote.
            if (lower_name == "crossorigin" || lower_name == "integrity") continue;
            if (lower_name == "ping") {
                ++n_.remote;
                continue;
            }
            const std::string scheme = url_scheme(value);
            if (scheme == "data" && (one_of(lower_name, kNavigating) || (lower_name == "src" && lname != "img" && lname != "source"))) {
                ++n_.urls;
                continue;
            }
            if (!opts_.allow_remote_images) {
                const bool loads = one_of(lower_name, kLoading) ||
                                   (svg && (lower_name == "href" || lower_name == "xlink:href") && lname != "a");
                if (loads && (lower_name == "srcset" ? srcset_remote(value) : is_remote_url(value))) {
                    ++n_.remote;
                    if (lname == "img" && lower_name == "src") remote_image = value;
                    continue;
                }
            }
            if (!remote_image.empty() && lower_name == "alt") continue;
            out += ' ';
            out += name;
            out += "=\"";
            append_escaped(out, value, true);
            out += '"';
        }
        if (!remote_image.empty()) {
            out += " alt=\"[remote image not loaded: ";
            append_escaped(out, remote_image, true);
            out += "]\" title=\"remote image not loaded\"";
        }
    }

    const SanitizeOptions &opts_;
    SanitizeCounts &n_;
};

} // namespace

std::string SanitizeCounts::describe() const
{
    std::string out;
    auto add = [&](const char *name, std::size_t n) {
        if (!n) return;
        if (!out.empty()) out += ' ';
        out += name;
        out += '=';
        out += std::to_string(n);
    };
    add("scripts", scripts);
    add("handlers", handlers);
    add("urls", urls);
    add("refresh", refresh);
    add("base", base);
    add("frames", frames);
    add("forms", forms);
    add("remote", remote);
    return out;
}

std::string url_scheme(std::string_view url)
{
    // WHATWG URL: strip leading and trailing C0 control or space; remove ASCII tab or newline.
    std::size_t b = 0, e = url.size();
    while (b < e && static_cast<unsigned char>(url[b]) <= 0x20) ++b;
    while (e > b && static_cast<unsigned char>(url[e - 1]) <= 0x20) --e;
    std::string scheme;
    for (std::size_t k = b; k < e; ++k) {
        const char c = url[k];
        if (c == '\t' || c == '\n' || c == '\r') continue;
        if (c == ':') return scheme;
        const bool first = scheme.empty();
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')))
            scheme += lower(c);
        else
            return {};
        if (scheme.size() > 32) return {};
    }
    return {};
}

bool is_script_url(std::string_view url)
{
    const std::string s = url_scheme(url);
    return s == "javascript" || s == "vbscript" || s == "livescript";
}

bool is_remote_url(std::string_view url)
{
    const std::string s = url_scheme(url);
    if (!s.empty()) return s != "data" && s != "cid" && s != "mid";
    // A scheme-relative URL ("//host/x") leaves too.
    std::size_t b = 0;
    while (b < url.size() && static_cast<unsigned char>(url[b]) <= 0x20) ++b;
    std::string slashes;
    for (std::size_t k = b; k < url.size() && slashes.size() < 2; ++k) {
        if (url[k] == '\t' || url[k] == '\n' || url[k] == '\r') continue;
        if (url[k] != '/' && url[k] != '\\') break;
        slashes += url[k];
    }
    return slashes.size() == 2;
}

std::string escape_text(std::string_view text)
{
    std::string out;
    out.reserve(text.size() + text.size() / 16);
    append_escaped(out, text, true);
    return out;
}

Result<Sanitized> sanitize(std::string_view utf8, const SanitizeOptions &opts)
{
    Sanitized s;
    const std::size_t cap = opts.limits.max_bytes ? opts.limits.max_bytes : memory_cap(utf8.size(), kDefaultHtmlMax);
    Guarded g(utf8, cap, &opts.limits.out_of_time);
    switch (g.status) {
    case HTML_GUARD_OK: break;
    case HTML_GUARD_NO_MEMORY: return Error{Code::TempFail, "out of memory parsing HTML to sanitise"};
    default:
        s.stop = g.status == HTML_GUARD_TIME ? Stop::Time : g.status == HTML_GUARD_NESTING ? Stop::Nesting : Stop::Memory;
        s.html = "<pre>" + escape_text(utf8) + "</pre>";
        return s;
    }
    if (!g.out) return Error{Code::TempFail, "out of memory parsing HTML to sanitise"};
    Writer w(opts, s.removed);
    w.out.reserve(utf8.size() + utf8.size() / 8);
    w.write(g.out->document);
    s.html = std::move(w.out);
    return s;
}

} // namespace mimeuri::html
