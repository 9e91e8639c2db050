// The streaming tokenizer against gumbo, the oracle: wherever the tokenizer answers, its
// Scan is gumbo's, field by field (tests/scan_equal.hh); and its work is linear in the input.
// Fed in pieces (PieceTokenizer, sizes taken from the input's hash), it answers as for the whole.
#include "html_tokenizer.hh"
#include "scan_equal.hh"

#include <algorithm>
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
    // Pieces of a size the input says (its bytes' hash, 1 to 64 bytes for inputs up to 16 KiB):
    // every place a tag, comment, raw text or character reference can be cut is tried across
    // the corpus.
    unsigned sum = 0;
    for (char c : html) sum = sum * 31 + static_cast<unsigned char>(c);
    // A construct cut by pieces is read again with each one: over a text of n bytes in pieces
    // of s, up to n * n / s steps. So at most 256 pieces a text, and one-byte pieces only for
    // texts up to 1 KiB (CI's replay feeds whole corpus messages of 50 KB and more).
    const std::size_t derived = std::max<std::size_t>(1 + sum % 64, html.size() / 256);
    for (std::size_t size : {derived, html.size() <= 1024 ? std::size_t{1} : html.size()}) {
        PieceTokenizer pieces(1000000, std::size_t{1} << 30);
        for (std::size_t at = 0; at < html.size(); at += size)
            if (!pieces.feed(std::string_view(html).substr(at, size))) break;
        auto r = pieces.finish();
        std::string diff;
        if (r.scan.has_value() != fast.scan.has_value()) diff = r.scan ? "pieces answered, the whole did not" : "pieces fell back: " + r.fallback;
        else if (r.scan) diff = testing::scan_difference(*r.scan, *fast.scan);
        else if (r.fallback != fast.fallback) diff = "fallback '" + r.fallback + "' against '" + fast.fallback + "'";
        if (!diff.empty()) {
            std::fprintf(stderr, "fuzz_html_tokenizer: invariant broken: in pieces of %zu: %s\n", size, diff.c_str());
            std::abort();
        }
    }
    if (!fast.scan) return 0; // gumbo reads it
    auto slow = find_refs(html, 1000000);
    if (!slow || slow->stop != Stop::None) return 0; // a limit: nothing to compare
    if (std::string diff = testing::scan_difference(*fast.scan, *slow); !diff.empty()) {
        std::fprintf(stderr, "fuzz_html_tokenizer: invariant broken: the tokenizer and gumbo differ: %s\n", diff.c_str());
        std::abort();
    }
    return 0;
}
