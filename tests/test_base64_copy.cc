// Canonical base64 text (src/util/base64.hh), which --cid=inline copies into a data: URL in
// place of decoding it and encoding it again, and --data=attach copies into 76-column lines:
// the copy must be what GMime's decoder then GLib's encoder give, whenever it is taken. The
// oracle here is those two; every non-canonical case is one where the copy would differ
// from it (so the case fails if the copy were taken there), and the end-to-end cases run
// mimeuri --cid=inline on parts of each kind.
#include "base64.hh"
#include "base64_oracle.hh"
#include "decode.hh"
#include "helpers.hh"

#include <doctest/doctest.h>
#include <gmime/gmime.h>

#include <random>

namespace {

using base64_oracle::gmime_decode;
std::string oracle(std::string_view text) { return base64_oracle::reencoded(text); }

// The copy: the text fed in pieces of `cut` octets, its line breaks removed.
std::string copy_of(std::string_view text, std::size_t cut, bool *canonical, std::size_t *size)
{
    mimeuri::base64::Unbroken u;
    std::string out;
    bool ok = true;
    for (std::size_t at = 0; ok && at < text.size(); at += cut) ok = u.feed(text.substr(at, cut), &out);
    *canonical = ok && u.canonical();
    *size = u.decoded_size();
    return out;
}

void check_canonical(const std::string &text)
{
    for (std::size_t cut : {std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{1} << 20}) {
        bool canonical = false;
        std::size_t size = 0;
        const std::string copy = copy_of(text, cut, &canonical, &size);
        INFO("text: ", text, ", cut ", cut);
        REQUIRE(canonical);
        CHECK(copy == oracle(text));
        CHECK(size == gmime_decode(text).size());
    }
    std::size_t size = 0;
    CHECK(mimeuri::base64::canonical(text, &size));
}

void check_not_canonical(const std::string &text)
{
    std::string unbroken;
    for (char c : text)
        if (c != '\r' && c != '\n') unbroken += c;
    INFO("text: ", text);
    // The copy would be wrong here: it must not be taken.
    REQUIRE(unbroken != oracle(text));
    for (std::size_t cut : {std::size_t{1}, std::size_t{2}, std::size_t{1} << 20}) {
        bool canonical = true;
        std::size_t size = 0;
        (void)copy_of(text, cut, &canonical, &size);
        CHECK_FALSE(canonical);
    }
    CHECK_FALSE(mimeuri::base64::canonical(text));
}

} // namespace

TEST_CASE("base64 copy: canonical text is the decoder-then-encoder's, whatever its line breaks")
{
    for (const char *t : {"", "QQ==", "QUI=", "QUJD", "QUJDRA==", "AAAA", "////", "+/+/", "Zm9vYmFy",
                          "Zm9v\nYmFy\n", "Zm9v\r\nYmFy\r\n", "Zm\n9vYm\r\nFy", "\n\nZm9vYg==\n\n", "Zm9vYg=\n=",
                          "Zm9vYmE=\r\n", "\r\n"})
        check_canonical(t);
    // Real parts: 76-column lines in LF and CRLF, and lines of varying length.
    std::mt19937 rng(7);
    for (std::size_t n : {1u, 2u, 3u, 56u, 57u, 58u, 1000u, 4099u}) {
        std::string bytes(n, '\0');
        for (char &c : bytes) c = static_cast<char>(rng());
        gchar *b = g_base64_encode(reinterpret_cast<const guchar *>(bytes.data()), bytes.size());
        const std::string one = b;
        g_free(b);
        std::string lf, crlf, ragged;
        for (std::size_t at = 0; at < one.size(); at += 76) lf += one.substr(at, 76) + "\n";
        for (std::size_t at = 0; at < one.size(); at += 76) crlf += one.substr(at, 76) + "\r\n";
        for (std::size_t at = 0, w = 1; at < one.size(); at += w, w = w % 90 + 7)
            ragged += one.substr(at, w) + (w % 2 ? "\n" : "\r\n");
        check_canonical(lf);
        check_canonical(crlf);
        check_canonical(ragged);
        std::size_t size = 0;
        CHECK(mimeuri::base64::canonical(crlf, &size));
        CHECK(size == n);
    }
}

TEST_CASE("base64 copy: padding, trailing bits and stray octets make the text decoded and encoded again")
{
    for (const char *t : {
             "QR==",         // "A" with nonzero unused bits: it encodes back as QQ==
             "QUJ=",         // the same with one '=' (QUI=)
             "QQ=",          // padding short of a quantum
             "QQ",           // no padding at all
             "QUJDR",        // a quantum cut short
             "Q===",         // too much padding
             "QQ==QUJD",     // text after the padding
             "QQ==\nQUJD\n", // the same across a line
             "QU=D",         // '=' inside a quantum
             "=QUJ",         // '=' first
             "QU JD",        // white space inside a line
             "QUJD \n",      // trailing white space on a line
             "QUJD\t",       // a tab
             "QU-_",         // the URL alphabet
             "QU*JD",        // an octet of no alphabet
             "QUJD\x80",    // an 8-bit octet
             "QUJD====",     // padding after a whole quantum
         })
        check_not_canonical(t);
    // A stray octet deep in a long canonical text, found wherever the pieces are cut.
    std::string long_text;
    for (int i = 0; i < 200; ++i) long_text += "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0\n";
    check_canonical(long_text);
    for (char stray : {' ', '.', '=', '-', '\t', '\0'}) {
        std::string t = long_text;
        t[77 * 150 + 33] = stray;
        check_not_canonical(t);
    }
}

TEST_CASE("base64 copy: lines of 76 columns from a data: URL's payload are transfer::base64_lines's")
{
    for (std::size_t n : {0u, 1u, 56u, 57u, 58u, 114u, 1000u}) {
        std::string bytes(n, 'x');
        for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>(i * 7 + 3);
        gchar *b = g_base64_encode(reinterpret_cast<const guchar *>(bytes.data()), bytes.size());
        std::string lines;
        mimeuri::base64::append_lines(b, lines);
        std::string expected;
        for (std::size_t at = 0; at < n; at += 57) {
            gchar *l = g_base64_encode(reinterpret_cast<const guchar *>(bytes.data() + at), std::min<std::size_t>(57, n - at));
            expected += std::string(l) + "\n";
            g_free(l);
        }
        g_free(b);
        CHECK(lines == expected);
    }
}

namespace {

// A page with one image part in the given base64 text; the data: URL --cid=inline makes of it.
std::string inlined_url(const std::string &b64, bool crlf)
{
    std::string m = "From: a@example.org\nMessage-ID: <copy@example.org>\nMIME-Version: 1.0\n"
                    "Content-Type: multipart/related; boundary=\"b\"\n\n--b\nContent-Type: text/html\n\n"
                    "<img src=\"cid:i@x\">\n--b\nContent-Type: image/png\nContent-ID: <i@x>\n"
                    "Content-Transfer-Encoding: base64\n\n" +
                    b64 + "\n--b--\n";
    if (crlf) m = testing::crlf(m);
    testing::TempDir d;
    const std::string f = d / "m.eml";
    testing::write_file(f, m);
    auto run = testing::mimeuri("--cid=inline " + testing::quote(f));
    REQUIRE(run.status == 0);
    const auto at = run.out.find("data:image/png;base64,");
    REQUIRE(at != std::string::npos);
    const auto end = run.out.find('"', at);
    return run.out.substr(at + 22, end - at - 22);
}

} // namespace

TEST_CASE("--cid=inline: a part's base64 copied where canonical, decoded and encoded where not")
{
    const std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    for (bool crlf : {false, true}) {
        CHECK(inlined_url(png, crlf) == png);
        CHECK(inlined_url(png.substr(0, 30) + "\n" + png.substr(30, 7) + "\n" + png.substr(37), crlf) == png);
        // The same bytes with nonzero unused bits in the last quantum: the canonical text.
        std::string odd = png;
        odd[odd.size() - 3] = 'h'; // 'g' (32) -> 'h' (33): a bit the decoder drops
        CHECK(inlined_url(odd, crlf) == png);
        CHECK(inlined_url(png.substr(0, 40) + " " + png.substr(40), crlf) == png); // a space
        CHECK(inlined_url(png.substr(0, png.size() - 2), crlf) == oracle(png.substr(0, png.size() - 2))); // no padding
    }
}

TEST_CASE("--data=attach: a data: image's base64 copied into the new part where canonical, encoded again where not")
{
    const std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    std::string odd = png;
    odd[odd.size() - 3] = 'h'; // the same bytes, an unused bit set
    for (const std::string &payload : {png, odd, png.substr(0, 50) + "\n " + png.substr(50)}) {
        testing::TempDir d;
        const std::string f = d / "m.eml";
        testing::write_file(f, "From: a@example.org\nMIME-Version: 1.0\nContent-Type: text/html\n\n<img src=\"data:image/png;base64," +
                                   payload + "\">\n");
        auto run = testing::mimeuri("--data=attach " + testing::quote(f));
        REQUIRE(run.status == 0);
        const auto tree = testing::mime_tree(run.out);
        REQUIRE(tree.leaves.size() == 2);
        CHECK(tree.leaves[1] == gmime_decode(png));
        // The part's base64 is the canonical text in 76 columns, whatever the payload was.
        CHECK(run.out.find(png.substr(0, 76) + "\n" + png.substr(76) + "\n") != std::string::npos);
    }
}

namespace {

// Our decoder and GMime's step over text cut at `cuts` (ascending offsets): every step's
// output, state and save the same; the whole output returned.
std::string decoded_alike(GMimeContentEncoding enc, std::string_view text, const std::vector<std::size_t> &cuts)
{
    GMimeEncoding ours, theirs;
    g_mime_encoding_init_decode(&ours, enc);
    g_mime_encoding_init_decode(&theirs, enc);
    std::string whole;
    std::size_t from = 0;
    std::vector<std::size_t> ends = cuts;
    ends.push_back(text.size());
    for (std::size_t to : ends) {
        std::string_view piece = text.substr(from, to - from);
        std::string a(piece.size() + 16, '\0'), b(piece.size() + 16, '\0');
        a.resize(mimeuri::decode::step(&ours, piece.data(), piece.size(), a.data()));
        b.resize(g_mime_encoding_step(&theirs, piece.data(), piece.size(), b.data()));
        CHECK(a == b);
        CHECK(ours.state == theirs.state);
        CHECK(ours.save == theirs.save);
        whole += b;
        from = to;
    }
    return whole;
}

// The same, uncut, cut once at every offset, and one octet at a time.
void decodes_alike(GMimeContentEncoding enc, std::string_view text)
{
    CAPTURE(text);
    decoded_alike(enc, text, {});
    for (std::size_t at = 0; at <= text.size(); ++at) decoded_alike(enc, text, {at});
    std::vector<std::size_t> every;
    for (std::size_t at = 1; at < text.size(); ++at) every.push_back(at);
    decoded_alike(enc, text, every);
}

} // namespace

TEST_CASE("decoders: base64 and quoted-printable give GMime's octets, state and save, however cut")
{
    // Base64: whole quanta, line breaks, padding where the last eight counted octets are and
    // before them, '=' alone after a quantum (GMime counts it only when it wrote something in
    // the same step), stray octets, a quantum cut by a line break.
    for (const char *t : {"", "QUJD", "QUJDREVG", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY\n", "QUJDREVGR0hJSktMTU5P\r\nUFFSU1RV\r\n",
                          "AAAA=", "AAAAAAAAAAAA=", "AAAA\n=", "QUI=", "QQ==", "QUJDREVGR0hJSktMTU5PUFE=\n", "AB==CDEFGHIJKLMN",
                          "AAAA==AAAAAAAAAAAA", "QU JD RE VG", "QUJ\nDREVGR0hJSktMTU5PUFFS", "-_AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAA=AAAA",
                          "AAAAAAAAAAAAAAAAAAAAAAAAA", "====AAAAAAAAAAAAAAAA"})
        decodes_alike(GMIME_CONTENT_ENCODING_BASE64, t);
    // Quoted-printable: hex pairs in both cases, soft breaks (LF alone, CR LF), '=' before
    // something else, '=' at a piece's end and at the text's end.
    for (const char *t : {"", "plain text\n", "caf=C3=A9 =e9\n", "soft=\nbreak", "soft=\r\nbreak", "=\r", "=", "=4", "=4g=G4=\rx",
                          "a==41b", "trailing =20\n=3D=3d", "=\n=\n=\n"})
        decodes_alike(GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE, t);
    // A megabyte of canonical 76-column text: the fast path's own ground.
    std::mt19937 rng(7);
    std::string bytes(3 << 18, '\0');
    for (char &c : bytes) c = static_cast<char>(rng());
    std::string text;
    for (std::size_t at = 0; at < bytes.size(); at += 57)
        text += base64_oracle::glib_encode(std::string_view(bytes).substr(at, 57)) + "\n";
    CHECK(decoded_alike(GMIME_CONTENT_ENCODING_BASE64, text, {1000, 4099, 65536, 65537}) == bytes);
}
