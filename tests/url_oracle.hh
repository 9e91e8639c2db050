// A second reading of the cid: and mid: URLs an HTML text's attributes hold, made without
// the scanner (src/html/html_refs.cc): gumbo's tree for the attribute values (the HTML tokenizer a
// browser runs), then the URL Standard's own preprocessing written out here (basic URL
// parser: leading and trailing C0 controls and spaces stripped, every ASCII tab and newline
// removed; the scheme compared without regard to case), and HTML's srcset parsing (4.8.4.3.10:
// candidates split at ASCII white space and commas). tests/test_html_refs.cc and
// tests/test_corpus_urls.cc compare what the scanner reports with it.
#pragma once

#include <gumbo.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace testing {

// URL Standard, basic URL parser, its first two steps.
inline std::string whatwg_url_input(std::string_view v)
{
    std::size_t b = 0, e = v.size();
    while (b < e && static_cast<unsigned char>(v[b]) <= 0x20) ++b;
    while (e > b && static_cast<unsigned char>(v[e - 1]) <= 0x20) --e;
    std::string out;
    for (char c : v.substr(b, e - b))
        if (c != '\t' && c != '\n' && c != '\r') out += c;
    return out;
}

inline bool cid_or_mid(std::string_view url)
{
    if (url.size() < 4) return false;
    std::string s(url.substr(0, 4));
    for (char &c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return s == "cid:" || s == "mid:";
}

// (attribute, URL) for every cid: or mid: URL in an attribute that holds URLs, in no order.
inline std::vector<std::pair<std::string, std::string>> oracle_urls(std::string_view html)
{
    static const char *url_attrs[] = {"src",  "href",       "background", "poster",   "data",     "longdesc",
                                      "lowsrc", "action",   "cite",       "formaction", "icon",   "manifest",
                                      "codebase", "usemap", "dynsrc"};
    std::vector<std::pair<std::string, std::string>> out;
    GumboOutput *g = gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size());
    std::vector<const GumboNode *> stack{g->document};
    while (!stack.empty()) {
        const GumboNode *n = stack.back();
        stack.pop_back();
        const GumboVector *children = nullptr;
        if (n->type == GUMBO_NODE_DOCUMENT) children = &n->v.document.children;
        if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) {
            children = &n->v.element.children;
            const GumboVector &attrs = n->v.element.attributes;
            for (unsigned i = 0; i < attrs.length; ++i) {
                auto *a = static_cast<const GumboAttribute *>(attrs.data[i]);
                std::string name = a->name;
                if (a->attr_namespace == GUMBO_ATTR_NAMESPACE_XLINK) name = "xlink:" + name;
                const std::string value = a->value ? a->value : "";
                if (n->v.element.tag == GUMBO_TAG_BASE && name == "href") continue;
                const bool url = name == "xlink:href" ||
                                 std::any_of(std::begin(url_attrs), std::end(url_attrs), [&](const char *u) { return name == u; });
                if (url) {
                    std::string u = whatwg_url_input(value);
                    if (cid_or_mid(u)) out.emplace_back(name, u);
                } else if (name == "srcset" || name == "imagesrcset") {
                    auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; };
                    std::size_t k = 0;
                    while (k < value.size()) {
                        while (k < value.size() && (ws(value[k]) || value[k] == ',')) ++k;
                        std::size_t b = k;
                        while (k < value.size() && !ws(value[k])) ++k;
                        std::size_t e = k;
                        while (e > b && value[e - 1] == ',') --e;
                        std::string u = whatwg_url_input(std::string_view(value).substr(b, e - b));
                        if (cid_or_mid(u)) out.emplace_back(name, u);
                        int depth = 0; // descriptors, to the next comma outside parentheses
                        for (; k < value.size(); ++k) {
                            if (value[k] == '(') ++depth;
                            else if (value[k] == ')') --depth;
                            else if (value[k] == ',' && depth <= 0) break;
                        }
                    }
                }
            }
        }
        if (children)
            for (unsigned i = children->length; i > 0; --i) stack.push_back(static_cast<const GumboNode *>(children->data[i - 1]));
    }
    gumbo_destroy_output(&kGumboDefaultOptions, g);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace testing
