// The streaming tokenizer against gumbo, the oracle (tests/test_html_tokenizer.cc and the
// corpus case in tests/test_corpus_urls.cc): where the tokenizer answers, its Scan is gumbo's,
// whole and fed in pieces of every size.
#pragma once

#include "html_refs.hh"
#include "html_tokenizer.hh"
#include "scan_equal.hh"

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

namespace testing {

// The text fed to mimeuri::html::PieceTokenizer in pieces of every size in `sizes`: each time the answer
// tokenize_refs gives for the whole (the same scan, or gumbo needed for the same reason).
inline void pieces_agree(const std::string &h, const mimeuri::html::TokenizerResult &whole, std::initializer_list<std::size_t> sizes)
{
    for (std::size_t size : sizes) {
        CAPTURE(size);
        mimeuri::html::PieceTokenizer t(1000000, 1u << 20);
        for (std::size_t at = 0; at < h.size(); at += size)
            if (!t.feed(std::string_view(h).substr(at, size))) break;
        auto r = t.finish();
        REQUIRE_MESSAGE(r.scan.has_value() == whole.scan.has_value(), "in: " << h.substr(0, 300));
        if (r.scan) {
            const std::string diff = scan_difference(*r.scan, *whole.scan);
            CHECK_MESSAGE(diff.empty(), diff << " in: " << h.substr(0, 300));
        } else {
            CHECK(r.fallback == whole.fallback);
        }
    }
}

// Tokenizer and gumbo agree where the tokenizer answers; returns whether it answered. The
// tokenizer fed in pieces answers as it does for the whole text.
inline bool agrees(const std::string &h)
{
    auto fast = mimeuri::html::tokenize_refs(h, 1000000);
    if (h.size() <= 4096) pieces_agree(h, fast, {1, 2, 3, 7, 61});
    pieces_agree(h, fast, {4096, 65536});
    auto slow = mimeuri::html::find_refs(h, 1000000);
    REQUIRE(slow.ok());
    if (!fast.scan) return false;
    const std::string diff = scan_difference(*fast.scan, *slow);
    CHECK_MESSAGE(diff.empty(), diff << " in: " << h.substr(0, 300));
    return true;
}

} // namespace testing
