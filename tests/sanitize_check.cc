// The sanitiser's oracle (sanitize_check.hh): a walk of gumbo's tree.
#include "sanitize_check.hh"

#include "html_sanitize.hh"

#include <gumbo.h>

#include <cstring>
#include <vector>

namespace testing {

namespace {

std::string lowered(std::string s)
{
    for (char &c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
}

bool in(const std::string &s, std::initializer_list<const char *> names)
{
    for (const char *n : names)
        if (s == n) return true;
    return false;
}

std::string element_name(const GumboElement &e)
{
    if (e.tag != GUMBO_TAG_UNKNOWN) return gumbo_normalized_tagname(e.tag);
    GumboStringPiece piece = e.original_tag;
    gumbo_tag_from_original_text(&piece);
    return lowered(std::string(piece.data ? piece.data : "", piece.data ? piece.length : 0));
}

std::string attribute_problem(const std::string &tag, bool svg, const GumboAttribute &a, bool remote_ok)
{
    std::string name = lowered(a.name);
    if (a.attr_namespace == GUMBO_ATTR_NAMESPACE_XLINK) name = "xlink:" + name;
    const std::string value = a.value;
    if (name.size() >= 2 && name.compare(0, 2, "on") == 0) return "a handler " + name;
    if (mimeuri::html::is_script_url(value)) return "a script URL in " + name;
    if (in(name, {"srcdoc", "action", "formaction", "ping"})) return "an attribute " + name;
    const bool data = mimeuri::html::url_scheme(value) == "data";
    if (data && (in(name, {"href", "xlink:href"}) || (name == "src" && tag != "img" && tag != "source")))
        return "a data: URL in " + name;
    if (remote_ok) return {};
    const bool loads = in(name, {"src", "background", "poster", "lowsrc", "dynsrc"}) ||
                       (svg && in(name, {"href", "xlink:href"}) && tag != "a");
    if (loads && mimeuri::html::is_remote_url(value)) return "a remote URL in " + name;
    if (name == "srcset") {
        // HTML 4.8.4.3.10 (srcset): each candidate is a URL up to white space, then its
        // descriptors up to a ','; a URL's trailing commas are not part of it.
        for (std::size_t at = 0; at < value.size();) {
            while (at < value.size() && (std::strchr(" \t\n\r\f,", value[at]) && value[at])) ++at;
            std::size_t end = at;
            while (end < value.size() && !(std::strchr(" \t\n\r\f", value[end]) && value[end])) ++end;
            std::string url = value.substr(at, end - at);
            while (!url.empty() && url.back() == ',') url.pop_back();
            if (mimeuri::html::is_remote_url(url)) return "a remote URL in srcset";
            if (!value.empty() && end > at && value[end - 1] == ',') { at = end; continue; }
            at = value.find(',', end);
        }
    }
    return {};
}

std::string element_problem(const GumboElement &e, bool remote_ok)
{
    const std::string tag = element_name(e);
    const bool svg = e.tag_namespace == GUMBO_NAMESPACE_SVG;
    if (e.tag_namespace == GUMBO_NAMESPACE_MATHML) return "a MathML element " + tag;
    if (tag == "script") return "a script element";
    if (in(tag, {"iframe", "frame", "frameset", "object", "embed", "applet", "portal", "base", "form", "meta"}) && !svg)
        return "an element " + tag;
    if (svg && in(tag, {"foreignobject", "animate", "set", "animatemotion", "animatetransform", "handler", "listener"}))
        return "an SVG element " + tag;
    if (tag == "link" && !svg) {
        const GumboAttribute *rel = gumbo_get_attribute(&e.attributes, "rel");
        const GumboAttribute *href = gumbo_get_attribute(&e.attributes, "href");
        if (!rel || lowered(rel->value) != "stylesheet") return "a link other than a stylesheet";
        if (href && !remote_ok && mimeuri::html::is_remote_url(href->value)) return "a remote stylesheet";
        if (href && mimeuri::html::is_script_url(href->value)) return "a script URL in a link";
    }
    for (unsigned k = 0; k < e.attributes.length; ++k)
        if (std::string p = attribute_problem(tag, svg, *static_cast<const GumboAttribute *>(e.attributes.data[k]), remote_ok);
            !p.empty())
            return p + " of " + tag;
    return {};
}

} // namespace

std::string active_content(std::string_view html, bool allow_remote_images)
{
    GumboOutput *out = gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size());
    std::string found;
    std::vector<const GumboNode *> todo{out->document};
    while (!todo.empty() && found.empty()) {
        const GumboNode *n = todo.back();
        todo.pop_back();
        const GumboVector *kids = nullptr;
        if (n->type == GUMBO_NODE_DOCUMENT) kids = &n->v.document.children;
        else if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) {
            if (n->type == GUMBO_NODE_TEMPLATE) found = "a template";
            else found = element_problem(n->v.element, allow_remote_images);
            kids = &n->v.element.children;
        }
        if (kids)
            for (unsigned k = 0; k < kids->length; ++k) todo.push_back(static_cast<const GumboNode *>(kids->data[k]));
    }
    gumbo_destroy_output(&kGumboDefaultOptions, out);
    return found;
}

} // namespace testing
