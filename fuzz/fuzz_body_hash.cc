// The DKIM/ARC body hash reading runs (dkim::BodyHash, src/mime/signatures.cc) against the
// byte-at-a-time oracle (tests/dkim_oracle.cc): the same digests for any bytes, any pieces.
// Input: a mode byte (bit 0 relaxed, bit 1 ">From " unquoting, bit 2 an l=, bit 3 SHA-1),
// two bytes of l= (little-endian), a byte seeding the piece sizes, then the body.
#include "dkim_oracle.hh"
#include "dkim_body_hash.hh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace mimeuri;

namespace {

std::string hex(const std::vector<std::string> &d)
{
    std::string out;
    for (const std::string &s : d) {
        for (unsigned char c : s) {
            char b[3];
            std::snprintf(b, sizeof b, "%02x", c);
            out += b;
        }
        out += ' ';
    }
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    const unsigned mode = data[0];
    const dkim::Canon canon = mode & 1 ? dkim::Canon::Relaxed : dkim::Canon::Simple;
    const bool unquote = mode & 2;
    const std::optional<std::uint64_t> limit =
        mode & 4 ? std::optional<std::uint64_t>(data[1] | (unsigned{data[2]} << 8)) : std::nullopt;
    const GChecksumType type = mode & 8 ? G_CHECKSUM_SHA1 : G_CHECKSUM_SHA256;
    // Piece sizes from a xorshift seeded by byte 3: its low 3 bits cap them (1 to 2^k bytes).
    std::uint32_t x = 2463534242u ^ data[3];
    const std::uint32_t cap = 1u << (data[3] & 7);
    const std::string_view body(reinterpret_cast<const char *>(data) + 4, size - 4);

    dkim_oracle::BodyHash oracle(type, canon, limit, unquote);
    oracle.update(body);
    const auto want = oracle.finish();

    dkim::BodyHash runs(type, canon, limit, unquote);
    for (std::size_t at = 0; at < body.size();) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        const std::size_t n = std::min<std::size_t>(1 + x % cap, body.size() - at);
        runs.update(body.substr(at, n));
        at += n;
    }
    const auto got = runs.finish();
    if (got != want) {
        std::fprintf(stderr, "fuzz_body_hash: invariant broken: mode %u, oracle %s, runs %s\n", mode, hex(want).c_str(),
                     hex(got).c_str());
        std::abort();
    }
    return 0;
}
