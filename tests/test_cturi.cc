// draft-eastlake-cturi-03: every example of the draft as a vector in both directions,
// our own vectors, and the closure properties over generated inputs.
#include "cturi.hh"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

using namespace mimeuri::cturi;

namespace {

std::string c2u(const std::string &ct)
{
    auto r = ct2uri(ct);
    REQUIRE_MESSAGE(r.ok(), ct << ": " << r.error().message);
    return *r;
}

std::string u2c(const std::string &uri)
{
    auto r = uri2ct_string(uri);
    REQUIRE_MESSAGE(r.ok(), uri << ": " << r.error().message);
    return *r;
}

ContentType parsed(const std::string &ct)
{
    auto r = parse_content_type(ct);
    REQUIRE_MESSAGE(r.ok(), ct << ": " << r.error().message);
    return *r;
}

void same_ct(const std::string &a, const std::string &b)
{
    CHECK_MESSAGE(equivalent(parsed(a), parsed(b)), a << "  vs  " << b);
}

struct Vector {
    const char *section;
    const char *content_type; // as printed in the draft, after "Content-Type:"
    const char *uri;          // without the presentation angle brackets
    const char *note;
};

// Content-Type -> URI examples (sections 2.x).
const Vector ct_to_uri[] = {
    {"2.1", "image/JPEG", "ContentType:image/jpeg", ""},
    {"2.1", "Content-type:      x-FOO?bar/biZZare#sUb#tYpe", "ContentType:x-foo%3Fbar/bizzare%23sub%23type", ""},
    {"2.2", "text/plain; charset=\"us-ascii\";\r\n    x-mac-type=\"54455854\"; x-mac-creator=\"4D4F5353\"",
     "ContentType:text/plain?charset=\"us-ascii\"&x-mac-type=\"54455854\"&x-mac-creator=\"4D4F5353\"",
     "the URI is folded in the draft for presentation; white space removed"},
    {"2.2", "image/tiff; application=faxbw", "ContentType:image/tiff?application=\"faxbw\"", ""},
    {"2.3", "application/uRI.mailto%3Auser%40host.example", "mailto:user@host.example", ""},
    {"2.3", "application/uri.http%3A%2F%2Fx.test; foo=\"123\";\r\n    bar=\"abcd\"", "http://x.test?foo=\"123\"&bar=\"abcd\"", ""},
    {"2.3", "\r\n    application/uri.http%3A%2F%2Fa%3Ab%40c.text%2Fx%2Fy;\r\n    URI-fragment=\"z%25z\"",
     "http://a:b@c.text/x/y#z%z", "host c.text appears on both sides in the draft; kept"},
    {"2.4", "application/xml; URI-body=\"http://xml.example/foo\"", "http://xml.example/foo?MIME-type=\"application/xml\"", ""},
};

// URI -> Content-Type examples (sections 3.x).
const Vector uri_to_ct[] = {
    {"3.1", "application/uri.http%3A%2F%2Fexample.com%2Ftag42", "http://example.com/tag42", ""},
    {"3.1", "application/uri.mailto%3AU%40example.net; subject=\"misc\"; body=\"line1%250D%250Aline2\"",
     "mailto:U@example.net?subject=\"misc\"&body=\"line1%0D%0Aline2\"", ""},
    {"3.1", "application/uri.xyz%3A%2F%2Fabc.test%2Fdef; h=\"ijk\"; URI-fragment=\"lmn\"", "xyz://abc.test/def?h=ijk#lmn", ""},
    {"3.2", "model/vnd.example.longish.sub#type.name", "ContentType:model/vnd.example.longish.sub%23type.name", ""},
    {"3.2", "text/plain; charset=\"US-ASCII\"; x-obscure=\"value\"", "ContentType:text/plain?charset=\"US-ASCII\"&x-obscure=\"value\"", ""},
    {"3.3", "message/rfc822; URI-body=\"mailto%3Ajoe%40blow.test\"; URI-fragment=\"123\"",
     "mailto:joe@blow.test?MIME-type=\"message%2Frfc822\"#123",
     "typo corrected: the draft prints URI-body=\"mailto%3Ajoe%40blow.text\" for joe@blow.test"},
};

} // namespace

TEST_CASE("draft examples, Content-Type to URI (section 2), and back")
{
    for (const auto &v : ct_to_uri) {
        CAPTURE(v.section);
        CAPTURE(v.content_type);
        CHECK(c2u(v.content_type) == v.uri);
        // The other direction: the URI maps back to the same Content-Type.
        same_ct(u2c(v.uri), v.content_type);
    }
}

TEST_CASE("draft examples, URI to Content-Type (section 3), and back")
{
    for (const auto &v : uri_to_ct) {
        CAPTURE(v.section);
        CAPTURE(v.uri);
        CHECK(u2c(v.uri) == v.content_type);
        CHECK_MESSAGE(equivalent_uri(c2u(v.content_type), v.uri), c2u(v.content_type));
    }
}

TEST_CASE("a Content-Type with quoted parameters becomes a ContentType: URI with its quotes kept")
{
    CHECK(c2u("text/plain; charset=\"us-ascii\"; x-mac-type=\"54455854\"") ==
          "ContentType:text/plain?charset=\"us-ascii\"&x-mac-type=\"54455854\"");
}

TEST_CASE("section 4: every troublesome character is encoded, nothing else")
{
    for (int c = 0; c < 128; ++c) {
        std::string s(1, static_cast<char>(c));
        bool t = c <= 32 || c == 127 || std::string("()<>@,;:\\/[]?%#\"=").find(static_cast<char>(c)) != std::string::npos;
        CAPTURE(c);
        CHECK(troublesome(static_cast<unsigned char>(c)) == t);
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", c);
        CHECK(encode(s) == (t ? std::string(hex) : s));
    }
    // 8-bit octets are not URI characters: encoded too; "&" only inside a query.
    CHECK(encode("\xc3\xa9") == "%C3%A9");
    CHECK(encode("a&b") == "a&b");
    CHECK(encode("a&b", true) == "a%26b");
    CHECK(decode("%3a%3A%zz%4") == "::%zz%4");
}

TEST_CASE("parameters: input order, empty and quoted-pair values, trailing semicolon")
{
    CHECK(c2u("text/plain; b=2; a=1") == "ContentType:text/plain?b=\"2\"&a=\"1\"");
    CHECK(c2u("text/plain;") == "ContentType:text/plain"); // 2.2: no "?" for a trailing ";"
    CHECK(c2u("text/plain; a=\"\"") == "ContentType:text/plain?a=\"\"");
    CHECK(c2u("text/plain; a=\"x\\\"y\\\\z\"") == "ContentType:text/plain?a=\"x%22y%5Cz\"");
    CHECK(u2c("ContentType:text/plain?a=\"x%22y%5Cz\"") == "text/plain; a=\"x\\\"y\\\\z\"");
    CHECK(c2u("text/plain; a=\"b&c=d\"") == "ContentType:text/plain?a=\"b%26c%3Dd\"");
    CHECK(c2u("text/plain (a comment); charset=us-ascii (another)") == "ContentType:text/plain?charset=\"us-ascii\"");
    CHECK(c2u("  Content-Type: TEXT/HTML ; Charset = \"UTF-8\"") == "ContentType:text/html?Charset=\"UTF-8\"");
}

TEST_CASE("RFC 2231 input and non-ASCII values")
{
    CHECK(c2u("application/x-stuff; title*=us-ascii'en-us'This%20is%20%2A%2A%2Afun%2A%2A%2A") ==
          "ContentType:application/x-stuff?title=\"This%20is%20***fun***\"");
    CHECK(c2u("application/x-stuff; title*0*=us-ascii'en'This%20is%20even%20more%20; title*1*=%2A%2A%2Afun%2A%2A%2A%20; "
              "title*2=\"isn't it!\"") == "ContentType:application/x-stuff?title=\"This%20is%20even%20more%20***fun***%20isn't%20it!\"");
    // ISO-8859-1 e-acute becomes UTF-8, then two encoded octets.
    CHECK(c2u("text/plain; name*=iso-8859-1''caf%E9") == "ContentType:text/plain?name=\"caf%C3%A9\"");
    // Back into a header, an 8-bit value is written in RFC 2231 form, never raw.
    CHECK(u2c("ContentType:text/plain?name=\"caf%C3%A9\"") == "text/plain; name*=utf-8''caf%C3%A9");
    same_ct(u2c(c2u("text/plain; name*=iso-8859-1''caf%E9")), "text/plain; name*=utf-8''caf%C3%A9");
    CHECK_FALSE(parse_content_type("text/plain; a*0=x; a*2=y").ok()); // a missing section
}

TEST_CASE("the uri. tree under any top-level type")
{
    CHECK(c2u("text/uri.http%3A%2F%2Fx.test%2Fa") == "http://x.test/a");
    CHECK(c2u("image/URI.urn%3Aisbn%3A0451450523") == "urn:isbn:0451450523");
    // The top-level type is ignored (2.3), so it comes back as application.
    CHECK(u2c(c2u("text/uri.http%3A%2F%2Fx.test%2Fa")) == "application/uri.http%3A%2F%2Fx.test%2Fa");
    same_ct(u2c(c2u("text/uri.http%3A%2F%2Fx.test%2Fa")), "text/uri.http%3A%2F%2Fx.test%2Fa");
}

TEST_CASE("URIs with ? but no =, empty queries and fragments")
{
    // A query that is not name=value pairs stays in the URI body, so closure holds.
    CHECK(u2c("http://x.test/search?q") == "application/uri.http%3A%2F%2Fx.test%2Fsearch%3Fq");
    CHECK(c2u("application/uri.http%3A%2F%2Fx.test%2Fsearch%3Fq") == "http://x.test/search?q");
    // "&" is not troublesome (section 4), so it stays as it is in the subtype.
    CHECK(u2c("http://x.test/a?b=1&c") == "application/uri.http%3A%2F%2Fx.test%2Fa%3Fb%3D1&c");
    CHECK(c2u("application/uri.http%3A%2F%2Fx.test%2Fa%3Fb%3D1&c") == "http://x.test/a?b=1&c");
    // A "*" in a name would read as an RFC 2231 section: such a query stays in the body.
    CHECK(u2c("x:y?a*=1") == "application/uri.x%3Ay%3Fa*%3D1");
    CHECK(u2c("http://x.test/a?") == "application/uri.http%3A%2F%2Fx.test%2Fa%3F");
    CHECK(c2u(u2c("http://x.test/a?")) == "http://x.test/a?");
    CHECK(u2c("http://x.test/a#") == "application/uri.http%3A%2F%2Fx.test%2Fa; URI-fragment=\"\"");
    CHECK(c2u(u2c("http://x.test/a#")) == "http://x.test/a#");
    CHECK(u2c("HTTP://x.test/") == "application/uri.http%3A%2F%2Fx.test%2F");
    CHECK_FALSE(uri2ct("ContentType:text/plain?oops").ok());
    // A name given twice cannot become two Content-Type parameters of one name.
    CHECK(u2c("http://x.test/a?b=1&b=2") == "application/uri.http%3A%2F%2Fx.test%2Fa%3Fb%3D1&b%3D2");
    CHECK(c2u(u2c("http://x.test/a?b=1&b=2")) == "http://x.test/a?b=1&b=2");
    CHECK_FALSE(parse_content_type("text/plain; a=1; A=2").ok());
    CHECK_FALSE(ct2uri("application/uri.relative%2Fpath").ok()); // 1.2 (2)
    // Shapes the mapping never writes and that could not come back (found by fuzzing).
    CHECK_FALSE(ct2uri("application/uri.http%3A%3F%2Fx.test; foo=\"123\"").ok());
    CHECK_FALSE(ct2uri("application/uri.http%3A%2F%2Fx%23frag").ok());
    CHECK_FALSE(ct2uri("text/html; URI-body=\"http://x/?a=1\"").ok());
    CHECK_FALSE(ct2uri("text/html; URI-body=\"ContentType:text/plain\"").ok()); // circular
    CHECK_FALSE(ct2uri("application/uri.contenttype%3Atext%2Fplain").ok());
    CHECK_FALSE(ct2uri("application/uri.http%3A%2F%2Fx%3Fa%3D1").ok()); // a pairs query: parameters
    CHECK_FALSE(ct2uri("application/uri.http%3A%2F%2Fx; URI-body=\"http://y\"").ok());
    CHECK(c2u("application/uri.http%3A%2F%2Fx.test%2Fsearch%3Fq") == "http://x.test/search?q"); // still fine
    // A URI-body's scheme comes back in lower case: the same URI (RFC 3986 3.1).
    same_ct(u2c(c2u("text/plain; URI-body=\"HTTP:x\"")), "text/plain; URI-body=\"HTTP:x\"");
    CHECK_FALSE(ct2uri("text/html; URI-body=\"no-scheme\"").ok());
}

TEST_CASE("input forms: angle brackets, white space, Content-Type prefix, ContentType in any case")
{
    CHECK(u2c("<http://example.com/\r\n  tag42>") == "application/uri.http%3A%2F%2Fexample.com%2Ftag42");
    CHECK(u2c("contenttype:text/plain") == "text/plain");
    CHECK(u2c("CONTENTTYPE:text/plain") == "text/plain");
    CHECK(c2u("Content-Type: text/plain") == "ContentType:text/plain");
}

TEST_CASE("errors: relative URIs, bad types, and section 6 injection")
{
    for (const char *rel : {"//host/path", "path/only", "", ":nothing", "1http://x"}) {
        auto r = uri2ct(rel);
        CHECK_FALSE(r.ok());
    }
    CHECK(uri2ct("foo/bar").error().message.find("relative") != std::string::npos);
    CHECK_FALSE(parse_content_type("text").ok());
    CHECK_FALSE(parse_content_type("text/plain; a").ok());
    CHECK_FALSE(parse_content_type("text/plain; a=\"open").ok());
    // Decoded CR, LF or NUL never reach a header.
    for (const char *evil : {"ContentType:text/plain?a=\"x%0D%0ABcc:%20e@x.test\"", "ContentType:text/pl%0Aain",
                             "ContentType:text/plain?a=\"%00\"", "http://x?MIME-type=\"text%2Fplain%0D%0AX:%20y\""}) {
        auto r = uri2ct_string(evil);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message.find("section 6") != std::string::npos);
    }
    // Into a URI, a decoded control or space is refused: emitted raw it would break the URI,
    // re-encoded it would not map back to the same value (found by fuzzing).
    CHECK_FALSE(ct2uri("application/uri.http%3A%2F%2Fx%0D%0A").ok());
    CHECK_FALSE(ct2uri("application/uri.http%3A%2F%2Fx; a=\"b%01c\"").ok());
    CHECK_FALSE(uri2ct("/Content-Type:text/plain").ok()); // ':' is no MIME type character
    CHECK_FALSE(ct2uri("application/uri.http%3A%2F%2Fx; a&b=\"1\"").ok());
    CHECK_FALSE(ct2uri("application/uri.http%3A%2F%2Fx; a=\"1%231\"").ok());
    CHECK_FALSE(ct2uri("application/uri.http%3A%2F%2Fx; a=\"1&b=2\"").ok());
    CHECK(c2u("text/plain; a&b=\"1\"") == "ContentType:text/plain?a%26b=\"1\""); // 2.2 encodes it
    // A query value carries %0D%0A only encoded (3.1 example), never decoded.
    CHECK(u2c("mailto:a@b.test?body=%0D%0A") == "application/uri.mailto%3Aa%40b.test; body=\"%250D%250A\"");
}

TEST_CASE("URC representation tags, out and in")
{
    CHECK(to_urc(parsed("Text/Plain; charset=ISO-8859-1")) == "/text/plain/charset:ISO-8859-1");
    CHECK(to_urc(parsed("text/plain; name=\"a/b:c\"")) == "/text/plain/name:a%2Fb%3Ac");
    CHECK(u2c("/Text/Plain/charset:ISO-8859-1") == "Text/Plain; charset=\"ISO-8859-1\"");
    CHECK(c2u("/text/plain/charset:us-ascii") == "ContentType:text/plain?charset=\"us-ascii\"");
    same_ct(u2c(to_urc(parsed("text/plain; name=\"a/b:c\"; x=\"\""))), "text/plain; name=\"a/b:c\"; x=\"\"");
    CHECK_FALSE(uri2ct("/text").ok());
    CHECK_FALSE(uri2ct("/text/plain/charset:a/charset:b").ok()); // a name twice is ambiguous
    // A query naming the mapping's own parameters stays in the URI body (found by fuzzing).
    CHECK(u2c("x:y?URI-fragment=1#f") == "application/uri.x%3Ay%3FURI-fragment%3D1; URI-fragment=\"f\"");
    CHECK(c2u(u2c("x:y?URI-fragment=1#f")) == "x:y?URI-fragment=1#f");
}

// --- Closure properties over generated inputs ------------------------------------------

namespace {

std::string random_text(std::mt19937 &rng, std::size_t max_len, bool ascii_only)
{
    std::uniform_int_distribution<std::size_t> len(0, max_len);
    std::uniform_int_distribution<int> ch(ascii_only ? 32 : 1, ascii_only ? 126 : 255);
    std::string s;
    for (std::size_t n = len(rng); n > 0; --n) {
        int c = ch(rng);
        if (c == '\r' || c == '\n' || c == 0) c = 'x';
        s += static_cast<char>(c);
    }
    return s;
}

std::string random_token(std::mt19937 &rng, std::size_t max_len)
{
    static const std::string chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-+._!#$&^`{|}~%*'";
    std::uniform_int_distribution<std::size_t> len(1, max_len), pick(0, chars.size() - 1);
    std::string s;
    for (std::size_t n = len(rng); n > 0; --n) s += chars[pick(rng)];
    return s;
}

} // namespace

TEST_CASE("closure: uri2ct(ct2uri(c)) is the same Content-Type, for generated Content-Types")
{
    std::mt19937 rng(20261121);
    for (int i = 0; i < 20000; ++i) {
        ContentType c;
        c.type = random_token(rng, 12);
        c.subtype = random_token(rng, 20);
        if (c.subtype.rfind("uri.", 0) == 0 || c.subtype.rfind("URI.", 0) == 0) c.subtype = "x" + c.subtype;
        std::uniform_int_distribution<int> np(0, 4);
        for (int k = np(rng); k > 0; --k) {
            std::string name = random_token(rng, 10);
            // "*" names are RFC 2231 syntax; a name twice (in any case) is ambiguous in MIME.
            bool dup = std::any_of(c.params.begin(), c.params.end(), [&](auto &p) { return iequals(p.name, name); });
            if (dup || name.find('*') != std::string::npos || iequals(name, "URI-body") || iequals(name, "URI-fragment"))
                continue;
            c.params.push_back({name, random_text(rng, 30, i % 3 != 0)});
        }
        auto header = format_content_type(c);
        REQUIRE_MESSAGE(header.ok(), header.error().message);
        // Through the header text, as a mail part would carry it.
        auto reparsed = parse_content_type(*header);
        REQUIRE_MESSAGE(reparsed.ok(), *header << ": " << reparsed.error().message);
        CHECK_MESSAGE(equivalent(*reparsed, c), *header);
        auto uri = ct2uri(*reparsed);
        REQUIRE_MESSAGE(uri.ok(), *header);
        auto back = uri2ct(*uri);
        REQUIRE_MESSAGE(back.ok(), *uri << ": " << back.error().message);
        CHECK_MESSAGE(equivalent(*back, c), *header << " -> " << *uri);
    }
}

TEST_CASE("closure: ct2uri(uri2ct(u)) is u, for generated absolute URIs")
{
    std::mt19937 rng(1121);
    static const std::string uri_chars =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/@!$'()*+,;%";
    std::uniform_int_distribution<std::size_t> pick(0, uri_chars.size() - 1), len(0, 30);
    auto part = [&](std::size_t max) {
        std::string s;
        for (std::size_t n = len(rng) % (max + 1); n > 0; --n) s += uri_chars[pick(rng)];
        return s;
    };
    std::uniform_int_distribution<int> coin(0, 3);
    for (int i = 0; i < 20000; ++i) {
        std::string scheme = i % 5 == 0 ? "HTTP" : (i % 7 == 0 ? "urn" : "x-" + std::to_string(i % 13));
        std::string u = scheme + ":" + part(30);
        int shape = coin(rng);
        if (shape == 1) { // name=value query, values sometimes quoted
            char sep = '?';
            for (int k = coin(rng) + 1; k > 0; --k) {
                std::string v = part(10);
                for (char &c : v)
                    if (c == '&' || c == '#' || c == '=' || c == '?') c = '_';
                u += sep + random_token(rng, 6) + "=" + (coin(rng) ? "\"" + v + "\"" : v);
                sep = '&';
            }
        } else if (shape == 2) { // a query that is not pairs
            u += "?" + part(10);
        } else if (shape == 3 && i % 11 == 0) { // controlled mapping
            u += "?MIME-type=\"text%2Fx-" + std::to_string(i) + "\"";
        }
        if (coin(rng) == 0) u += "#" + part(10);
        auto ct = uri2ct(u);
        REQUIRE_MESSAGE(ct.ok(), u << ": " << ct.error().message);
        auto header = format_content_type(*ct);
        REQUIRE_MESSAGE(header.ok(), u);
        auto reparsed = parse_content_type(*header);
        REQUIRE_MESSAGE(reparsed.ok(), *header);
        auto back = ct2uri(*reparsed);
        REQUIRE_MESSAGE(back.ok(), *header);
        CHECK_MESSAGE(equivalent_uri(*back, u), u << " -> " << *header << " -> " << *back);
    }
}

#include "labels.hh"

TEST_CASE("long labels fold only at & boundaries, every line within 998 octets")
{
    std::string ct = "application/x-long";
    for (int i = 0; i < 60; ++i) ct += "; parameter-" + std::to_string(i) + "=\"" + std::string(20, 'v') + "\"";
    auto label = mimeuri::make_label(ct, mimeuri::LabelOptions::Format::Uri);
    REQUIRE(label.ok());
    REQUIRE(label->size() > 1500);
    auto folded = mimeuri::fold_label("Content-Type-URI", *label);
    REQUIRE(folded.ok());
    std::string line = "Content-Type-URI:" + *folded;
    std::size_t start = 0, lines = 0;
    std::string unfolded;
    while (start < line.size()) {
        auto nl = line.find('\n', start);
        std::string l = line.substr(start, nl - start);
        CHECK(l.size() <= 998);
        if (lines > 0) {
            CHECK(l[0] == '\t'); // a continuation line
            CHECK(unfolded.back() == '&'); // the break follows an "&"
        }
        unfolded += lines == 0 ? l.substr(std::string("Content-Type-URI: ").size()) : l.substr(1);
        ++lines;
        start = nl + 1;
    }
    CHECK(lines >= 2);
    CHECK(unfolded == *label);
    // One piece longer than a line: refused, not written.
    auto huge = mimeuri::make_label("text/plain; a=\"" + std::string(1200, 'x') + "\"", mimeuri::LabelOptions::Format::Uri);
    REQUIRE(huge.ok());
    CHECK_FALSE(mimeuri::fold_label("Content-Type-URI", *huge).ok());
}
