// SHA-256 with the x86 SHA extensions (sha256rnds2, sha256msg1, sha256msg2): the block
// function follows Intel's description of these instructions ("New Instructions Supporting
// the Secure Hash Algorithm on Intel Architecture Processors", 2013) and the public-domain
// sha256-x86.c of Jeffrey Walton written from it. Padding and lengths: FIPS 180-4 5.1.1.
#include "sha256.hh"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define MIMEURI_SHA_X86 1
#endif

namespace mimeuri {

namespace {

constexpr std::uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

#ifdef MIMEURI_SHA_X86
alignas(16) constexpr std::uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// Blocks of 64 bytes into state (A..H).
__attribute__((target("sha,sse4.1"))) void blocks(std::uint32_t state[8], const unsigned char *data, std::size_t n)
{
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL); // big-endian words
    __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&state[0]));
    __m128i s1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&state[4]));
    tmp = _mm_shuffle_epi32(tmp, 0xB1);          // CDAB
    s1 = _mm_shuffle_epi32(s1, 0x1B);            // EFGH
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);    // ABEF
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);         // CDGH
    for (; n > 0; --n, data += 64) {
        const __m128i abef = s0, cdgh = s1;
        __m128i w[4]; // the message schedule, four words per group of four rounds, in a ring
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i)
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(data + 16 * i)), mask);
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) {
            if (i >= 4) { // W[4i..4i+3] from the four groups before (FIPS 180-4 6.2.2 step 1)
                const __m128i a = w[i % 4], b = w[(i + 1) % 4], c = w[(i + 2) % 4], d = w[(i + 3) % 4];
                w[i % 4] = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(a, b), _mm_alignr_epi8(d, c, 4)), d);
            }
            __m128i msg = _mm_add_epi32(w[i % 4], _mm_load_si128(reinterpret_cast<const __m128i *>(&kK[4 * i])));
            s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
            msg = _mm_shuffle_epi32(msg, 0x0E);
            s0 = _mm_sha256rnds2_epu32(s0, s1, msg);
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    tmp = _mm_shuffle_epi32(s0, 0x1B);    // FEBA
    s1 = _mm_shuffle_epi32(s1, 0xB1);     // DCHG
    s0 = _mm_blend_epi16(tmp, s1, 0xF0);  // DCBA
    s1 = _mm_alignr_epi8(s1, tmp, 8);     // HGFE
    _mm_storeu_si128(reinterpret_cast<__m128i *>(&state[0]), s0);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(&state[4]), s1);
}
#else
void blocks(std::uint32_t *, const unsigned char *, std::size_t) {}
#endif

} // namespace

bool Sha256::available()
{
#ifdef MIMEURI_SHA_X86
    static const bool yes = [] {
        if (std::getenv("MIMEURI_SHA256_PLAIN")) return false; // benchmarks: GLib's SHA-256 instead
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return false;
        if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
        return (b & (1u << 29)) != 0; // CPUID.(EAX=7,ECX=0):EBX.SHA[bit 29]
    }();
    return yes;
#else
    return false;
#endif
}

Sha256::Sha256() { std::memcpy(state_, kInit, sizeof state_); }

void Sha256::update(const void *data, std::size_t size)
{
    const auto *p = static_cast<const unsigned char *>(data);
    bytes_ += size;
    if (used_ > 0) {
        const std::size_t k = std::min(size, sizeof block_ - used_);
        std::memcpy(block_ + used_, p, k);
        used_ += k;
        p += k;
        size -= k;
        if (used_ < sizeof block_) return;
        blocks(state_, block_, 1);
        used_ = 0;
    }
    if (size >= 64) {
        blocks(state_, p, size / 64);
        p += size / 64 * 64;
        size %= 64;
    }
    if (size > 0) {
        std::memcpy(block_, p, size);
        used_ = size;
    }
}

std::string Sha256::digest() const
{
    Sha256 last = *this;
    const std::uint64_t bits = bytes_ * 8;
    unsigned char pad[72] = {0x80};
    const std::size_t zeros = (used_ < 56 ? 56 : 120) - used_; // FIPS 180-4 5.1.1: to 448 mod 512
    for (int i = 0; i < 8; ++i) pad[zeros + static_cast<std::size_t>(i)] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    last.update(pad, zeros + 8);
    std::string out(32, '\0');
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 4; ++j) out[static_cast<std::size_t>(4 * i + j)] = static_cast<char>(last.state_[i] >> (24 - 8 * j));
    return out;
}

} // namespace mimeuri
