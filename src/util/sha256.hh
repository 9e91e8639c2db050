// SHA-256 (FIPS 180-4) by nettle, for the DKIM body hash (src/mime/dkim_body_hash.cc) and
// --data=attach's ids. Debian's nettle is built "fat": it uses the x86 SHA instructions where
// the CPU has them, chosen at run time (bench/body_hash.sh: 1,158 MB/s over the corpus's signed
// mail, where the SHA-instruction code this replaced gave 666 and GLib's plain-C GChecksum 195).
// Checked against GChecksum by tests/test_body_hash.cc and, through the body hash, by
// fuzz/fuzz_body_hash.cc.
#pragma once

#include <nettle/sha2.h>

#include <cstddef>
#include <cstdlib>
#include <string>

namespace mimeuri {

class Sha256 {
public:
    // Whether to use it: always, but where MIMEURI_SHA256_PLAIN is in the environment (then
    // callers use GChecksum: bench/body_hash.sh measures the body hash on GLib's SHA-256 so).
    static bool available();
    Sha256() { sha256_init(&ctx_); }
    void update(const void *data, std::size_t size) { sha256_update(&ctx_, size, static_cast<const uint8_t *>(data)); }
    // 32 bytes; the state is left as it was (update may go on).
    std::string digest() const
    {
        sha256_ctx last = ctx_; // nettle's digest resets the context it is given
        std::string out(SHA256_DIGEST_SIZE, '\0');
        sha256_digest(&last, SHA256_DIGEST_SIZE, reinterpret_cast<uint8_t *>(out.data()));
        return out;
    }

private:
    sha256_ctx ctx_;
};

inline bool Sha256::available()
{
    static const bool plain = std::getenv("MIMEURI_SHA256_PLAIN") != nullptr;
    return !plain;
}

} // namespace mimeuri
