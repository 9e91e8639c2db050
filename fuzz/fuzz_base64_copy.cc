// Canonical base64 copied (base64::Unbroken, src/util/base64.hh) against GMime's decoder
// then GLib's encoder, the path it replaces (and base64::encode against GLib's on the raw
// input): wherever the text is found canonical, the copy (its line breaks removed) is what
// they give, its decoded size theirs, and its 76-column lines (base64::append_lines) theirs
// at 57 octets a line; the same for any cut into pieces.
// The decoders of our own (src/mime/decode.hh) against GMime's steps, base64 and
// quoted-printable, on the same text in the same pieces: the same octets out of every step,
// the same state and save after it.
// Input: a mode byte (bit 0: the rest mapped onto the alphabet, '=', CR and LF, so that
// canonical and nearly canonical texts are common; bits 1-7 seed the piece size), then text.
#include "base64.hh"
#include "decode.hh"

#include "base64_oracle.hh"

#include <gmime/gmime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using base64_oracle::gmime_decode;
using base64_oracle::glib_encode;

[[noreturn]] void broken(const char *what, std::string_view text)
{
    std::fprintf(stderr, "invariant broken: %s (text of %zu octets)\n", what, text.size());
    std::abort();
}

// Our decoder and GMime's over text in pieces of cut octets, step by step.
void same_decoding(GMimeContentEncoding enc, std::string_view text, std::size_t cut)
{
    GMimeEncoding ours, theirs;
    g_mime_encoding_init_decode(&ours, enc);
    g_mime_encoding_init_decode(&theirs, enc);
    std::string a, b;
    for (std::size_t at = 0; at <= text.size(); at += cut) {
        const std::string_view piece = text.substr(std::min(at, text.size()), cut);
        a.assign(piece.size() + 16, '\0');
        b.assign(piece.size() + 16, '\0');
        a.resize(mimeuri::decode::step(&ours, piece.data(), piece.size(), a.data()));
        b.resize(g_mime_encoding_step(&theirs, piece.data(), piece.size(), b.data()));
        if (a != b) broken(enc == GMIME_CONTENT_ENCODING_BASE64 ? "base64 decoding differs from GMime's" : "quoted-printable decoding differs from GMime's", text);
        if (ours.state != theirs.state || ours.save != theirs.save) broken("decoder state differs from GMime's", text);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size < 1) return 0;
    const unsigned mode = data[0];
    std::string text(reinterpret_cast<const char *>(data + 1), size - 1);
    if (mode & 1) {
        static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (char &c : text) {
            const auto u = static_cast<unsigned char>(c);
            c = u < 232 ? kAlphabet[u % 64] : u < 244 ? '\n' : u < 248 ? '\r' : u < 254 ? '=' : ' ';
        }
    }
    const std::size_t cut = (mode >> 1) + 1;
    same_decoding(GMIME_CONTENT_ENCODING_BASE64, text, cut);
    same_decoding(GMIME_CONTENT_ENCODING_BASE64, text, text.size() + 1);
    {
        std::string qp(reinterpret_cast<const char *>(data + 1), size - 1);
        if (mode & 1) {
            static const char kQp[] = "=0123456789ABCDEFabcdefgz\r\n \t=";
            for (char &c : qp) c = kQp[static_cast<unsigned char>(c) % (sizeof kQp - 1)];
        }
        same_decoding(GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE, qp, cut);
        same_decoding(GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE, qp, qp.size() + 1);
    }
    mimeuri::base64::Unbroken u;
    std::string copy;
    bool fed = true;
    for (std::size_t at = 0; fed && at < text.size(); at += cut) fed = u.feed(std::string_view(text).substr(at, cut), &copy);
    const bool canonical = fed && u.canonical();
    if (canonical != mimeuri::base64::canonical(text)) broken("pieces and whole disagree", text);
    // The encoder of our own against GLib's, on the input's bytes as they are.
    const std::string_view raw(reinterpret_cast<const char *>(data + 1), size - 1);
    std::string ours((raw.size() + 2) / 3 * 4, '\0');
    ours.resize(mimeuri::base64::encode(data + 1, raw.size(), ours.data()));
    if (ours != glib_encode(raw)) broken("base64::encode differs from GLib's", raw);
    if (!canonical) return 0;
    const std::string bytes = gmime_decode(text);
    if (copy != glib_encode(bytes)) broken("copy differs from decode+encode", text);
    if (u.decoded_size() != bytes.size()) broken("decoded size", text);
    std::string lines, expected;
    mimeuri::base64::append_lines(copy, lines);
    for (std::size_t at = 0; at < bytes.size(); at += 57) expected += glib_encode(std::string_view(bytes).substr(at, 57)) + "\n";
    if (lines != expected) broken("76-column lines differ", text);
    return 0;
}
