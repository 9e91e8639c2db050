// dkim::BodyHash (src/mime/signatures.cc, reading runs) against the byte-at-a-time oracle
// (tests/dkim_oracle.cc), on the same bytes fed in pieces of random sizes.
#pragma once

#include "dkim_oracle.hh"
#include "dkim_body_hash.hh"

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace testing {

struct BodyHashReading {
    mimeuri::dkim::Canon canon;
    std::optional<std::uint64_t> limit;
    bool unquote;
    GChecksumType type{G_CHECKSUM_SHA256};
};

// The new hash's digests, the body given in pieces of 1 to max_piece bytes (1: GMime's
// one-byte-read trick), its first `single` bytes one at a time.
inline std::vector<std::string> body_hash_in_pieces(std::string_view body, const BodyHashReading &r, std::mt19937 &rng,
                                                    std::size_t max_piece, std::size_t single = 0)
{
    mimeuri::dkim::BodyHash h(r.type, r.canon, r.limit, r.unquote);
    std::uniform_int_distribution<std::size_t> size(1, max_piece);
    for (std::size_t at = 0; at < body.size();) {
        const std::size_t n = at < single ? 1 : std::min(size(rng), body.size() - at);
        h.update(body.substr(at, n));
        at += n;
    }
    return h.finish();
}

inline std::vector<std::string> body_hash_oracle(std::string_view body, const BodyHashReading &r)
{
    mimeuri::dkim_oracle::BodyHash h(r.type, r.canon, r.limit, r.unquote);
    h.update(body);
    return h.finish();
}

} // namespace testing
