// The streaming tokenizer against gumbo, the oracle: wherever the tokenizer answers, its
// Scan is gumbo's, field by field (tests/scan_equal.hh); and its work is linear in the input.
#include "html_tokenizer.hh"
#include "scan_equal.hh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mimeuri::html;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string html(reinterpret_cast<const char *>(data), size);
    auto fast = tokenize_refs(html, 1000000);
    if (fast.work > 2 * html.size() + 16) {
        std::fprintf(stderr, "fuzz_html_tokenizer: %zu steps for %zu bytes\n", fast.work, html.size());
        std::abort();
    }
    if (!fast.scan) return 0; // gumbo reads it
    auto slow = find_refs(html, 1000000);
    if (!slow) return 0; // a limit: nothing to compare
    if (std::string diff = testing::scan_difference(*fast.scan, *slow); !diff.empty()) {
        std::fprintf(stderr, "fuzz_html_tokenizer: invariant broken: the tokenizer and gumbo differ: %s\n", diff.c_str());
        std::abort();
    }
    return 0;
}
