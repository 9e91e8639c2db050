// The transfer codecs in process, in MB/s of decoded bytes (bench/codecs.sh): base64 and
// quoted-printable, decode and encode, the project's paths against GMime's and GLib's (and
// libb64, stringencoders' modp_b64, nettle and OpenSSL where built with them), and the copy that replaces a decode then
// an encode where base64 is canonical (src/util/base64.hh). Rounds interleaved, best of
// ROUNDS; the same bytes for every row of a kind.
// Usage: codecs ROUNDS BYTES_FILE TEXT_FILE  (bytes: what base64 carries; text: what QP carries)
#include "base64.hh"
#include "decode.hh"
#include "transfer.hh"

#include <gmime/gmime.h>
#ifdef WITH_LIBB64
extern "C" {
#include <b64/cdecode.h>
#include <b64/cencode.h>
}
#endif
#ifdef WITH_NETTLE
#include <nettle/base64.h>
#endif
#ifdef WITH_MODP
#include <modp_b64.h>
#endif
#ifdef WITH_OPENSSL
#include <openssl/evp.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace mimeuri;

namespace {

std::string slurp(const char *path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

constexpr std::size_t kPiece = 64 << 10; // as the output is written (streamed_body.cc)

struct Row {
    const char *kind, *name;
    std::function<std::size_t()> run; // returns a checksum-ish size, so nothing is optimized away
    std::size_t decoded;              // bytes it stands for
    double best{1e9};
};

} // namespace

int main(int argc, char **argv)
{
    if (argc < 4) return 64;
    g_mime_init();
    const int rounds = std::atoi(argv[1]);
    const std::string bytes = slurp(argv[2]), text = slurp(argv[3]);
    const std::string b64 = transfer::base64_lines(bytes); // 76 columns, LF
    const std::string qp = transfer::quoted_printable(text, false);
    std::string out;
    out.reserve(bytes.size() * 2 + text.size() * 3 + 1024);
    // In the pieces decode_span reads, by GMime's step or ours (decode::step).
    auto pieces_decode = [&](const std::string &in, GMimeContentEncoding enc, bool ours) {
        GMimeEncoding st;
        g_mime_encoding_init_decode(&st, enc);
        out.resize(in.size() + 16);
        std::size_t n = 0;
        for (std::size_t at = 0; at < in.size(); at += kPiece) {
            const std::size_t len = std::min(kPiece, in.size() - at);
            n += ours ? decode::step(&st, in.data() + at, len, out.data() + n)
                      : g_mime_encoding_step(&st, in.data() + at, len, out.data() + n);
        }
        return n;
    };
    auto gmime_decode = [&](const std::string &in, GMimeContentEncoding enc) { return pieces_decode(in, enc, false); };
    std::vector<Row> rows;
    rows.push_back({"base64 decode", "ours (decode::step)", [&] { return pieces_decode(b64, GMIME_CONTENT_ENCODING_BASE64, true); }, bytes.size()});
    rows.push_back({"base64 decode", "GMime g_mime_encoding_step", [&] { return gmime_decode(b64, GMIME_CONTENT_ENCODING_BASE64); }, bytes.size()});
    rows.push_back({"base64 decode", "GLib g_base64_decode_step", [&] {
                        out.resize(b64.size());
                        gint state = 0;
                        guint save = 0;
                        return g_base64_decode_step(b64.data(), b64.size(), reinterpret_cast<guchar *>(out.data()), &state, &save);
                    }, bytes.size()});
#ifdef WITH_LIBB64
    rows.push_back({"base64 decode", "libb64", [&] {
                        out.resize(b64.size());
                        base64_decodestate s;
                        base64_init_decodestate(&s);
                        return static_cast<std::size_t>(base64_decode_block(b64.data(), static_cast<int>(b64.size()), out.data(), &s));
                    }, bytes.size()});
#endif
#ifdef WITH_NETTLE
    rows.push_back({"base64 decode", "nettle", [&] {
                        out.resize(b64.size());
                        base64_decode_ctx c;
                        base64_decode_init(&c);
                        std::size_t n = out.size();
                        base64_decode_update(&c, &n, reinterpret_cast<uint8_t *>(out.data()), b64.size(), b64.data());
                        return n;
                    }, bytes.size()});
#endif
#ifdef WITH_OPENSSL
    rows.push_back({"base64 decode", "OpenSSL EVP_DecodeUpdate", [&] {
                        out.resize(b64.size());
                        EVP_ENCODE_CTX *c = EVP_ENCODE_CTX_new();
                        EVP_DecodeInit(c);
                        int n = 0, m = 0;
                        EVP_DecodeUpdate(c, reinterpret_cast<unsigned char *>(out.data()), &n, reinterpret_cast<const unsigned char *>(b64.data()), static_cast<int>(b64.size()));
                        EVP_DecodeFinal(c, reinterpret_cast<unsigned char *>(out.data()) + n, &m);
                        EVP_ENCODE_CTX_free(c);
                        return static_cast<std::size_t>(n + m);
                    }, bytes.size()});
#endif
    rows.push_back({"base64 encode", "ours: 76-column lines (transfer::Base64Lines, base64::encode)", [&] {
                        out.clear();
                        transfer::Base64Lines::lines(bytes.data(), bytes.size(), out);
                        return out.size();
                    }, bytes.size()});
    rows.push_back({"base64 encode", "ours: one line (base64::encode)", [&] {
                        out.resize((bytes.size() + 2) / 3 * 4);
                        return base64::encode(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(), out.data());
                    }, bytes.size()});
    rows.push_back({"base64 encode", "GLib g_base64_encode_step, one line (data: URL)", [&] {
                        out.resize(bytes.size() / 3 * 4 + 16);
                        gint state = 0, save = 0;
                        std::size_t n = g_base64_encode_step(reinterpret_cast<const guchar *>(bytes.data()), bytes.size(), FALSE, out.data(), &state, &save);
                        return n + g_base64_encode_close(FALSE, out.data() + n, &state, &save);
                    }, bytes.size()});
    rows.push_back({"base64 encode", "GMime g_mime_encoding_base64_encode_step", [&] {
                        out.resize(bytes.size() / 3 * 4 + bytes.size() / 50 + 16);
                        int state = 0;
                        guint32 save = 0;
                        std::size_t n = g_mime_encoding_base64_encode_step(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(), reinterpret_cast<unsigned char *>(out.data()), &state, &save);
                        return n + g_mime_encoding_base64_encode_close(nullptr, 0, reinterpret_cast<unsigned char *>(out.data()) + n, &state, &save);
                    }, bytes.size()});
#ifdef WITH_LIBB64
    rows.push_back({"base64 encode", "libb64", [&] {
                        out.resize(bytes.size() / 3 * 4 + bytes.size() / 50 + 16);
                        base64_encodestate s;
                        base64_init_encodestate(&s);
                        int n = base64_encode_block(bytes.data(), static_cast<int>(bytes.size()), out.data(), &s);
                        return static_cast<std::size_t>(n + base64_encode_blockend(out.data() + n, &s));
                    }, bytes.size()});
#endif
#ifdef WITH_NETTLE
    rows.push_back({"base64 encode", "nettle", [&] {
                        out.resize(BASE64_ENCODE_LENGTH(bytes.size()) + 16);
                        base64_encode_ctx c;
                        base64_encode_init(&c);
                        std::size_t n = base64_encode_update(&c, out.data(), bytes.size(), reinterpret_cast<const uint8_t *>(bytes.data()));
                        return n + base64_encode_final(&c, out.data() + n);
                    }, bytes.size()});
#endif
#ifdef WITH_OPENSSL
    rows.push_back({"base64 encode", "OpenSSL EVP_EncodeBlock, one line", [&] {
                        out.resize(bytes.size() / 3 * 4 + 16);
                        return static_cast<std::size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()), reinterpret_cast<const unsigned char *>(bytes.data()), static_cast<int>(bytes.size())));
                    }, bytes.size()});
#endif
    rows.push_back({"base64 copy", "ours: canonical check, line breaks removed (base64::Unbroken)", [&] {
                        out.clear();
                        base64::Unbroken u;
                        for (std::size_t at = 0; at < b64.size(); at += kPiece) u.feed(std::string_view(b64).substr(at, kPiece), &out);
                        return u.canonical() ? out.size() : 0;
                    }, bytes.size()});
    rows.push_back({"base64 copy", "ours: canonical check alone (planning a data: URL)", [&] {
                        std::size_t n = 0;
                        return base64::canonical(b64, &n) ? n : 0;
                    }, bytes.size()});
    const std::string unbroken = [&] {
        std::string u;
        base64::Unbroken copy;
        copy.feed(b64, &u);
        return u;
    }();
    rows.push_back({"base64 copy", "ours: one line re-wrapped at 76 columns (base64::append_lines)", [&] {
                        out.clear();
                        base64::append_lines(unbroken, out);
                        return out.size();
                    }, bytes.size()});
#ifdef WITH_MODP
    // stringencoders' modp_b64 reads no line breaks: it decodes the text without them.
    rows.push_back({"base64 decode", "modp_b64 (stringencoders), of the text without line breaks", [&] {
                        out.resize(modp_b64_decode_len(unbroken.size()));
                        return modp_b64_decode(out.data(), unbroken.data(), unbroken.size());
                    }, bytes.size()});
    rows.push_back({"base64 encode", "modp_b64 (stringencoders), one line", [&] {
                        out.resize(modp_b64_encode_len(bytes.size()));
                        return modp_b64_encode(out.data(), bytes.data(), bytes.size());
                    }, bytes.size()});
#endif
    rows.push_back({"qp encode", "ours: transfer::QuotedPrintable", [&] {
                        out.clear();
                        transfer::QuotedPrintable q(false);
                        for (std::size_t at = 0; at < text.size(); at += kPiece) q.feed(std::string_view(text).substr(at, kPiece), out);
                        q.finish(out);
                        return out.size();
                    }, text.size()});
    rows.push_back({"qp encode", "GMime g_mime_encoding_quoted_encode_step", [&] {
                        out.resize(text.size() * 3 + text.size() / 24 + 16);
                        int state = 0;
                        guint32 save = 0;
                        std::size_t n = g_mime_encoding_quoted_encode_step(reinterpret_cast<const unsigned char *>(text.data()), text.size(), reinterpret_cast<unsigned char *>(out.data()), &state, &save);
                        return n + g_mime_encoding_quoted_encode_close(nullptr, 0, reinterpret_cast<unsigned char *>(out.data()) + n, &state, &save);
                    }, text.size()});
    rows.push_back({"qp decode", "ours (decode::step)", [&] { return pieces_decode(qp, GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE, true); }, text.size()});
    rows.push_back({"qp decode", "GMime g_mime_encoding_step", [&] { return gmime_decode(qp, GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE); }, text.size()});
    for (int r = 0; r < rounds; ++r) {
        for (Row &row : rows) {
            const auto t0 = std::chrono::steady_clock::now();
            volatile std::size_t sink = row.run();
            (void)sink;
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            row.best = std::min(row.best, s);
        }
    }
    std::printf("bytes %zu (base64 text %zu), text %zu (quoted-printable %zu); best of %d rounds\n", bytes.size(), b64.size(),
                text.size(), qp.size(), rounds);
    for (const Row &row : rows) std::printf("%-14s %8.1f MB/s  %s\n", row.kind, row.decoded / row.best / 1e6, row.name);
    return 0;
}
