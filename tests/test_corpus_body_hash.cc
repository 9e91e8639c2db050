// The DKIM/ARC body hash reading runs (dkim::BodyHash) gives the byte-at-a-time oracle's
// digests (tests/dkim_oracle.cc) on every message of ../shared/corpus (every 4th under the
// sanitizers, where the oracle is slow), both canonicalizations, with and without the mbox's
// ">From " unquoting, with an l= (a random length) or none, the bytes fed in pieces of random
// sizes, the first 64 KiB a byte at a time (GMime's one-byte-read trick).
#include "body_hash_check.hh"
#include "helpers.hh"

#include <doctest/doctest.h>

using mimeuri::dkim::Canon;

TEST_CASE("body hash: the oracle's digests on every corpus message, in pieces of random sizes")
{
    const auto rows = testing::corpus_index();
    if (rows.empty()) return testing::skip("no corpus at " MIMEURI_CORPUS);
    constexpr std::size_t stride = testing::sanitized ? 4 : 1;
    std::mt19937 rng(6376);
    std::size_t compared = 0, with_l = 0;
    for (std::size_t i = 0; i < rows.size(); i += stride) {
        const std::string path = std::string(MIMEURI_CORPUS) + "/" + rows[i].at(0);
        const std::string bytes = testing::read_file(path);
        CAPTURE(path);
        std::uniform_int_distribution<std::uint64_t> cut(0, bytes.size() + 2);
        for (Canon canon : {Canon::Simple, Canon::Relaxed})
            for (bool unquote : {false, true}) {
                std::optional<std::uint64_t> limit;
                if (rng() % 2) limit = cut(rng), ++with_l;
                const testing::BodyHashReading r{canon, limit, unquote};
                CHECK(testing::body_hash_in_pieces(bytes, r, rng, 8192, 65536) == testing::body_hash_oracle(bytes, r));
                ++compared;
            }
    }
    CHECK(compared == 4 * ((rows.size() + stride - 1) / stride));
    CHECK(with_l > compared / 4);
}
