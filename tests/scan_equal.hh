// Two Scans compared field by field: the streaming tokenizer's against gumbo's (find_refs).
// Used by tests/test_html_tokenizer.cc and fuzz/fuzz_html_tokenizer.cc.
#pragma once

#include "html_refs.hh"

#include <string>

namespace testing {

// "" when equal, else the first difference, said.
inline std::string scan_difference(const mimeuri::html::Scan &fast, const mimeuri::html::Scan &gumbo)
{
    using std::to_string;
    if (fast.base_href != gumbo.base_href)
        return "base href: " + fast.base_href.value_or("(none)") + " vs " + gumbo.base_href.value_or("(none)");
    if (fast.truncated != gumbo.truncated) return "truncated differs";
    if (fast.holders.size() != gumbo.holders.size())
        return "holders: " + to_string(fast.holders.size()) + " vs " + to_string(gumbo.holders.size());
    for (std::size_t i = 0; i < fast.holders.size(); ++i) {
        const auto &a = fast.holders[i], &b = gumbo.holders[i];
        if (a.raw_begin != b.raw_begin || a.raw_end != b.raw_end || a.quote != b.quote || a.attribute != b.attribute ||
            a.decoded != b.decoded || a.element != b.element || a.attr != b.attr || a.srcdoc != b.srcdoc)
            return "holder " + to_string(i) + ": " + a.element + "@" + a.attr + " [" + to_string(a.raw_begin) + "," +
                   to_string(a.raw_end) + ") '" + a.decoded + "' vs " + b.element + "@" + b.attr + " [" +
                   to_string(b.raw_begin) + "," + to_string(b.raw_end) + ") '" + b.decoded + "'";
    }
    if (fast.refs.size() != gumbo.refs.size())
        return "refs: " + to_string(fast.refs.size()) + " vs " + to_string(gumbo.refs.size());
    for (std::size_t i = 0; i < fast.refs.size(); ++i) {
        const auto &a = fast.refs[i], &b = gumbo.refs[i];
        if (a.holder != b.holder || a.begin != b.begin || a.end != b.end || a.url != b.url || a.css != b.css ||
            a.css_quoted != b.css_quoted || a.padded != b.padded || (a.inner < 0) != (b.inner < 0))
            return "ref " + to_string(i) + ": " + a.url + " vs " + b.url;
        if (a.inner < 0) continue;
        // Inside a srcdoc document: where it stands there (the indexes may differ, not the places).
        const auto &x = fast.inner[static_cast<std::size_t>(a.inner)], &y = gumbo.inner[static_cast<std::size_t>(b.inner)];
        if (x.element != y.element || x.attr != y.attr || x.attribute != y.attribute || x.quote != y.quote ||
            x.verbatim != y.verbatim)
            return "ref " + to_string(i) + " in srcdoc: " + x.element + "@" + x.attr + " vs " + y.element + "@" + y.attr;
    }
    return {};
}

} // namespace testing
