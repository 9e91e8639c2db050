// The sanitiser (html::sanitize, a pass of the streaming tokenizer's states) against gumbo,
// the oracle: gumbo's tree of the output holds nothing active (tests/sanitize_check.hh: no
// script, handler, script URL, frame, refresh, base, form, remote load), with remote images
// off and on; and the output sanitised again is the same (no second reading finds a new tag).
#include "html_sanitize.hh"
#include "sanitize_check.hh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mimeuri;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string html(reinterpret_cast<const char *>(data), size);
    for (bool remote : {false, true}) {
        html::SanitizeOptions o;
        o.allow_remote_images = remote;
        auto first = html::sanitize(html, o);
        if (!first) return 0;
        if (std::string found = testing::active_content(first->html, remote); !found.empty()) {
            std::fprintf(stderr, "fuzz_html_sanitize: gumbo finds %s in the output\n", found.c_str());
            std::abort();
        }
        auto second = html::sanitize(first->html, o);
        if (!second || second->html != first->html) {
            std::fprintf(stderr, "fuzz_html_sanitize: a second pass changes the output\n");
            std::abort();
        }
    }
    return 0;
}
