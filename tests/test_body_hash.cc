// The DKIM/ARC body hash (RFC 6376 3.4, 3.5 l=, 3.7): table cases checked against the canonical
// form written out by hand, each fed whole, a byte at a time and in random pieces; and the
// hash reading runs (dkim::BodyHash) equal to the byte-at-a-time oracle (tests/dkim_oracle.cc)
// on every message of testdata/ (the corpus: test_corpus_body_hash.cc).
#include "body_hash_check.hh"
#include "helpers.hh"
#include "sha256.hh"

#include <doctest/doctest.h>

#include <filesystem>

using mimeuri::dkim::Canon;
using testing::BodyHashReading;

namespace {

std::string sha256(std::string_view s)
{
    GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
    g_checksum_update(c, reinterpret_cast<const guchar *>(s.data()), static_cast<gssize>(s.size()));
    guint8 d[32];
    gsize len = sizeof d;
    g_checksum_get_digest(c, d, &len);
    g_checksum_free(c);
    return std::string(reinterpret_cast<const char *>(d), len);
}

struct Case {
    const char *what;
    std::string body;
    Canon canon;
    std::optional<std::uint64_t> limit;
    bool unquote;
    std::vector<std::string> canonical; // the canonical forms whose digests finish() gives, in order
};

// Canonical forms written from RFC 6376 3.4.3 (simple), 3.4.4 (relaxed), 3.4.5 (the
// examples), 3.5 (l=), with the two readings of relaxed trailing white space on a last line
// with no line break (src/mime/signatures.hh).
const std::vector<Case> &cases()
{
    static const std::vector<Case> c = {
        {"3.4.5 example, relaxed", " C \r\nD \t E\r\n\r\n\r\n", Canon::Relaxed, {}, false, {" C\r\nD E\r\n"}},
        {"3.4.5 example, simple", " C \r\nD \t E\r\n\r\n\r\n", Canon::Simple, {}, false, {" C \r\nD \t E\r\n"}},
        {"3.4.5 example with bare LF, relaxed", " C \nD \t E\n\n\n", Canon::Relaxed, {}, false, {" C\r\nD E\r\n"}},
        {"3.4.5 example with bare LF, simple", " C \nD \t E\n\n\n", Canon::Simple, {}, false, {" C \r\nD \t E\r\n"}},
        {"empty body, simple: one CRLF (3.4.3)", "", Canon::Simple, {}, false, {"\r\n"}},
        {"empty body, relaxed: nothing (3.4.4)", "", Canon::Relaxed, {}, false, {""}},
        {"only empty lines, simple", "\n\r\n\n", Canon::Simple, {}, false, {"\r\n"}},
        {"only empty lines and white space, relaxed", "\n \t \r\n\t\n", Canon::Relaxed, {}, false, {""}},
        {"no line break at the end, simple", "abc", Canon::Simple, {}, false, {"abc\r\n"}},
        {"no line break at the end, relaxed", "abc", Canon::Relaxed, {}, false, {"abc\r\n"}},
        {"trailing empty lines go, simple", "a\n\n\nb\n\n\n", Canon::Simple, {}, false, {"a\r\n\r\n\r\nb\r\n"}},
        {"trailing empty lines go, CRLF, simple", "a\r\n\r\n\r\nb\r\n\r\n\r\n", Canon::Simple, {}, false,
         {"a\r\n\r\n\r\nb\r\n"}},
        {"white-space lines are empty lines at the end, relaxed", "a\n  \n\t\n", Canon::Relaxed, {}, false, {"a\r\n"}},
        {"white-space lines are content, simple", "a\n  \n\t\n", Canon::Simple, {}, false, {"a\r\n  \r\n\t\r\n"}},
        {"white-space lines inside, relaxed", "a\n \t\nb\n", Canon::Relaxed, {}, false, {"a\r\n\r\nb\r\n"}},
        {"CR without LF is content, simple", "a\rb\n", Canon::Simple, {}, false, {"a\rb\r\n"}},
        {"CR without LF is content, not white space, relaxed", "a \r b\t\r\n", Canon::Relaxed, {}, false,
         {"a \r b\r\n"}},
        {"CR CR LF: the first CR is content", "a\r\r\nb", Canon::Simple, {}, false, {"a\r\r\nb\r\n"}},
        {"a CR at the very end is content", "abc\r", Canon::Simple, {}, false, {"abc\r\r\n"}},
        {"LF CR: a line end, then content", "a\n\rb\n", Canon::Relaxed, {}, false, {"a\r\n\rb\r\n"}},
        {"WSP runs become one SP, leading too, relaxed", "\t a  \t b\t\t\n", Canon::Relaxed, {}, false, {" a b\r\n"}},
        {"WSP runs kept, simple", "\t a  \t b\t\t\n", Canon::Simple, {}, false, {"\t a  \t b\t\t\r\n"}},
        {"trailing WSP on the last line with no break: both readings", "a  ", Canon::Relaxed, {}, false,
         {"a\r\n", "a \r\n"}},
        {"trailing WSP after empty lines with no break", "a\n\n \t", Canon::Relaxed, {}, false,
         {"a\r\n", "a\r\n\r\n \r\n"}},
        {"only WSP, no break: both readings", " ", Canon::Relaxed, {}, false, {"", " \r\n"}},
        {"l= inside a line, simple", "abcdef\n", Canon::Simple, 3, false, {"abc"}},
        {"l= inside a WSP run, relaxed", "a  b\ncd\n", Canon::Relaxed, 2, false, {"a "}},
        {"l= inside the CRLF, relaxed", "a  b\ncd\n", Canon::Relaxed, 4, false, {"a b\r"}},
        {"l= the whole canonical body", "a\n\n", Canon::Simple, 3, false, {"a\r\n"}},
        {"l= one past the canonical body: no digest (3.5)", "a\n\n", Canon::Simple, 4, false, {}},
        {"l=0", "abc\n", Canon::Relaxed, 0, false, {""}},
        {"l= past the end: none, relaxed empty", "", Canon::Relaxed, 1, false, {}},
        {"l= and both readings of trailing WSP", "ab ", Canon::Relaxed, 3, false, {"ab\r", "ab "}},
        {"l= past the RFC reading, inside the other", "ab ", Canon::Relaxed, 5, false, {"ab \r\n"}},
        {"mboxrd: one > off each >+From line", ">From a\n>>From b\n>Fro\nx >From c\n", Canon::Simple, {}, true,
         {"From a\r\n>From b\r\n>Fro\r\nx >From c\r\n"}},
        {"mboxrd at the body's start and after CRLF", ">From a\r\n>From b", Canon::Relaxed, {}, true,
         {"From a\r\nFrom b\r\n"}},
        {"mboxrd: not after a bare CR", "a\r>From b\n", Canon::Simple, {}, true, {"a\r>From b\r\n"}},
        {"mboxrd: the SP of From then white space, relaxed", ">From  \t x\n", Canon::Relaxed, {}, true,
         {"From x\r\n"}},
        {"mboxrd: >s and From cut by the end of the body", "a\n>>>\n>>Fro", Canon::Simple, {}, true,
         {"a\r\n>>>\r\n>>Fro\r\n"}},
        {"mboxrd: a > line", ">\n>>\n", Canon::Simple, {}, true, {">\r\n>>\r\n"}},
        {"mboxrd off: >From kept", ">From a\n", Canon::Simple, {}, false, {">From a\r\n"}},
        {"mboxrd with l=", ">>From abc\n", Canon::Simple, 7, true, {">From a"}},
    };
    return c;
}

std::vector<std::string> digests_of(const Case &c)
{
    std::vector<std::string> d;
    for (const std::string &s : c.canonical) d.push_back(sha256(s));
    return d;
}

} // namespace

TEST_CASE("body hash: table cases, whole, a byte at a time and in random pieces, and the oracle agrees")
{
    std::mt19937 rng(44);
    for (const Case &c : cases()) {
        CAPTURE(c.what);
        const BodyHashReading r{c.canon, c.limit, c.unquote};
        const auto want = digests_of(c);
        CHECK(testing::body_hash_oracle(c.body, r) == want);
        CHECK(testing::body_hash_in_pieces(c.body, r, rng, std::max<std::size_t>(1, c.body.size())) == want);
        CHECK(testing::body_hash_in_pieces(c.body, r, rng, 1) == want);
        for (int round = 0; round < 20; ++round) CHECK(testing::body_hash_in_pieces(c.body, r, rng, 3) == want);
    }
}

TEST_CASE("body hash: every cut of a line with WSP runs, CR, CRLF and >From into two pieces")
{
    const std::string body = ">From  x \t\r\n\r\n\ta\r b  \n>>From\t\n\n  \r\n>\r\nend \t";
    for (Canon canon : {Canon::Simple, Canon::Relaxed})
        for (bool unquote : {false, true})
            for (std::optional<std::uint64_t> limit : {std::optional<std::uint64_t>(), std::optional<std::uint64_t>(17)}) {
                const BodyHashReading r{canon, limit, unquote};
                const auto want = testing::body_hash_oracle(body, r);
                for (std::size_t cut = 0; cut <= body.size(); ++cut) {
                    CAPTURE(cut);
                    mimeuri::dkim::BodyHash h(G_CHECKSUM_SHA256, canon, limit, unquote);
                    h.update(std::string_view(body).substr(0, cut));
                    h.update(std::string_view(body).substr(cut));
                    CHECK(h.finish() == want);
                }
            }
}

TEST_CASE("body hash: SHA-1 (rsa-sha1) as the oracle")
{
    std::mt19937 rng(1);
    const std::string body = "Hello  world \r\n\r\n>From me\n\n";
    for (Canon canon : {Canon::Simple, Canon::Relaxed}) {
        const BodyHashReading r{canon, {}, true, G_CHECKSUM_SHA1};
        const auto want = testing::body_hash_oracle(body, r);
        REQUIRE(want.size() == 1);
        CHECK(want.front().size() == 20);
        CHECK(testing::body_hash_in_pieces(body, r, rng, 4) == want);
    }
}

// Every reading of every message of testdata/ (whole files: header and body are bytes alike
// here), in random pieces and a byte at a time, against the oracle.
TEST_CASE("body hash: the oracle's digests on every message of testdata, in pieces of random sizes")
{
    std::mt19937 rng(6376);
    std::size_t files = 0;
    for (const auto &e : std::filesystem::recursive_directory_iterator(MIMEURI_TESTDATA)) {
        if (!e.is_regular_file() || e.path().extension() != ".eml") continue;
        const std::string bytes = testing::read_file(e.path().string());
        ++files;
        CAPTURE(e.path().string());
        for (Canon canon : {Canon::Simple, Canon::Relaxed})
            for (bool unquote : {false, true}) {
                std::uniform_int_distribution<std::uint64_t> cut(0, bytes.size() + 2);
                for (std::optional<std::uint64_t> limit : {std::optional<std::uint64_t>(), std::optional<std::uint64_t>(cut(rng))}) {
                    const BodyHashReading r{canon, limit, unquote};
                    const auto want = testing::body_hash_oracle(bytes, r);
                    CHECK(testing::body_hash_in_pieces(bytes, r, rng, 1) == want);
                    CHECK(testing::body_hash_in_pieces(bytes, r, rng, 97) == want);
                    CHECK(testing::body_hash_in_pieces(bytes, r, rng, 70000) == want);
                }
            }
    }
    CHECK(files > 100);
}

TEST_CASE("SHA-256 (nettle): FIPS 180-2 examples and GChecksum's digests, in pieces")
{
    REQUIRE(mimeuri::Sha256::available()); // always, but under MIMEURI_SHA256_PLAIN (benchmarks)
    auto ours = [](std::string_view s, std::mt19937 *rng = nullptr) {
        mimeuri::Sha256 h;
        for (std::size_t at = 0; at < s.size();) {
            const std::size_t n = rng ? std::min<std::size_t>(1 + (*rng)() % 130, s.size() - at) : s.size();
            h.update(s.data() + at, n);
            at += n;
        }
        return h.digest();
    };
    auto hex = [](const std::string &d) {
        std::string out;
        for (unsigned char c : d) out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
        return out;
    };
    CHECK(hex(ours("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(hex(ours("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(hex(ours("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(hex(ours(std::string(1000000, 'a'))) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    std::mt19937 rng(180);
    for (std::size_t n = 0; n < 700; ++n) {
        std::string s(n, '\0');
        for (char &c : s) c = static_cast<char>(rng());
        CAPTURE(n);
        CHECK(ours(s, &rng) == sha256(s));
    }
    mimeuri::Sha256 h; // digest() leaves the state as it was
    h.update("ab", 2);
    CHECK(h.digest() == sha256("ab"));
    h.update("c", 1);
    CHECK(h.digest() == sha256("abc"));
}
