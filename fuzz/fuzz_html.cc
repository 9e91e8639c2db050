// The HTML reference finder and rewriter: no crash, replacements land where the finder said,
// and the rewritten HTML reads back with the new URLs. Rewriting adds no line break: a CR or
// LF the rewriter decoded (&#10;, &NewLine;, ...) and wrote back raw could start a delimiter
// or header line in the message around the HTML.
#include "html_refs.hh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <strings.h>

using namespace mimeuri::html;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string html(reinterpret_cast<const char *>(data), size);
    auto scan = find_refs(html, 10000);
    if (!scan) return 0;
    for (const auto &r : scan->refs) {
        if (r.holder >= scan->holders.size()) std::abort();
        const Holder &h = scan->holders[r.holder];
        if (r.begin > r.end || r.end > h.decoded.size() || h.raw_begin > h.raw_end || h.raw_end > html.size()) std::abort();
    }
    // The cheap pre-check may say "no reference here" only where the scan finds none.
    if (!may_hold_reference(html))
        for (const auto &r : scan->refs)
            if (strncasecmp(r.url.c_str(), "cid:", 4) == 0 || strncasecmp(r.url.c_str(), "mid:", 4) == 0) {
                std::fprintf(stderr, "fuzz_html: the pre-check missed %s\n", r.url.c_str());
                std::abort();
            }
    // No replacement: the same bytes.
    if (rewrite(html, *scan, {}).html != html) std::abort();
    // Every reference replaced by a plain URL: the result still scans, and holds it.
    std::vector<Replacement> reps;
    for (std::size_t i = 0; i < scan->refs.size(); ++i) reps.push_back({i, "cid:fuzz@example.org"});
    auto done = rewrite(html, *scan, reps);
    const std::string &out = done.html;
    if (reps.size() > done.skipped.size() && out.find("cid:fuzz@example.org") == std::string::npos) std::abort();
    for (char c : {'\n', '\r'})
        if (std::count(out.begin(), out.end(), c) > std::count(html.begin(), html.end(), c)) {
            std::fprintf(stderr, "fuzz_html: the rewrite added a %s\n", c == '\n' ? "LF" : "CR");
            std::abort();
        }
    auto again = find_refs(out, 10000);
    if (!again) std::abort();
    return 0;
}
