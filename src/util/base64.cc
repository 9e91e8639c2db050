// Canonical base64 text, copied (see base64.hh).
#include "base64.hh"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

namespace mimeuri::base64 {

namespace {

constexpr std::array<unsigned char, 256> make_rank()
{
    std::array<unsigned char, 256> t{};
    for (auto &v : t) v = 66;
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (unsigned i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = static_cast<unsigned char>(i);
    t['='] = 64;
    t['\r'] = t['\n'] = 65;
    return t;
}

constexpr std::array<unsigned char, 256> kRankTable = make_rank();

// How many of p's first 16 octets, from the first on, are all of the alphabet: 16 or less.
// Sixteen at once (GCC's vector extensions: SSE2 here, plain code elsewhere).
typedef unsigned char V16 __attribute__((vector_size(16)));
inline bool alphabet16(const unsigned char *p)
{
    V16 v;
    std::memcpy(&v, p, 16);
    const auto in = ((V16)(v - 'A') < 26) | ((V16)(v - 'a') < 26) | ((V16)(v - '0') < 10) | (v == '+') | (v == '/');
    std::uint64_t half[2];
    std::memcpy(half, &in, 16);
    return (half[0] & half[1]) == ~std::uint64_t{0};
}

// The two characters of every 12 bits, in memory order.
struct Pairs {
    char c[4096][2];
    constexpr Pairs() : c()
    {
        const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (unsigned v = 0; v < 4096; ++v) {
            c[v][0] = alphabet[v >> 6];
            c[v][1] = alphabet[v & 63];
        }
    }
};
constexpr Pairs kPairs;

} // namespace

std::size_t encode(const unsigned char *in, std::size_t size, char *out)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = out;
    std::size_t i = 0;
    for (; i + 3 <= size; i += 3, o += 4) {
        const unsigned v = unsigned{in[i]} << 16 | unsigned{in[i + 1]} << 8 | in[i + 2];
        std::memcpy(o, kPairs.c[v >> 12], 2);
        std::memcpy(o + 2, kPairs.c[v & 4095], 2);
    }
    if (const std::size_t left = size - i; left > 0) {
        const unsigned v = unsigned{in[i]} << 16 | (left == 2 ? unsigned{in[i + 1]} << 8 : 0u);
        o[0] = alphabet[v >> 18];
        o[1] = alphabet[(v >> 12) & 63];
        o[2] = left == 2 ? alphabet[(v >> 6) & 63] : '=';
        o[3] = '=';
        o += 4;
    }
    return static_cast<std::size_t>(o - out);
}

bool Unbroken::feed(std::string_view in, std::string *out)
{
    if (bad_) return false;
    const auto *p = reinterpret_cast<const unsigned char *>(in.data());
    const auto *e = p + in.size();
    while (p < e) {
        // A run of the alphabet (a line, mostly), passed on whole; before any padding only.
        const unsigned char *run = p;
        if (pad_ == 0) {
            while (e - p >= 16 && alphabet16(p)) p += 16;
            while (p < e && kRankTable[*p] < 64) ++p;
        }
        if (p > run) {
            chars_ += static_cast<std::size_t>(p - run);
            last_ = kRankTable[p[-1]];
            if (out) out->append(reinterpret_cast<const char *>(run), static_cast<std::size_t>(p - run));
            if (p == e) break;
        }
        if (!octet(*p)) {
            bad_ = true;
            return false;
        }
        if (out && *p == '=') out->push_back('=');
        ++p;
    }
    return true;
}

bool Unbroken::octet(unsigned char c)
{
    const unsigned r = kRankTable[c];
    if (r == 65) return true; // a line break, anywhere
    if (r != 64) return false; // not in the alphabet, or the alphabet after padding
    // '=': the third or fourth octet of a quantum; the bits the octet before it leaves
    // unused zero (else a decoder drops them, and an encoder would not give this text back).
    const std::size_t at = chars_ % 4;
    if (pad_ == 0) {
        const bool zero_tail = at == 2 ? (last_ & 15) == 0 : at == 3 ? (last_ & 3) == 0 : false;
        if (!zero_tail) return false;
    } else if (pad_ != 1 || at != 3) {
        return false; // "x===", "xx=" then more
    }
    ++pad_;
    ++chars_;
    return true;
}

bool canonical(std::string_view text, std::size_t *size)
{
    Unbroken u;
    if (!u.feed(text, nullptr) || !u.canonical()) return false;
    if (size) *size = u.decoded_size();
    return true;
}

void append_lines(std::string_view unbroken, std::string &out)
{
    out.reserve(out.size() + unbroken.size() + unbroken.size() / 76 + 1);
    for (std::size_t at = 0; at < unbroken.size(); at += 76) {
        out.append(unbroken.substr(at, 76));
        out.push_back('\n');
    }
}

} // namespace mimeuri::base64
