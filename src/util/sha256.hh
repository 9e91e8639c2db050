// SHA-256 (FIPS 180-4) with the x86 SHA extensions where the CPU has them: the DKIM body hash
// (src/mime/signatures.cc) runs at the hash's speed, and GLib's SHA-256 (plain C) is several times
// slower than these instructions. available() says whether they are there; otherwise callers
// use GChecksum. Checked against GChecksum by tests/test_body_hash.cc and, through the body
// hash, by fuzz/fuzz_body_hash.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mimeuri {

class Sha256 {
public:
    // Whether this CPU has the SHA extensions (and SSE4.1); when not, nothing here may be used.
    // MIMEURI_SHA256_PLAIN in the environment says no (to measure GLib's SHA-256 in its place).
    static bool available();
    Sha256();
    void update(const void *data, std::size_t size);
    std::string digest() const; // 32 bytes; the state is left as it was (update may go on)

private:
    std::uint32_t state_[8];
    std::uint64_t bytes_{0};
    unsigned char block_[64];
    std::size_t used_{0};
};

} // namespace mimeuri
