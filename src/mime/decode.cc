// Base64 and quoted-printable decoding, GMime's results at memory speed (see decode.hh).
#include "decode.hh"

#include <array>
#include <cstdint>
#include <cstring>

namespace mimeuri::decode {

namespace {

constexpr std::uint32_t kNotAlphabet = 0x1000000;

// kQuantum[k][c]: the six bits of alphabet octet c at place k of a quantum (of 24 bits), or
// kNotAlphabet for any other octet ('=' included).
struct QuantumTables {
    std::uint32_t t[4][256];
    constexpr QuantumTables() : t()
    {
        const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (auto &place : t)
            for (auto &v : place) v = kNotAlphabet;
        for (std::uint32_t i = 0; i < 64; ++i)
            for (unsigned k = 0; k < 4; ++k) t[k][static_cast<unsigned char>(alphabet[i])] = i << (18 - 6 * k);
    }
};
constexpr QuantumTables kQuantum;

// Octets GMime's base64 decoder counts (the alphabet and '='); all others it skips.
constexpr bool counted(unsigned char c) { return kQuantum.t[0][c] != kNotAlphabet || c == '='; }

inline bool hex(unsigned char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
inline unsigned hex_value(unsigned char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

} // namespace

std::size_t base64_step(const unsigned char *in, std::size_t len, unsigned char *out, int *state, guint32 *save)
{
    const unsigned char *p = in, *end = in + len;
    unsigned char *o = out;
    if (*state > 0 && *state < 4) {
        // A quantum left open by the piece before (pieces are cut anywhere): GMime's step
        // closes it over the alphabet octets it needs, unless a '=' comes first.
        const unsigned char *q = p;
        for (int need = 4 - *state; q < end && need > 0; ++q) {
            if (*q == '=') break;
            if (counted(*q)) --need;
        }
        if (q < end && *q != '=') {
            o += g_mime_encoding_base64_decode_step(p, static_cast<std::size_t>(q - p), o, state, save);
            p = q;
        }
    }
    if (*state == 0) {
        // The last eight counted octets and all after them are GMime's. GMime 3.2.13 (Debian
        // 12's) needs nothing of it: it reads octet by octet, '=' ends the stream. Older
        // versions scan back from a piece's end for a trailing '=' and count it only when they
        // wrote output in the same step: left eight, they read what they would in the whole.
        const unsigned char *limit = end;
        int keep = 8;
        while (limit > in && keep > 0)
            if (counted(*--limit)) --keep;
        if (keep > 0) limit = in;
        while (p < limit) {
            if (*p == '\n' || *p == '\r') {
                ++p;
                continue;
            }
            // A line's quanta in a row, with no line break to look for among them; each
            // quantum's three octets written as four (the fourth is overwritten next, or lies
            // in the room outlen gives past what is decoded).
            const void *nl = std::memchr(p, '\n', static_cast<std::size_t>(limit - p));
            const unsigned char *line_end = nl ? static_cast<const unsigned char *>(nl) : limit;
            std::uint32_t bad = 0;
            while (line_end - p >= 4) {
                const std::uint32_t v = kQuantum.t[0][p[0]] | kQuantum.t[1][p[1]] | kQuantum.t[2][p[2]] | kQuantum.t[3][p[3]];
                bad = v & kNotAlphabet;
                if (bad) break;
                const std::uint32_t be = __builtin_bswap32(v << 8);
                std::memcpy(o, &be, 4);
                o += 3;
                p += 4;
            }
            if (bad || (p < line_end && *p != '\r')) break; // an odd octet, or a quantum cut: GMime's
        }
        // *save is 0 between quanta, and GMime's tail holds at least two whole quanta before
        // any it leaves open: no bit of what was decoded here can reach its save.
    }
    return static_cast<std::size_t>(o - out) + g_mime_encoding_base64_decode_step(p, static_cast<std::size_t>(end - p), o, state, save);
}

std::size_t quoted_step(const unsigned char *in, std::size_t len, unsigned char *out, int *state, guint32 *save)
{
    const unsigned char *p = in, *end = in + len;
    unsigned char *o = out;
    guint32 isave = *save;
    int istate = *state;
    while (p < end) {
        if (istate == 0) {
            const void *eq = std::memchr(p, '=', static_cast<std::size_t>(end - p));
            const unsigned char *run_end = eq ? static_cast<const unsigned char *>(eq) : end;
            std::memcpy(o, p, static_cast<std::size_t>(run_end - p));
            o += run_end - p;
            p = run_end;
            if (eq) {
                istate = 1;
                ++p;
            }
        } else if (istate == 1) {
            const unsigned char c = *p++;
            if (c == '\n') {
                istate = 0; // a soft break, LF alone
            } else {
                isave = c;
                istate = 2;
            }
        } else {
            const unsigned char c = *p++;
            const auto first = static_cast<unsigned char>(isave);
            if (hex(c) && isave < 256 && hex(first)) {
                *o++ = static_cast<unsigned char>(hex_value(first) << 4 | hex_value(c));
                isave = static_cast<guint32>(first >= 'a' && first <= 'f' ? first - 0x20 : first); // GMime's toupper
            } else if (!(c == '\n' && isave == '\r')) { // CR LF: a soft break
                *o++ = '=';
                *o++ = first;
                *o++ = c;
            }
            istate = 0;
        }
    }
    *state = istate;
    *save = isave;
    return static_cast<std::size_t>(o - out);
}

std::size_t step(GMimeEncoding *st, const char *in, std::size_t len, char *out)
{
    const auto *i = reinterpret_cast<const unsigned char *>(in);
    auto *o = reinterpret_cast<unsigned char *>(out);
    if (!st->encode && st->encoding == GMIME_CONTENT_ENCODING_BASE64) return base64_step(i, len, o, &st->state, &st->save);
    if (!st->encode && st->encoding == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE) return quoted_step(i, len, o, &st->state, &st->save);
    return g_mime_encoding_step(st, in, len, out);
}

} // namespace mimeuri::decode
